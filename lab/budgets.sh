#!/usr/bin/env bash
# The budgets, measured from fresh clones of HEAD under forced emulation (RDMALAB_LAB_ACCEL=tcg:
# CI's machine may have no KVM), every part timed (./rdmalab writes "STEP<TAB>SECONDS" lines to
# $RDMALAB_STEP_TIMES):
#   lab/budgets.sh [--suite | --ci | --shards [NAME,...]] [--keep DIR] [--record]   (./rdmalab budgets …)
# --suite: a newcomer's ./rdmalab test (GPU auto, build included) against its 12 minutes.
# --ci: .ci/run as CI runs it (the gate and CI's shard for HEAD) against the 40 minutes of the
#   quiet day (the 90-minute limit then holds a day 1.7x slower, or more).
# --shards (the default): one clone runs the gate (./rdmalab test --gate, as CI: RDMALAB_GPU=
#   cuda,hip), then each shard (./rdmalab test --shard NAME; NAME,... names some), each with its
#   own builds (build-sanitize/ and build-fuzz/ removed before it, where CI starts them beside the
#   gate: an upper bound); then the gate plus the largest shard against the 40 minutes.
# --keep DIR: the clones and their logs stay in DIR (default: a temporary folder, removed).
# --record: a row per measure into results/timings.tsv ("CI gate", "CI shard NAME", "suite", "CI").
# Packages already installed on this machine are not installed again.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mode=shards keep="" record=0 only=""
usage="usage: budgets.sh [--suite | --ci | --shards [NAME,...]] [--keep DIR] [--record]"
while [ $# -gt 0 ]; do
    case "$1" in
        --suite|--suite-only) mode=suite ;;
        --ci|--ci-only) mode=ci ;;
        --shards) mode=shards
                  if [ -n "${2:-}" ] && [[ $2 != --* ]]; then only=$2; shift; fi ;;
        --keep) [ -n "${2:-}" ] || { echo "budgets: --keep needs a folder" >&2; exit 2; }; keep=$2; shift ;;
        --record) record=1 ;;
        *) echo "budgets: unknown argument '$1' ($usage)" >&2; exit 2 ;;
    esac
    shift
done
export RDMALAB_LAB_ACCEL=tcg
suite_budget_s=720 ci_budget_s=2400 ci_limit_s=5400
if [ -n "$keep" ]; then
    [ ! -e "$keep" ] || { echo "budgets: $keep exists: name a new folder" >&2; exit 2; }
    work=$keep
    mkdir -p "$work"
else
    work=$(mktemp -d -p "$repo" .budgets.XXXXXX)  # under the repository: the lab shares it
    trap 'rm -rf "$work"' EXIT
fi
commit=$(git -C "$repo" rev-parse --short HEAD)
today=$(date -u +%Y-%m-%d)
machine="$("$repo/lab/results.sh" machine), the lab forced to TCG"
echo "budgets: $commit on $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'), RDMALAB_LAB_ACCEL=tcg; logs in $work"
ratio() { echo "$(($1 * 100 / $2)) %"; }
minutes() { echo "$(($1 / 60)) min $(($1 % 60)) s"; }
rc=0
: >"$work/rows.tsv"
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$machine" "$today" "$4" >>"$work/rows.tsv"; }

