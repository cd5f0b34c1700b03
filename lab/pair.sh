# Sourced by the tour and the lab tests: run one lesson's server and client against each other.
# pair_run DIR LESSON [SERVER_ARGS...] -- [CLIENT_ARGS...]
# Leaves DIR/server.out, DIR/client.out (stdout+stderr), DIR/server.rc, DIR/client.rc.
# Every wait is bounded and both processes are reaped on every path.
: "${RDMALAB_BIN:?set RDMALAB_BIN to the folder of the lesson binaries}"
: "${RDMALAB_ADDR:?set RDMALAB_ADDR to the RDMA address of the server (the lab sets it)}"

pair_run() {
    local dir=$1 lesson=$2
    shift 2
    local server_args=() client_args=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do server_args+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    client_args=("$@")
    mkdir -p "$dir"
    rm -f "$dir"/server.* "$dir"/client.*

    # A server that never sees its client gives up by itself (--accept-timeout); `timeout`
    # is the backstop for anything else.
    timeout -k 5 90 "$RDMALAB_BIN/$lesson" server --accept-timeout 20 "${server_args[@]}" \
        >"$dir/server.out" 2>&1 &
    local server_pid=$!
    local waited=0
    until grep -q '^server: listening' "$dir/server.out" 2>/dev/null; do
        if ! kill -0 "$server_pid" 2>/dev/null || [ $waited -ge 200 ]; then break; fi
        sleep 0.05
        waited=$((waited + 1))
    done
    timeout -k 5 90 "$RDMALAB_BIN/$lesson" client "$RDMALAB_ADDR" "${client_args[@]}" \
        >"$dir/client.out" 2>&1
    echo $? >"$dir/client.rc"
    local server_rc=0
    wait "$server_pid" || server_rc=$?
    echo "$server_rc" >"$dir/server.rc"
}
