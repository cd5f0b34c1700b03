#!/usr/bin/env bash
# The budgets, printed from one run: a fresh clone of HEAD runs what CI runs (.ci/run: the suite,
# the fuzz targets, the sanitizer pass), every part timed (./rdmalab and the sanitizer pass write
# "STEP<TAB>SECONDS" lines to $RDMALAB_STEP_TIMES), then one table: each part, the suite against
# its 12 minutes, CI against its 50 (and the hard limit of 90).
#   lab/budgets.sh [--suite-only] [--keep DIR]      (./rdmalab budgets …)
# --suite-only: ./rdmalab test alone, as a newcomer runs it (GPU auto; CI builds CUDA and HIP).
# --keep DIR: the clone and its logs stay in DIR (default: a temporary folder, removed). Packages already installed on this
# machine are not installed again: on a fresh CI machine apt adds its minutes to test.deps.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
suite_only=0 keep=""
while [ $# -gt 0 ]; do
    case "$1" in
        --suite-only) suite_only=1 ;;
        --keep) [ -n "${2:-}" ] || { echo "budgets: --keep needs a folder" >&2; exit 2; }; keep=$2; shift ;;
        *) echo "budgets: unknown argument '$1' (usage: budgets.sh [--suite-only] [--keep DIR])" >&2; exit 2 ;;
    esac
    shift
done
suite_budget_s=720 ci_budget_s=3000 ci_limit_s=5400
if [ -n "$keep" ]; then
    [ ! -e "$keep" ] || { echo "budgets: $keep exists: name a new folder" >&2; exit 2; }
    work=$keep
    mkdir -p "$work"
else
    work=$(mktemp -d -p "$repo" .budgets.XXXXXX)  # under the repository: the lab shares it
    trap 'rm -rf "$work"' EXIT
fi
git clone -q "$repo" "$work/clone" || { echo "budgets: git clone failed" >&2; exit 1; }
export RDMALAB_STEP_TIMES=$work/steps.tsv
: >"$RDMALAB_STEP_TIMES"
echo "budgets: $(git -C "$repo" rev-parse --short HEAD) on $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'); logs in $work"
start=$SECONDS rc=0
if [ "$suite_only" = 1 ]; then
    # As a newcomer runs it: RDMALAB_GPU unset (auto: what this machine's compilers can build).
    (cd "$work/clone" && env -u RDMALAB_GPU ./rdmalab test) >"$work/ci.log" 2>&1 || rc=$?
else
    (cd "$work/clone" && .ci/run) >"$work/ci.log" 2>&1 || rc=$?
fi
total=$((SECONDS - start))
[ "$rc" = 0 ] || echo "budgets: the run failed (exit $rc): see $work/ci.log (kept: rerun with --keep DIR)" >&2

printf '%-28s %8s\n' part seconds
suite=0 fuzz=0
while IFS=$'\t' read -r step seconds; do
    printf '%-28s %8s\n' "$step" "$seconds"
    case $step in
        test.*) suite=$((suite + seconds)) ;;
        fuzz.*) fuzz=$((fuzz + seconds)) ;;
    esac
done <"$RDMALAB_STEP_TIMES"
ratio() { echo "$(($1 * 100 / $2)) %"; }
printf '%-28s %8s  (%s of its %d-minute budget)\n' "./rdmalab test" "$suite" "$(ratio "$suite" "$suite_budget_s")" $((suite_budget_s / 60))
if [ "$suite_only" = 0 ]; then
    # The sanitizer pass is what the run took beyond the suite and the fuzz step.
    printf '%-28s %8s\n' "./rdmalab fuzz" "$fuzz" "./rdmalab test --sanitize" $((total - suite - fuzz))
    printf '%-28s %8s  (%s of its %d-minute budget, %s of the %d-minute limit: %d min free)\n' ".ci/run" "$total" \
        "$(ratio "$total" "$ci_budget_s")" $((ci_budget_s / 60)) "$(ratio "$total" "$ci_limit_s")" $((ci_limit_s / 60)) \
        $(((ci_limit_s - total) / 60))
fi
exit "$rc"