# run NAME DIR CMD...: runs CMD in DIR, its steps in $work/NAME.steps.tsv, its output in
# $work/NAME.log; prints the steps; sets elapsed (seconds), steps (one line) and summary.
elapsed=0 steps="" summary=""
run() {
    local name=$1 dir=$2 run_rc=0 step seconds start
    shift 2
    export RDMALAB_STEP_TIMES=$work/$name.steps.tsv
    : >"$RDMALAB_STEP_TIMES"
    start=$SECONDS
    (cd "$dir" && "$@") >"$work/$name.log" 2>&1 || run_rc=$?
    elapsed=$((SECONDS - start))
    summary=$(grep -E '^rdmalab: [0-9]+ passed' "$work/$name.log" | tail -n 1)
    summary=${summary#rdmalab: }
    if [ "$run_rc" != 0 ]; then
        echo "budgets: $name failed (exit $run_rc): see $work/$name.log (kept: rerun with --keep DIR)" >&2
        summary="FAILED (exit $run_rc): ${summary:-no summary}"
        rc=1
    fi
    printf '%-32s %8s\n' "$name: part" seconds
    steps=""
    while IFS=$'\t' read -r step seconds; do
        printf '%-32s %8s\n' "$step" "$seconds"
        steps+="${steps:+, }$step $seconds"
    done <"$RDMALAB_STEP_TIMES"
}
clone() { git clone -q "$repo" "$work/$1" || { echo "budgets: git clone failed" >&2; exit 1; }; }

case $mode in
    suite)
        clone suite
        # As a newcomer runs it: RDMALAB_GPU unset (auto: what this machine's compilers can build).
        run suite "$work/suite" env -u RDMALAB_GPU ./rdmalab test
        printf '%-32s %8s  (%s of its %d-minute budget, from a fresh clone, build included)\n' "./rdmalab test" \
            "$elapsed" "$(ratio "$elapsed" "$suite_budget_s")" $((suite_budget_s / 60))
        row suite "$(minutes "$elapsed")" "a newcomer's ./rdmalab test from a fresh clone of $commit, RDMALAB_GPU=auto: $summary ($steps)" "./rdmalab budgets --suite" ;;
    ci)
        clone ci
        shard=$(cd "$work/ci" && ./rdmalab shards | sed -nE '1s/.*: ([a-z-]+)$/\1/p')
        run ci "$work/ci" .ci/run
        printf '%-32s %8s  (the gate and shard %s: %s of the %d minutes of a quiet day, %s of the %d-minute limit)\n' ".ci/run" \
            "$elapsed" "$shard" "$(ratio "$elapsed" "$ci_budget_s")" $((ci_budget_s / 60)) "$(ratio "$elapsed" "$ci_limit_s")" $((ci_limit_s / 60))
        row CI "$(minutes "$elapsed")" ".ci/run from a fresh clone of $commit (the gate and shard $shard): $summary ($steps)" "./rdmalab budgets --ci" ;;
    shards)
        clone shards
        dir=$work/shards
        names=$(cd "$dir" && ./rdmalab shards | sed -nE 's/^  [ *] ([a-z-]+) .*/\1/p' | tr '\n' ' ')
        [ -z "$only" ] || names=${only//,/ }
        run gate "$dir" env RDMALAB_GPU=cuda,hip ./rdmalab test --gate
        gate=$elapsed
        printf '%-32s %8s\n' "the gate" "$gate"
        row "CI gate" "$(minutes "$gate")" "./rdmalab test --gate from a fresh clone of $commit, RDMALAB_GPU=cuda,hip, build included: $summary ($steps)" "./rdmalab budgets --shards"
        largest=0 largest_name=""
        for name in $names; do
            rm -rf "$dir/build-sanitize" "$dir/build-fuzz"
            run "shard-$name" "$dir" env RDMALAB_GPU=cuda,hip ./rdmalab test --shard "$name"
            printf '%-32s %8s\n' "shard $name" "$elapsed"
            row "CI shard $name" "$(minutes "$elapsed")" "./rdmalab test --shard $name after the gate, in the same clone of $commit, its own builds included: $summary ($steps)" "./rdmalab budgets --shards"
            [ "$elapsed" -le "$largest" ] || { largest=$elapsed; largest_name=$name; }
        done
        if [ -z "$only" ]; then
            printf '%-32s %8s  (shard %s: %s of the %d minutes of a quiet day; a day 1.7x slower: %d of the %d-minute limit)\n' \
                "the gate + the largest shard" $((gate + largest)) "$largest_name" "$(ratio $((gate + largest)) "$ci_budget_s")" \
                $((ci_budget_s / 60)) $(((gate + largest) * 17 / 10 / 60)) $((ci_limit_s / 60))
        fi ;;
esac
[ "$record" = 0 ] || "$repo/lab/results.sh" rows timings "$work/rows.tsv" || rc=1
exit "$rc"
