#!/usr/bin/env bash
# Flake hunting: the lab label (or the lab tests matching REGEX) N times, each run in a lab boot of
# its own as ./rdmalab test --all runs it, and the pass count. A test that fails once in N runs is a bug
# to find, never a retry to add.
#   tests/repeat-lab.sh N [REGEX]      (after ./rdmalab build)
# Prints one line per run (its failed tests named) and "lab label: P of N runs passed"; each run's
# CTest log is kept in build/test-logs/repeat-<i>.log. Exits 0 only if every run passed.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-}
[[ $runs =~ ^[1-9][0-9]{0,2}$ ]] || { echo "usage: tests/repeat-lab.sh N [REGEX] (N from 1 to 999)" >&2; exit 2; }
regex=${2:-}
build=$repo/build
[ -f "$build/CTestTestfile.cmake" ] || { echo "repeat-lab: no build in $build: run ./rdmalab build first" >&2; exit 2; }
mkdir -p "$build/test-logs"
select=(-L lab)
[ -n "$regex" ] && select+=(-R "$regex")
passed=0
for ((i = 1; i <= runs; i++)); do
    log=$build/test-logs/repeat-$i.log
    start=$SECONDS rc=0
    rm -f "$build/Testing/Temporary/LastTestsFailed.log"
    "$repo/lab/lab.sh" --timeout 1500 -- ctest --test-dir "$build" --output-on-failure --no-tests=error \
        "${select[@]}" >"$log" 2>&1 || rc=$?
    # CTest's own list of what failed: Testing/Temporary/LastTestsFailed.log, "NUMBER:NAME" a line.
    failed_tests=""
    if [ "$rc" != 0 ] && [ -r "$build/Testing/Temporary/LastTestsFailed.log" ]; then
        while IFS=: read -r _ name; do failed_tests+="$name "; done <"$build/Testing/Temporary/LastTestsFailed.log"
    fi
    if [ "$rc" = 0 ]; then
        passed=$((passed + 1))
        echo "run $i: passed ($((SECONDS - start)) s)"
    else
        echo "run $i: FAILED (exit $rc, $((SECONDS - start)) s): ${failed_tests:-see $log}"
    fi
done
echo "lab label${regex:+ ($regex)}: $passed of $runs runs passed"
[ "$passed" = "$runs" ]
