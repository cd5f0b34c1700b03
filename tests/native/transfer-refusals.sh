# Native test: transfer-bench (the transfer engine's bench) and bench/transfer-failover.sh refuse
# what they cannot do with one line and a non-zero exit, at once: no role, an operation, policy
# or size they do not know, more bytes than a run registers, an unknown option, no RDMA device
# here; a count of runs that is no number, an OUT_DIR outside the repository.
# Usage: bash tests/native/transfer-refusals.sh BUILD_BIN_DIR
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$repo/build/bin}
expect_failure_limit=10  # each refusal is at once
source "$repo/tests/checks.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

t=$bin/transfer-bench
expect_failure "no role" 2 'A subcommand is required' "$t"
expect_failure "a client without an address" 2 'address is required' "$t" client
expect_failure "an operation it does not know" 2 'copy not in \{write,read\}' "$t" client 198.51.100.1 --op copy
expect_failure "a policy it does not know" 2 'random not in' "$t" client 198.51.100.1 --policy random
expect_failure "a slice that is no size" 2 "'0' is not a size" "$t" server --slice 0
expect_failure "more bytes than a run registers" 2 'is more than 1073741824 bytes' "$t" client 198.51.100.1 -s 1M --batch 64 --batches 32
expect_failure "no batches" 2 'Value 0 not in range' "$t" client 198.51.100.1 --batches 0
expect_failure "a retry count past 7" 2 'Value 8 not in range' "$t" client 198.51.100.1 --retry 8
expect_failure "an unknown option" 2 'not expected: .*--rails' "$t" server --rails 2
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
    expect_failure "no RDMA device here" 1 'no RDMA device' "$t" server
fi
expect_failure "transfer-failover: a count that is no number" 2 "RUNS must be a number of runs" \
    bash "$repo/bench/transfer-failover.sh" many
expect_failure "transfer-failover: OUT_DIR outside the repository" 2 'OUT_DIR must lie inside the repository' \
    bash "$repo/bench/transfer-failover.sh" 5 "$scratch/results"
finish
