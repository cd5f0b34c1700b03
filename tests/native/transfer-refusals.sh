# Native test: transfer-bench (the transfer engine's bench) and bench/transfer-failover.sh refuse
# what they cannot do with one line and a non-zero exit, at once: no role, an operation, policy
# or size they do not know, more bytes than a run registers, an unknown option, no RDMA device
# here; a count of runs that is no number, an OUT_DIR outside the repository.
# Usage: bash tests/native/transfer-refusals.sh BUILD_BIN_DIR
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$repo/build/bin}
source "$repo/tests/checks.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# refused WHY EXIT REGEX -- COMMAND...: exit EXIT within 10 s, one line on stderr matching REGEX.
refused() {
    local why=$1 expected=$2 regex=$3 rc=0
    shift 4
    timeout 10 "$@" >"$scratch/out" 2>"$scratch/err" </dev/null || rc=$?
    local lines
    lines=$(wc -l <"$scratch/err")
    check "$why: exit $expected ($rc), one line ($lines)" bash -c '[ "$1" = "$2" ] && [ "$3" = 1 ]' _ "$rc" "$expected" "$lines"
    check "$why: the line says why: $(head -c 120 "$scratch/err")" has_line "$scratch/err" "$regex"
}
t=$bin/transfer-bench
refused "no role" 2 'A subcommand is required' -- "$t"
refused "a client without an address" 2 'address is required' -- "$t" client
refused "an operation it does not know" 2 'copy not in \{write,read\}' -- "$t" client 198.51.100.1 --op copy
refused "a policy it does not know" 2 'random not in' -- "$t" client 198.51.100.1 --policy random
refused "a slice that is no size" 2 "'0' is not a size" -- "$t" server --slice 0
refused "more bytes than a run registers" 2 'is more than 1073741824 bytes' -- "$t" client 198.51.100.1 -s 1M --batch 64 --batches 32
refused "no batches" 2 'Value 0 not in range' -- "$t" client 198.51.100.1 --batches 0
refused "a retry count past 7" 2 'Value 8 not in range' -- "$t" client 198.51.100.1 --retry 8
refused "an unknown option" 2 'not expected: .*--rails' -- "$t" server --rails 2
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
    refused "no RDMA device here" 1 'no RDMA device' -- "$t" server
fi
refused "transfer-failover: a count that is no number" 2 "RUNS must be a number of runs" -- \
    bash "$repo/bench/transfer-failover.sh" many
refused "transfer-failover: OUT_DIR outside the repository" 2 'OUT_DIR must lie inside the repository' -- \
    bash "$repo/bench/transfer-failover.sh" 5 "$scratch/results"
finish
