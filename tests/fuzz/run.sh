#!/usr/bin/env bash
# One libFuzzer target as a CTest test (fuzz.<name>, label fuzz, in build-fuzz/; ./rdmalab fuzz
# runs them two at a time): every committed input whole first (regressions may be larger than
# what is fuzzed), then RDMALAB_FUZZ_SECONDS (default 30) of fuzzing with inputs of up to 4 KB,
# from a copy of the corpus (the committed one never grows), with the target's dictionary.
#   tests/fuzz/run.sh NAME BINARY
# A crash, sanitizer report, broken contract or hang (an input over 10 s) fails, naming the input
# libFuzzer kept (build-fuzz/crashes/NAME/) and the command that runs it again. Where
# RDMALAB_FUZZ_ROWS names a folder, the target's row of ./rdmalab fuzz's table goes to NAME.row
# and its row of results/fuzz.tsv to NAME.tsv (RDMALAB_FUZZ_MACHINE: the machine column).
set -uo pipefail
name=${1:?usage: run.sh NAME BINARY}
binary=${2:?usage: run.sh NAME BINARY}
seconds=${RDMALAB_FUZZ_SECONDS:-30}
[[ $seconds =~ ^[1-9][0-9]{0,5}$ ]] || { echo "fuzz: RDMALAB_FUZZ_SECONDS must be a whole number, got '$seconds'" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
fuzz_dir=$(cd "$(dirname "$binary")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
corpus=$work/corpus artifacts=$fuzz_dir/crashes/$name log=$fuzz_dir/fuzz-logs/$name.log
options=(-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/")
dict=$here/$name.dict
[[ $name == bench_* ]] && dict=$here/bench_json.dict
[ -f "$dict" ] && options+=(-dict="$dict")
mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
cp "$here/corpus/$name/"* "$corpus/"
seeds=$(find "$corpus" -type f | wc -l)
status=0
"$binary" "${options[@]}" -runs=0 "$corpus" >"$log" 2>&1 || status=$?
[ "$status" -ne 0 ] || "$binary" "${options[@]}" -max_len=4096 -max_total_time="$seconds" "$corpus" \
    >>"$log" 2>&1 || status=$?
executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
if [ "$status" -eq 0 ]; then
    result=ok
else
    input=$(sed -n 's/.*Test unit written to \([^ ]*\).*/\1/p' "$log" | tail -n 1)
    what=$(grep -m 1 -oE 'contract broken: .*|SUMMARY: [A-Za-z]+: [^ ]+' "$log" || echo "exit code $status")
    result="FAILED: $what; input ${input:-(none kept)}; log $log; again: $binary ${input:-}"
fi
after=$(find "$corpus" -type f | wc -l)
row=$(printf '%-26s %12s %14s  %s' "$name" "${executions:-?}" "$seeds -> $after" "$result")
echo "$row"
if [ -n "${RDMALAB_FUZZ_ROWS:-}" ]; then
    echo "$row" >"$RDMALAB_FUZZ_ROWS/$name.row"
    # results/fuzz.tsv's row (lab/results.sh): target, seconds, executions, seeds, corpus after,
    # result, date, machine, note.
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n' "$name" "$seconds" "${executions:-?}" "$seeds" "$after" \
        "${result//$'\t'/ }" "$(date -u +%Y-%m-%d)" "${RDMALAB_FUZZ_MACHINE:-}" >"$RDMALAB_FUZZ_ROWS/$name.tsv"
fi
[ "$status" -eq 0 ]
