# Native test: transfer-bench (the transfer engine's bench) and bench/transfer-failover.sh refuse
# what they cannot do with one line and a non-zero exit, at once: no role, an operation, policy
# or size they do not know, more bytes than a run registers, an unknown option, no RDMA device
# here; a device this host lacks, a --near that names no NUMA node or GPU (or a GPU not here), a
# --near beside a list of devices, --json given to the server; a count of runs that is no
# number, an OUT_DIR outside the repository.
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
expect_failure "a device this host lacks" 2 'no RDMA device nosuch0 on this host' "$t" server --devices nosuch0
expect_failure "an empty device name" 2 "an empty device name" "$t" client 198.51.100.1 --devices ,rxe0
expect_failure "a --near of no kind" 2 "\-\-near 'socket:0': give numa:N .* or gpu:" "$t" server --near socket:0
expect_failure "a NUMA node that is no number" 2 "\-\-near 'numa:one': give numa:N" "$t" server --near numa:one
expect_failure "a GPU address that is none" 2 "\-\-near 'gpu:zz:00.0': give numa:N" "$t" client 198.51.100.1 --near gpu:zz:00.0
expect_failure "a GPU this host lacks" 2 'no PCI device fffe:ff:1f.7 on this host' "$t" server --near gpu:fffe:ff:1f.7
expect_failure "--near beside a list of devices" 2 'give it with --devices auto, not a list' \
    "$t" server --devices rxe0 --near numa:0
expect_failure "--json given to the server" 2 'not expected: .*--json' "$t" server --json "$scratch/r.json"
check "a refused run writes no record" [ ! -e "$scratch/r.json" ]
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
    expect_failure "no RDMA device here" 1 'no RDMA device' "$t" server
fi
expect_failure "transfer-failover: a count that is no number" 2 "RUNS must be a number of runs" \
    bash "$repo/bench/transfer-failover.sh" many
expect_failure "transfer-failover: OUT_DIR outside the repository" 2 'OUT_DIR must lie inside the repository' \
    bash "$repo/bench/transfer-failover.sh" 5 "$scratch/results"
finish
