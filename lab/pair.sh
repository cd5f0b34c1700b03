# Sourced by the tour and the lab tests: run a lesson's server and its client(s) against it.
#   pair_run DIR LESSON [SERVER_ARGS...] -- [CLIENT_ARGS...]
#       one client; leaves DIR/server.out, DIR/client.out (stdout+stderr), DIR/server.rc, DIR/client.rc
#   group_run DIR LESSON CLIENTS [SERVER_ARGS...] -- [CLIENT_ARGS...]
#       CLIENTS clients at once; leaves DIR/server.* and DIR/client1.* … DIR/clientN.*
# Every wait is bounded (each process by pair_limit_s, default 90 s) and every process is
# reaped on every path.
: "${RDMALAB_BIN:?set RDMALAB_BIN to the folder of the lesson binaries}"
: "${RDMALAB_ADDR:?set RDMALAB_ADDR to the RDMA address of the server (the lab sets it)}"

# start_server DIR LESSON ARGS...: starts it in the background (server_pid) and waits up to
# 10 s for its "server: listening" line. A server that never sees its client gives up by
# itself (--accept-timeout); `timeout` is the backstop for anything else.
start_server() {
    local dir=$1 lesson=$2
    shift 2
    mkdir -p "$dir"
    rm -f "$dir"/server.* "$dir"/client*
    local args=("$@")
    [[ " ${args[*]} " == *" --accept-timeout "* ]] || args=(--accept-timeout 20 "${args[@]}")
    timeout -k 5 "${pair_limit_s:-90}" "$RDMALAB_BIN/$lesson" server "${args[@]}" >"$dir/server.out" 2>&1 &
    server_pid=$!
    local waited=0
    until grep -q '^server: listening' "$dir/server.out" 2>/dev/null; do
        if ! kill -0 "$server_pid" 2>/dev/null || [ $waited -ge 200 ]; then break; fi
        sleep 0.05
        waited=$((waited + 1))
    done
}

finish_server() {
    local dir=$1 rc=0
    wait "$server_pid" || rc=$?
    echo "$rc" >"$dir/server.rc"
}

# Splits "SERVER_ARGS... -- CLIENT_ARGS..." into the arrays server_args and client_args.
split_args() {
    server_args=()
    client_args=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do server_args+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    client_args=("$@")
}

pair_run() {
    local dir=$1 lesson=$2
    shift 2
    split_args "$@"
    start_server "$dir" "$lesson" "${server_args[@]}"
    timeout -k 5 90 "$RDMALAB_BIN/$lesson" client "$RDMALAB_ADDR" "${client_args[@]}" >"$dir/client.out" 2>&1
    echo $? >"$dir/client.rc"
    finish_server "$dir"
}

group_run() {
    local dir=$1 lesson=$2 clients=$3 i
    shift 3
    split_args "$@"
    start_server "$dir" "$lesson" "${server_args[@]}"
    local pids=()
    for ((i = 1; i <= clients; i++)); do
        timeout -k 5 90 "$RDMALAB_BIN/$lesson" client "$RDMALAB_ADDR" "${client_args[@]}" >"$dir/client$i.out" 2>&1 &
        pids+=($!)
    done
    for ((i = 1; i <= clients; i++)); do
        local rc=0
        wait "${pids[i - 1]}" || rc=$?
        echo "$rc" >"$dir/client$i.rc"
    done
    finish_server "$dir"
}

# On the lab's wire (lab.sh --hosts N): the server on one host, its client on another, both
# given the same DIR in a folder every host sees (under $RDMALAB_SHARED, or the repository).
#   [wire_server_host=S] [wire_client_host=C] wire_pair DIR LESSON [SERVER_ARGS...] -- [CLIENT_ARGS...]
# Host S (default 1) leaves DIR/server.out and DIR/server.rc, host C (default 2) DIR/client.out
# and DIR/client.rc; host C waits (at most 30 s) for the server's "listening" line before it
# connects to $RDMALAB_ADDR_S. Other hosts do nothing.
wire_pair() {
    local dir=$1 lesson=$2 server_host=${wire_server_host:-1} client_host=${wire_client_host:-2}
    shift 2
    split_args "$@"
    : "${RDMALAB_HOST:?wire_pair runs on the wire: lab.sh --hosts N}"
    if [ "$RDMALAB_HOST" = "$server_host" ]; then
        start_server "$dir" "$lesson" "${server_args[@]}"
        finish_server "$dir"
    elif [ "$RDMALAB_HOST" = "$client_host" ]; then
        local waited=0
        until grep -q '^server: listening' "$dir/server.out" 2>/dev/null; do
            if [ $waited -ge 600 ]; then
                echo "wire_pair: no server listening for $lesson within 30 s" >"$dir/client.out"
                echo 124 >"$dir/client.rc"
                return
            fi
            sleep 0.05
            waited=$((waited + 1))
        done
        local rc=0 server_address=RDMALAB_ADDR_$server_host
        timeout -k 5 "${pair_limit_s:-90}" "$RDMALAB_BIN/$lesson" client "${!server_address:?}" "${client_args[@]}" \
            >"$dir/client.out" 2>&1 || rc=$?
        [ "$rc" = 124 ] && echo "wire_pair: the client did not finish within ${pair_limit_s:-90} s: killed it" >>"$dir/client.out"
        echo "$rc" >"$dir/client.rc"
    fi
}

# On the client's host after wire_pair: waits (at most 30 s) for the server's exit code, which
# its own host writes when the server ends, and prints both codes.
wire_pair_codes() {
    local dir=$1
    for _ in $(seq 300); do [ -s "$dir/server.rc" ] && break; sleep 0.1; done
    cat "$dir/server.rc" "$dir/client.rc" 2>/dev/null || echo 1
}
