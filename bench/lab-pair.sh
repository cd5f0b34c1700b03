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
