#!/usr/bin/env bash
# One part of a script whose checks are recorded (tests/checks.sh: part, RDMALAB_CHECK_RECORDS):
# CTest's test of that part. It passes when the script's run completed and every one of the
# part's checks (at least one) was ok; it prints them all. Where the run skipped (a lab test
# outside the lab), so does the part (exit 77).
#   tests/part-verdict.sh RECORDS PART
set -uo pipefail
records=${1:?usage: part-verdict.sh RECORDS PART}
part=${2:?usage: part-verdict.sh RECORDS PART}
[ -r "$records" ] || { echo "no records at $records (did the run before this test start?)"; exit 1; }
if [ "$(head -n 1 "$records")" = "#skipped" ]; then
    echo "SKIP: the run skipped (it needs what this machine lacks)"
    exit 77
fi
ok=0 failed=0
while IFS=$'\t' read -r name verdict description; do
    [ "$name" = "$part" ] || continue
    if [ "$verdict" = ok ]; then
        ok=$((ok + 1))
        echo "ok   - $description"
    else
        failed=$((failed + 1))
        echo "FAIL - $description"
    fi
done <"$records"
complete=0
[ "$(tail -n 1 "$records")" = "#complete" ] && complete=1
echo "part $part: $ok ok, $failed failed$([ "$complete" = 1 ] || echo '; the run did not complete')"
[ "$complete" = 1 ] && [ "$failed" = 0 ] && [ "$ok" -gt 0 ]
