# Native test: unordered-delivery (the reliable unordered layer's lesson) and bench/many-paths.sh
# refuse what they cannot do with one line and a non-zero exit, at once: no role, a count or a
# size out of range, an unknown option, no RDMA device on this host; an OUT_DIR outside the
# repository, a work folder that holds no run.
# Usage: bash tests/native/unordered-refusals.sh BUILD_BIN_DIR
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
u=$bin/unordered-delivery
refused "no role" 2 'A subcommand is required' -- "$u"
refused "a client without an address" 2 'address is required' -- "$u" client
refused "no transfers" 2 'Value 0 not in range 1 to 4096' -- "$u" server -n 0
refused "too many transfers" 2 'Value 5000 not in range 1 to 4096' -- "$u" server -n 5000
refused "more bytes than it registers" 2 'is more than 268435456 bytes' -- "$u" server -n 4096 -s 1M
refused "a size that is no size" 2 "'12Q' is not a size" -- "$u" server -s 12Q
refused "an unknown option" 2 'not expected: .*--window' -- "$u" server --window 8
if [ ! -e /sys/class/infiniband ] || [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
    refused "no RDMA device here" 1 'no RDMA device' -- "$u" server
fi
refused "many-paths: OUT_DIR outside the repository" 2 'OUT_DIR must lie inside the repository' -- \
    bash "$repo/bench/many-paths.sh" "$scratch/results"
refused "many-paths: --analyse without a folder" 2 'needs the work folders of runs' -- bash "$repo/bench/many-paths.sh" --analyse
refused "many-paths: --analyse of a folder with no run" 2 'holds no run' -- bash "$repo/bench/many-paths.sh" --analyse "$scratch"
refused "many-paths: a part it does not know" 2 "--parts takes goodput, collisions and elephants" -- \
    bash "$repo/bench/many-paths.sh" --parts goodput,tails
refused "many-paths: an unknown option" 2 "unknown option '--runs'" -- bash "$repo/bench/many-paths.sh" --runs 3
finish
