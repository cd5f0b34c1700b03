# Native test: unordered-delivery (the reliable unordered layer's lesson) and bench/many-paths.sh
# refuse what they cannot do with one line and a non-zero exit, at once: no role, a count or a
# size out of range, an unknown option, no RDMA device on this host; an OUT_DIR outside the
# repository, a work folder that holds no run.
# Usage: bash tests/native/unordered-refusals.sh BUILD_BIN_DIR
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$repo/build/bin}
expect_failure_limit=10  # each refusal is at once
source "$repo/tests/checks.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

u=$bin/unordered-delivery
expect_failure "no role" 2 'A subcommand is required' "$u"
expect_failure "a client without an address" 2 'address is required' "$u" client
expect_failure "no transfers" 2 'Value 0 not in range 1 to 4096' "$u" server -n 0
expect_failure "too many transfers" 2 'Value 5000 not in range 1 to 4096' "$u" server -n 5000
expect_failure "more bytes than it registers" 2 'is more than 268435456 bytes' "$u" server -n 4096 -s 1M
expect_failure "a size that is no size" 2 "'12Q' is not a size" "$u" server -s 12Q
expect_failure "an unknown option" 2 'not expected: .*--window' "$u" server --window 8
if [ ! -e /sys/class/infiniband ] || [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
    expect_failure "no RDMA device here" 1 'no RDMA device' "$u" server
fi
expect_failure "many-paths: OUT_DIR outside the repository" 2 'OUT_DIR must lie inside the repository' \
    bash "$repo/bench/many-paths.sh" "$scratch/results"
expect_failure "many-paths: --analyse without a folder" 2 'needs the work folders of runs' bash "$repo/bench/many-paths.sh" --analyse
expect_failure "many-paths: --analyse of a folder with no run" 2 'holds no run' bash "$repo/bench/many-paths.sh" --analyse "$scratch"
expect_failure "many-paths: a part it does not know" 2 "--parts takes goodput, collisions and elephants" \
    bash "$repo/bench/many-paths.sh" --parts goodput,tails
expect_failure "many-paths: an unknown option" 2 "unknown option '--runs'" bash "$repo/bench/many-paths.sh" --runs 3
finish
