#!/usr/bin/env bash
# The budgets, printed from one run of each: a fresh clone of HEAD runs a newcomer's
# ./rdmalab test (GPU auto, build included), then a second fresh clone runs what CI runs (.ci/run:
# the whole suite, the fuzz targets, the sanitizer pass), every part timed (./rdmalab, .ci/run and
# the sanitizer pass write "STEP<TAB>SECONDS" lines to $RDMALAB_STEP_TIMES). Then one table each:
# the parts, the newcomer's suite against its 12 minutes, CI against its 50 (and the limit of 90).
#   lab/budgets.sh [--suite-only | --ci-only] [--keep DIR]      (./rdmalab budgets …)
# --suite-only, --ci-only: one of the two runs. --keep DIR: the clones and their logs stay in DIR
# (default: a temporary folder, removed). Packages already installed on this machine are not
# installed again: on a fresh CI machine apt adds its minutes to ci.deps.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
run_suite=1 run_ci=1 keep=""
usage="usage: budgets.sh [--suite-only | --ci-only] [--keep DIR]"
while [ $# -gt 0 ]; do
    case "$1" in
        --suite-only) run_ci=0 ;;
        --ci-only) run_suite=0 ;;
        --keep) [ -n "${2:-}" ] || { echo "budgets: --keep needs a folder" >&2; exit 2; }; keep=$2; shift ;;
        *) echo "budgets: unknown argument '$1' ($usage)" >&2; exit 2 ;;
    esac
    shift
done
[ "$run_suite" = 1 ] || [ "$run_ci" = 1 ] || { echo "budgets: --suite-only and --ci-only leave nothing to run" >&2; exit 2; }
suite_budget_s=720 ci_budget_s=3000 ci_limit_s=5400
if [ -n "$keep" ]; then
    [ ! -e "$keep" ] || { echo "budgets: $keep exists: name a new folder" >&2; exit 2; }
    work=$keep
    mkdir -p "$work"
else
    work=$(mktemp -d -p "$repo" .budgets.XXXXXX)  # under the repository: the lab shares it
    trap 'rm -rf "$work"' EXIT
fi
echo "budgets: $(git -C "$repo" rev-parse --short HEAD) on $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'); logs in $work"
ratio() { echo "$(($1 * 100 / $2)) %"; }
rc=0

# run NAME CMD...: a fresh clone in $work/NAME runs CMD there, its steps in $work/NAME.steps.tsv,
# its output in $work/NAME.log; prints the steps, and sets elapsed to the run's whole time.
elapsed=0
run() {
    local name=$1 clone=$work/$1 run_rc=0 step seconds start
    shift
    git clone -q "$repo" "$clone" || { echo "budgets: git clone failed" >&2; exit 1; }
    export RDMALAB_STEP_TIMES=$work/$name.steps.tsv
    : >"$RDMALAB_STEP_TIMES"
    start=$SECONDS
    (cd "$clone" && "$@") >"$work/$name.log" 2>&1 || run_rc=$?
    elapsed=$((SECONDS - start))
    if [ "$run_rc" != 0 ]; then
        echo "budgets: $name failed (exit $run_rc): see $work/$name.log (kept: rerun with --keep DIR)" >&2
        rc=1
    fi
    printf '%-28s %8s\n' "$name: part" seconds
    while IFS=$'\t' read -r step seconds; do printf '%-28s %8s\n' "$step" "$seconds"; done <"$RDMALAB_STEP_TIMES"
}

if [ "$run_suite" = 1 ]; then
    # As a newcomer runs it: RDMALAB_GPU unset (auto: what this machine's compilers can build).
    run suite env -u RDMALAB_GPU ./rdmalab test
    printf '%-28s %8s  (%s of its %d-minute budget, from a fresh clone, build included)\n' "./rdmalab test" \
        "$elapsed" "$(ratio "$elapsed" "$suite_budget_s")" $((suite_budget_s / 60))
fi
if [ "$run_ci" = 1 ]; then
    run ci .ci/run
    printf '%-28s %8s  (%s of its %d-minute budget, %s of the %d-minute limit: %d min free)\n' ".ci/run" "$elapsed" \
        "$(ratio "$elapsed" "$ci_budget_s")" $((ci_budget_s / 60)) "$(ratio "$elapsed" "$ci_limit_s")" $((ci_limit_s / 60)) \
        $(((ci_limit_s - elapsed) / 60))
fi
exit "$rc"
