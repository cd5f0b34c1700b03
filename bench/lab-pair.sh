# Sourced by the bench scripts that run in the lab: start a server (perftest's or rdma-bench's)
# and its client on this host, the client retried while the server is still starting, every
# wait bounded, the server reaped on every path.
#   lab_pair WORKDIR LIMIT_S SERVER_CMD... -- CLIENT_CMD...
#       leaves WORKDIR/server.out and WORKDIR/client.out; returns the client's status (or the
#       server's, if only the server failed).
lab_pair_server_pid=""
lab_pair_cleanup() {
    if [ -n "$lab_pair_server_pid" ]; then
        kill "$lab_pair_server_pid" 2>/dev/null
        wait "$lab_pair_server_pid" 2>/dev/null
        lab_pair_server_pid=""
    fi
}

lab_pair() {
    local dir=$1 limit=$2 i rc=0
    shift 2
    local server=() client=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do server+=("$1"); shift; done
    shift
    client=("$@")
    mkdir -p "$dir"
    timeout -k 5 "$limit" "${server[@]}" >"$dir/server.out" 2>&1 &
    lab_pair_server_pid=$!
    for i in $(seq 50); do
        rc=0
        timeout -k 5 "$limit" "${client[@]}" >"$dir/client.out" 2>&1 || rc=$?
        [ $rc -eq 0 ] && break
        grep -qiE "couldn't connect|connection refused|unable to connect" "$dir/client.out" || break
        sleep 0.1
    done
    local server_rc=0
    wait "$lab_pair_server_pid" || server_rc=$?
    lab_pair_server_pid=""
    [ $rc -ne 0 ] && { cat "$dir/client.out" >&2; return $rc; }
    [ $server_rc -ne 0 ] && { cat "$dir/server.out" >&2; return $server_rc; }
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
