# Sourced by every lab test: skip outside the lab, assertion helpers, a scratch folder.
# Usage in a test: source lib.sh "$@"  (the first argument is the folder of the binaries).
set -uo pipefail
if [ -z "${RDMALAB_IN_LAB:-}" ]; then
    echo "SKIP: needs an RDMA device: run it through the lab (./rdmalab lab -- ctest -L lab)"
    exit 77
fi
RDMALAB_BIN=${1:?usage: $0 BUILD_BIN_DIR}
export RDMALAB_BIN
bin=$RDMALAB_BIN
addr=${RDMALAB_ADDR:?the lab sets RDMALAB_ADDR}
source "$(dirname "${BASH_SOURCE[0]}")/../../lab/pair.sh" || exit 1

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0

check() {  # check DESCRIPTION COMMAND...: run a condition, report it
    local description=$1
    shift
    if "$@"; then
        echo "ok   - $description"
    else
        echo "FAIL - $description"
        failures=$((failures + 1))
    fi
}
# Checks that start no process: in the emulated guest every grep or cat costs a fraction of a
# second. Patterns are extended regular expressions, matched line by line.
has_line() {  # has_line FILE REGEX: some line of FILE matches
    local line
    [ -r "$1" ] || return 1
    while IFS= read -r line || [ -n "$line" ]; do [[ $line =~ $2 ]] && return 0; done <"$1"
    return 1
}
count_is() {  # count_is N FILE REGEX: exactly N lines of FILE match
    local line n=0
    [ -r "$2" ] || return 1
    while IFS= read -r line || [ -n "$line" ]; do [[ $line =~ $3 ]] && n=$((n + 1)); done <"$2"
    [ $n -eq "$1" ]
}
rc_is() { local code=""; [ -r "$1" ] && read -r code <"$1"; [ "$code" = "$2" ]; }
one_line() { count_is 1 "$1" '.'; }
# counts_add_up FILE SENT: the "received R of SENT datagrams (lost L, ..." line has R + L = SENT
# and R at least half of SENT (UD may drop; Soft-RoCE under emulation drops a few at most).
counts_add_up() {
    local line pattern="^server: received ([0-9]+) of $2 datagrams \\(lost ([0-9]+),"
    while IFS= read -r line || [ -n "$line" ]; do
        [[ $line =~ $pattern ]] || continue
        local received=${BASH_REMATCH[1]} lost=${BASH_REMATCH[2]}
        ((received + lost == $2 && 2 * received >= $2))
        return
    done <"$1"
    return 1
}

show_on_failure() {  # show_on_failure DIR: print the outputs of a pair when something failed
    [ $failures -eq 0 ] && return
    for f in "$1"/*.out; do echo "--- $f"; cat "$f"; done
}

# pair_expect NAME LESSON SERVER_REGEX CLIENT_REGEX [SERVER_ARGS...] -- [CLIENT_ARGS...]
# Both sides exit 0 and print the lines that say the data was verified.
pair_expect() {
    local name=$1 lesson=$2 server_line=$3 client_line=$4
    shift 4
    local dir=$scratch/$name before=$failures
    pair_run "$dir" "$lesson" "$@"
    check "$name: client exits 0" rc_is "$dir/client.rc" 0
    check "$name: server exits 0" rc_is "$dir/server.rc" 0
    check "$name: server says: $server_line" has_line "$dir/server.out" "$server_line"
    check "$name: client says: $client_line" has_line "$dir/client.out" "$client_line"
    [ $failures -eq $before ] || { for f in "$dir"/*.out; do echo "--- $f"; cat "$f"; done; }
}

# expect_failure NAME RC REGEX COMMAND...: exits with RC, and stderr is exactly one line
# matching REGEX.
expect_failure() {
    local name=$1 rc=$2 regex=$3
    shift 3
    local out=$scratch/$name.stdout err=$scratch/$name.stderr actual=0
    timeout -k 5 60 "$@" >"$out" 2>"$err" || actual=$?
    echo "$actual" >"$scratch/$name.rc"
    check "$name: exits $rc" rc_is "$scratch/$name.rc" "$rc"
    check "$name: one line on stderr" one_line "$err"
    check "$name: says: $regex" has_line "$err" "$regex"
    [ "$actual" = "$rc" ] && one_line "$err" || { echo "--- stderr:"; cat "$err"; }
}

finish() {
    if [ $failures -eq 0 ]; then echo "all checks passed"; exit 0; fi
    echo "$failures check(s) failed"
    exit 1
}
