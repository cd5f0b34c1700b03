#!/usr/bin/env bash
# Runs a test script whose checks are recorded in parts (tests/checks.sh: part), as CTest's test
# of its one run: the records start empty, and a run that skips (exit 77, e.g. a lab test outside
# the lab) says so in them, so that the parts' tests skip too (tests/part-verdict.sh).
#   tests/part-run.sh RECORDS SCRIPT ARGS...
set -uo pipefail
records=${1:?usage: part-run.sh RECORDS SCRIPT ARGS...}
script=${2:?usage: part-run.sh RECORDS SCRIPT ARGS...}
shift 2
mkdir -p "$(dirname "$records")"
rm -f "$records"
rc=0
RDMALAB_CHECK_RECORDS=$records bash "$script" "$@" || rc=$?
[ "$rc" != 77 ] || echo "#skipped" >"$records"
exit "$rc"
