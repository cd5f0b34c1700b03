#!/usr/bin/env bash
# A test script run N times, its checks and measured figures gathered (tests/checks.sh: check,
# measured, RDMALAB_CHECK_RECORDS): how many runs passed, each check that failed in any run, and
# each figure's spread over the runs: the data a timing line is drawn from (docs/DEVELOPING.md#ci).
#   tests/repeat-checks.sh N SCRIPT [--hogs] [--out DIR]
# SCRIPT: a test script that sources tests/checks.sh (e.g. tests/vm/congestion.sh), run with the
# default build's bin/. --hogs: two busy loops at idle priority beside every run, as a build
# beside the suite loads the machine. --out DIR: keep every run's records (run-K.tsv) and the
# figures (measured.tsv: run, name, value) there.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: repeat-checks.sh N SCRIPT [--hogs] [--out DIR]"
runs=${1:-}
script=${2:-}
[[ $runs =~ ^[1-9][0-9]{0,2}$ ]] || { echo "repeat-checks: N must be a whole number 1-999 ($usage)" >&2; exit 2; }
[ -r "$script" ] || { echo "repeat-checks: no readable script '$script' ($usage)" >&2; exit 2; }
shift 2
hogs=0 out=""
while [ $# -gt 0 ]; do
    case $1 in
        --hogs) hogs=1 ;;
        --out) [ -n "${2:-}" ] || { echo "repeat-checks: --out needs a folder" >&2; exit 2; }; out=$2; shift ;;
        *) echo "repeat-checks: unknown argument '$1' ($usage)" >&2; exit 2 ;;
    esac
    shift
done
if [ -z "$out" ]; then
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
hog_pids=()
stop_hogs() { [ ${#hog_pids[@]} -eq 0 ] || kill "${hog_pids[@]}" 2>/dev/null; wait "${hog_pids[@]}" 2>/dev/null; hog_pids=(); }
trap 'stop_hogs; exit 130' INT TERM
passed=0
: >"$out/measured.tsv"
for ((k = 1; k <= runs; k++)); do
    if [ "$hogs" = 1 ]; then
        for _ in 1 2; do chrt --idle 0 bash -c 'while :; do :; done' & hog_pids+=($!); done
    fi
    start=$SECONDS
    rc=0
    bash "$repo/tests/part-run.sh" "$out/run-$k.tsv" "$script" "$repo/build/bin" >"$out/run-$k.log" 2>&1 || rc=$?
    stop_hogs
    failed_checks=$(grep -c $'\tFAIL\t' "$out/run-$k.tsv" 2>/dev/null)
    complete=$(tail -n 1 "$out/run-$k.tsv" 2>/dev/null)
    if [ "$rc" = 0 ] && [ "${failed_checks:-1}" = 0 ] && [ "$complete" = "#complete" ]; then
        passed=$((passed + 1))
        verdict=passed
    else
        verdict="FAILED (exit $rc, ${failed_checks:-?} check(s) failed)"
    fi
    echo "run $k: $verdict ($((SECONDS - start)) s)$([ "$hogs" = 1 ] && echo ', beside two busy loops')"
    awk -F '\t' -v k="$k" '$1 == "#measured" { print k "\t" $2 "\t" $3 }' "$out/run-$k.tsv" >>"$out/measured.tsv" 2>/dev/null
    awk -F '\t' '$2 == "FAIL" { print "    FAIL - " $3 }' "$out/run-$k.tsv" 2>/dev/null
done
echo "$(basename "$script"): $passed of $runs runs passed"
# Each figure's spread: its smallest and largest value over the runs that measured it.
awk -F '\t' '$3 != "" { v = $3 + 0; n[$2]++; if (!($2 in lo) || v < lo[$2]) lo[$2] = v; if (!($2 in hi) || v > hi[$2]) hi[$2] = v }
    END { for (name in n) printf "measured %s: %s-%s over %d runs\n", name, lo[name], hi[name], n[name] }' \
    "$out/measured.tsv" | sort
[ "$passed" = "$runs" ]
