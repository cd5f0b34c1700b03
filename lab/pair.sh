# The one way this project runs a server and its client(s) — lessons, rdma-bench, perftest —
# sourced by the tour, the tests and the bench scripts. Every wait is bounded (each process by
# pair_limit_s, default 90 s) and every process is reaped on every path.
#
#   pair_commands DIR SERVER_CMD... -- CLIENT_CMD...          any server and client, this host
#   pair_run DIR LESSON [SERVER_ARGS...] -- [CLIENT_ARGS...]  a lesson: LESSON server / client ADDR
#   group_run DIR LESSON CLIENTS [SERVER_ARGS...] -- [CLIENT_ARGS...]   CLIENTS clients at once
#   wire_pair DIR LESSON [SERVER_ARGS...] -- [CLIENT_ARGS...] server and client on two lab hosts
#   start_lesson_server DIR LESSON [ARGS...] … finish_server DIR   a server for clients of one's own
# They leave DIR/server.out, DIR/client.out (stdout+stderr; client1.out… for a group) and the
# exit codes in DIR/server.rc, DIR/client.rc. Parameters, as variables set before the call:
#   pair_limit_s=S         each process's time limit (default 90)
#   pair_retry_refused=1   the server prints no "listening" line (perftest's): retry the client
#                          while its connection is refused, for up to 5 s, instead of waiting
#   pair_kill_on_failure=1 a client that failed does not wait for its server: it is stopped
#   pair_stream_client=1   the client's output goes to this stdout/stderr, not DIR/client.out
# Lessons take their binaries from $RDMALAB_BIN and the server's address from $RDMALAB_ADDR
# (on the wire, $RDMALAB_ADDR_<server host>); the lab sets both.

# start_server DIR CMD...: starts CMD in the background (server_pid) and waits up to 10 s for
# its "server: listening" line (unless pair_retry_refused=1). A lesson's server that never sees
# its client gives up by itself (--accept-timeout); `timeout` is the backstop for anything else.
start_server() {
    local dir=$1
    shift
    mkdir -p "$dir"
    rm -f "$dir"/server.* "$dir"/client*
    timeout -k 5 "${pair_limit_s:-90}" "$@" >"$dir/server.out" 2>&1 &
    server_pid=$!
    [ "${pair_retry_refused:-0}" = 1 ] && return
    local waited=0
    until grep -q '^server: listening' "$dir/server.out" 2>/dev/null; do
        if ! kill -0 "$server_pid" 2>/dev/null || [ $waited -ge 200 ]; then break; fi
        sleep 0.05
        waited=$((waited + 1))
    done
}

# finish_server DIR [CLIENT_RC]: waits for the server (or stops it, if the client failed and
# pair_kill_on_failure=1) and leaves its exit code in DIR/server.rc.
finish_server() {
    local dir=$1 client_rc=${2:-0} rc=0
    if [ "$client_rc" != 0 ] && [ "${pair_kill_on_failure:-0}" = 1 ]; then
        kill "$server_pid" 2>/dev/null
    fi
    wait "$server_pid" || rc=$?
    server_pid=""
    echo "$rc" >"$dir/server.rc"
}

# run_client DIR NAME CMD...: the client, within the limit (retried while refused, if asked);
# its exit code in DIR/NAME.rc.
run_client() {
    local dir=$1 name=$2 rc=0 try
    shift 2
    for try in $(seq 50); do
        rc=0
        if [ "${pair_stream_client:-0}" = 1 ]; then
            timeout -k 5 "${pair_limit_s:-90}" "$@" || rc=$?
        else
            timeout -k 5 "${pair_limit_s:-90}" "$@" >"$dir/$name.out" 2>&1 || rc=$?
        fi
        [ "$rc" = 0 ] || [ "${pair_retry_refused:-0}" != 1 ] && break
        grep -qiE "couldn't connect|connection refused|unable to connect" "$dir/$name.out" 2>/dev/null || break
        sleep 0.1
    done
    [ "$rc" = 124 ] && echo "pair: $name did not finish within ${pair_limit_s:-90} s: killed it" >>"$dir/$name.out"
    echo "$rc" >"$dir/$name.rc"
    return "$rc"
}

# Splits "SERVER_ARGS... -- CLIENT_ARGS..." into the arrays server_args and client_args.
split_args() {
    server_args=()
    client_args=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do server_args+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    client_args=("$@")
}

pair_commands() {
    local dir=$1 rc=0
    shift
    split_args "$@"
    start_server "$dir" "${server_args[@]}"
    run_client "$dir" client "${client_args[@]}" || rc=$?
    finish_server "$dir" "$rc"
}

# A lesson's server, given a bounded wait for its client unless the arguments set one.
lesson_server_args() {
    local args=("$@")
    [[ " ${args[*]} " == *" --accept-timeout "* ]] || args=(--accept-timeout 20 "${args[@]}")
    server_args=("${args[@]}")
}

# start_lesson_server DIR LESSON [ARGS...]: LESSON's server, started as start_server does.
start_lesson_server() {
    local dir=$1 lesson=$2
    shift 2
    lesson_server_args "$@"
    start_server "$dir" "${RDMALAB_BIN:?}/$lesson" server "${server_args[@]}"
}

pair_run() {
    local dir=$1 lesson=$2
    shift 2
    split_args "$@"
    lesson_server_args "${server_args[@]}"
    local client=("${client_args[@]}")
    pair_commands "$dir" "${RDMALAB_BIN:?}/$lesson" server "${server_args[@]}" -- \
        "$RDMALAB_BIN/$lesson" client "${RDMALAB_ADDR:?}" "${client[@]}"
}

group_run() {
    local dir=$1 lesson=$2 clients=$3 i
    shift 3
    split_args "$@"
    start_lesson_server "$dir" "$lesson" "${server_args[@]}"
    local pids=()
    for ((i = 1; i <= clients; i++)); do
        run_client "$dir" "client$i" "$RDMALAB_BIN/$lesson" client "${RDMALAB_ADDR:?}" "${client_args[@]}" &
        pids+=($!)
    done
    for ((i = 1; i <= clients; i++)); do wait "${pids[i - 1]}"; done
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
        start_lesson_server "$dir" "$lesson" "${server_args[@]}"
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
        local server_address=RDMALAB_ADDR_$server_host
        run_client "$dir" client "${RDMALAB_BIN:?}/$lesson" client "${!server_address:?}" "${client_args[@]}" || true
    fi
}

# On the client's host after wire_pair: waits (at most 30 s) for the server's exit code, which
# its own host writes when the server ends, and prints both codes.
wire_pair_codes() {
    local dir=$1
    for _ in $(seq 300); do [ -s "$dir/server.rc" ] && break; sleep 0.1; done
    cat "$dir/server.rc" "$dir/client.rc" 2>/dev/null || echo 1
}
