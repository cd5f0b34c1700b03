# Sourced by the bench scripts that run in the lab: lab/pair.sh's pair_commands for a server
# (perftest's or rdma-bench's) and its client on this host, the client retried while the server
# is still starting (perftest's servers print no "listening" line).
#   lab_pair WORKDIR LIMIT_S SERVER_CMD... -- CLIENT_CMD...
#       leaves WORKDIR/server.out and WORKDIR/client.out; returns the client's status (or the
#       server's, if only the server failed), printing the failed side's output.
source "$(dirname "${BASH_SOURCE[0]}")/../lab/pair.sh" || exit 1
server_pid=""
lab_pair_cleanup() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null
        wait "$server_pid" 2>/dev/null
        server_pid=""
    fi
}

lab_pair() {
    local dir=$1
    pair_limit_s=$2 pair_retry_refused=1 pair_commands "$dir" "${@:3}"
    local rc server_rc
    rc=$(cat "$dir/client.rc") server_rc=$(cat "$dir/server.rc")
    [ "$rc" != 0 ] && { cat "$dir/client.out" >&2; return "$rc"; }
    [ "$server_rc" != 0 ] && { cat "$dir/server.out" >&2; return "$server_rc"; }
    return 0
}

# The start every sweep script shares: `sweep_script_start NAME DEFAULT_DURATION "$@"` with the
# script's own arguments (BIN_DIR OUT_DIR [--duration SEC]) sets bin, out, duration and work (a
# scratch folder removed on exit, with any server still running), and checks the environment.
sweep_script_start() {
    local name=$1 usage="usage: $1.sh BIN_DIR OUT_DIR [--duration SEC]"
    duration=$2
    shift 2
    bin=${1:?$usage}
    out=${2:?$usage}
    shift 2
    while [ $# -gt 0 ]; do
        case $1 in
            --duration) duration=${2:?--duration needs seconds}; shift 2 ;;
            *) echo "$name: unknown option $1" >&2; exit 2 ;;
        esac
    done
    : "${RDMALAB_ADDR:?run it where an RDMA device carries RDMALAB_ADDR (./rdmalab bench-$name)}"
    [ -x "$bin/rdma-bench" ] || { echo "$name: no $bin/rdma-bench (build first)" >&2; exit 1; }
    work=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX")
    trap 'lab_pair_cleanup; rm -rf "$work"' EXIT
    mkdir -p "$out"
}
