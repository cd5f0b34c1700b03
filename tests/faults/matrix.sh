#!/usr/bin/env bash
# The fault matrix: each cell kills a lesson's (or rdma-bench's) server or client mid-run, or
# sets a misbehaving peer (build/bin/rogue-peer) against it, and checks what the survivor does.
# Runs inside the lab (one guest; it needs an RDMA device):
#   tests/faults/matrix.sh BUILD_BIN_DIR [RESULTS.tsv [compact|full]]
# (CTest's faults.matrix runs the full one: RESULTS.tsv is then $RDMALAB_FAULTS_TSV, default
# BUILD_BIN_DIR/../faults/faults.tsv.)
# compact: the cells the default suite runs (tests/lab/faults.sh); full: every connected lesson
# and rdma-bench (./rdmalab test --sanitize). Each cell states what it expects; RESULTS.tsv gets
# one line per cell: program, fault, expected, observed, ok|FAIL. Exits 1 if any cell failed.
#
# What every cell expects:
#   server-killed  SIGKILL to the server while its client is connected (the client, started
#                  with stop-at-rts.so preloaded, stops itself when its connection is ready (RTS
#                  or ESTABLISHED), before it posts anything; the kill lands then and the client
#                  continues): the client exits 1 within its --timeout (+3 s), with one line on
#                  stderr naming the completion status, rdma_cm event or timeout that told it.
#   client-killed  SIGKILL to a client mid-run. A single-client server exits 1 within its
#                  --timeout (+3 s), one line saying why; a server of several clients (srq,
#                  atomics) says it lost that client, serves the others to the end (they exit 0).
#   rogue-*        a peer that connects and sends nothing, a truncated message, or well-formed
#                  out-of-range values: the lesson exits 1 with one line on stderr; the rogue
#                  server's unregistered guard page behind its buffer stays zero.
# After every cell: no process of the cell is left, and at the end the kernel holds exactly the
# RDMA objects (QPs, CQs, MRs, PDs, cm_ids) it held before the first.
set -uo pipefail
bin=${1:?usage: matrix.sh BUILD_BIN_DIR [RESULTS.tsv [compact|full]]}
results=${2:-${RDMALAB_FAULTS_TSV:-$bin/../faults/faults.tsv}}
scope=${3:-compact}
if [ -z "${RDMALAB_IN_LAB:-}" ]; then
    echo "SKIP: needs an RDMA device: run it through the lab (./rdmalab faults)"
    exit 77
fi
addr=${RDMALAB_ADDR:?the lab sets RDMALAB_ADDR}
mkdir -p "$(dirname "$results")"
# A wrapper for every program the cells start (valgrind, for instance): RDMALAB_FAULT_WRAP.
read -r -a wrap <<<"${RDMALAB_FAULT_WRAP:-}"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
: >"$results"
failed=0
port=19100
cell_start=$SECONDS

now_ms() { echo $(($(date +%s%N) / 1000000)); }

record() {  # record PROGRAM FAULT EXPECTED OBSERVED VERDICT
    local observed=${4//$'\n'/ }
    observed=${observed//$'\t'/ }
    printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$observed" "$5" >>"$results"
    printf '%-4s %-22s %-16s %s (%d s)\n' "$5" "$1" "$2" "$observed" $((SECONDS - cell_start))
    cell_start=$SECONDS
    [ "$5" = ok ] || failed=$((failed + 1))
}

# The one line a failing side printed on stderr (its last line, cut to 150 characters).
last_line() { grep -v '^==[0-9]*==' "$1" 2>/dev/null | tail -n 1 | cut -c1-150; }
stderr_lines() { grep -vc '^==[0-9]*==' "$1" 2>/dev/null || true; }

# client_killed kills a client once it has said it is connected (a kill that lands a little late
# still lands mid-run: its cells move thousands of messages). Where a lesson says something
# before it is connected, the cell names the line that means "connected": trigger=REGEX.
# start_watched OUT ERR CMD...: CMD in the background (watched_pid), its stdout line-buffered
# (stdbuf) into a FIFO that only this script reads: wait_first_line returns as soon as CMD has
# printed that line. drain_watched then copies the rest of its output to OUT.
start_watched() {
    local out=$1 err=$2
    shift 2
    rm -f "$out.fifo"
    mkfifo "$out.fifo"
    "${wrap[@]}" stdbuf -oL "$@" >"$out.fifo" 2>"$err" &
    watched_pid=$!
    exec {watched_fd}<"$out.fifo"
    watched_out=$out
}
wait_first_line() {  # at most 20 s; the first line matching $trigger (default: any line)
    local line
    : >"$watched_out"
    while IFS= read -r -t 20 -u "$watched_fd" line; do
        printf '%s\n' "$line" >>"$watched_out"
        [[ $line =~ ${trigger:-.} ]] && return 0
    done
    return 1
}
drain_watched() {
    cat <&"$watched_fd" >>"$watched_out" &
    drainer=$!
    exec {watched_fd}<&-
    rm -f "$watched_out.fifo"
}

# wait_bounded PID SECONDS: waits for PID; kills it (and returns 124) after SECONDS.
wait_bounded() {
    local pid=$1 limit=$(($2 * 10)) i=0
    while kill -0 "$pid" 2>/dev/null; do
        if [ $i -ge $limit ]; then
            kill -KILL "$pid" 2>/dev/null
            wait "$pid" 2>/dev/null
            return 124
        fi
        sleep 0.1
        i=$((i + 1))
    done
    wait "$pid"
}

# wait_stopped PID: at most 20 s for PID to be stopped (state T in /proc/PID/stat); 1 if it
# exits or never stops.
wait_stopped() {
    local i stat
    for i in $(seq 200); do
        stat=$(cat /proc/$1/stat 2>/dev/null) || return 1
        stat=${stat##*) }
        [ "${stat%% *}" = T ] && return 0
        sleep 0.1
    done
    return 1
}

wait_listening() {  # wait_listening FILE PID: the server's "listening" line, at most 15 s
    local i
    for i in $(seq 150); do
        grep -q '^server: listening\|^server: rxe' "$1" 2>/dev/null && return 0
        kill -0 "$2" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

# No process of this cell left: every pid given is gone.
none_left() { local p; for p in "$@"; do kill -0 "$p" 2>/dev/null && return 1; done; return 0; }

# server_killed PROGRAM [SERVER_ARGS...] -- [CLIENT_ARGS...]
server_killed() {
    local program=$1 timeout_s=8
    shift
    local server_args=() client_args=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do server_args+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    client_args=("$@")
    local dir=$scratch/$program-server-killed
    port=$((port + 1))
    mkdir -p "$dir"
    local accept=(--accept-timeout 20)
    [ "$program" = rdma-bench ] && accept=(--accept-timeout 20)
    "${wrap[@]}" "$bin/$program" server -p $port "${accept[@]}" "${server_args[@]}" >"$dir/server.out" 2>&1 &
    local spid=$!
    wait_listening "$dir/server.out" $spid
    # The client stops itself when its connection is ready (stop-at-rts.so); the server dies then.
    LD_PRELOAD=$bin/stop-at-rts.so "${wrap[@]}" stdbuf -oL "$bin/$program" client "$addr" -p $port \
        --timeout $timeout_s "${client_args[@]}" >"$dir/client.out" 2>"$dir/client.err" &
    local cpid=$! observed verdict=ok rc=0 start elapsed
    if wait_stopped $cpid; then
        kill -KILL $spid
        wait $spid 2>/dev/null
        start=$(now_ms)
        kill -CONT $cpid
        wait_bounded $cpid $((timeout_s + 15)) || rc=$?
        elapsed=$(($(now_ms) - start))
        observed="exit $rc after $(awk -v ms=$elapsed 'BEGIN { printf "%.1f", ms / 1000 }') s: $(last_line "$dir/client.err")"
        if [ "$rc" != 1 ]; then verdict=FAIL
        elif [ "$elapsed" -gt $(((timeout_s + 3) * 1000)) ]; then verdict=FAIL
        elif [ "$(stderr_lines "$dir/client.err")" != 1 ]; then verdict=FAIL; observed+=" (not one line)"
        elif ! grep -qE 'IBV_WC_|error|Error|RDMA_CM_EVENT|no (completion|credit) (within|for)|no rdma_cm event|closed|disconnected|reset by peer|Broken pipe' "$dir/client.err"; then verdict=FAIL
        fi
    else
        observed="the client never stopped ready: $(last_line "$dir/client.err")"
        verdict=FAIL
        kill -KILL $spid $cpid 2>/dev/null
        wait $spid $cpid 2>/dev/null
    fi
    none_left $spid $cpid || { verdict=FAIL; observed+=" (a process was left)"; }
    record "$program" server-killed "client exits 1 within --timeout, one line" "$observed" "$verdict"
    [ "$verdict" = ok ] && [ "$scope" != cell ] || tail -n ${tail_lines:-5} "$dir"/*.out "$dir"/*.err
}

# client_killed PROGRAM CLIENTS [SERVER_ARGS...] -- [CLIENT_ARGS...]: kills the first of
# CLIENTS clients once it reaches RTS.
client_killed() {
    local program=$1 clients=$2 timeout_s=10
    shift 2
    local server_args=() client_args=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do server_args+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    client_args=("$@")
    local dir=$scratch/$program-client-killed
    port=$((port + 1))
    mkdir -p "$dir"
    "${wrap[@]}" "$bin/$program" server -p $port --accept-timeout 20 --timeout $timeout_s "${server_args[@]}" \
        >"$dir/server.out" 2>"$dir/server.err" &
    local spid=$! pids=() i
    wait_listening "$dir/server.out" $spid
    # The first client is killed as soon as it has said its first line (it is connected).
    start_watched "$dir/client1.out" "$dir/client1.err" \
        "$bin/$program" client "$addr" -p $port --timeout 20 "${client_args[@]}"
    pids+=($watched_pid)
    wait_first_line
    kill -KILL $watched_pid
    drain_watched
    wait $drainer
    for ((i = 2; i <= clients; i++)); do
        "${wrap[@]}" "$bin/$program" client "$addr" -p $port --timeout 20 "${client_args[@]}" \
            >"$dir/client$i.out" 2>&1 &
        pids+=($!)
    done
    local start rc=0 observed verdict=ok others=0 elapsed
    start=$(now_ms)
    wait "${pids[0]}" 2>/dev/null
    for ((i = 2; i <= clients; i++)); do
        wait_bounded "${pids[i - 1]}" 60 && others=$((others + 1))
    done
    wait_bounded $spid $((timeout_s + 30)) || rc=$?
    elapsed=$(($(now_ms) - start))
    local secs
    secs=$(awk -v ms=$elapsed 'BEGIN { printf "%.1f", ms / 1000 }')
    if [ "$clients" = 1 ]; then
        observed="server exit $rc after $secs s: $(last_line "$dir/server.err")"
        if [ "$rc" != 1 ] || [ "$elapsed" -gt $(((timeout_s + 3) * 1000)) ]; then verdict=FAIL
        elif [ "$(stderr_lines "$dir/server.err")" != 1 ]; then verdict=FAIL; observed+=" (not one line)"
        fi
        record "$program" client-killed "server exits 1 within --timeout, one line" "$observed" "$verdict"
    else
        local lost
        lost=$(grep -m 1 -iE 'lost|gone|disconnected|failed' "$dir/server.out" "$dir/server.err" 2>/dev/null | head -n 1 | sed 's/^[^:]*://' | cut -c1-110)
        observed="server exit $rc; $others of $((clients - 1)) other clients exit 0; ${lost:-no report of the lost client}"
        if [ "$others" != $((clients - 1)) ] || [ -z "$lost" ]; then verdict=FAIL; fi
        record "$program" client-killed "reports it, serves the other $((clients - 1))" "$observed" "$verdict"
    fi
    none_left $spid "${pids[@]}" || { verdict=FAIL; echo "FAIL: a process of $program client-killed was left"; failed=$((failed + 1)); }
    [ "$verdict" = ok ] && [ "$scope" != cell ] || tail -n ${tail_lines:-5} "$dir"/*.out "$dir"/*.err
}

# rogue_server MODE PROGRAM [CLIENT_ARGS...]: rogue-peer plays PROGRAM's server.
rogue_server() {
    local mode=$1 program=$2
    shift 2
    local dir=$scratch/$program-rogue-$mode
    port=$((port + 1))
    mkdir -p "$dir"
    local use=1
    [ "$program" = rdma-read ] && use=2
    ROGUE_USE=$use "$bin/rogue-peer" server "$mode" -p $port --hold 20 >"$dir/rogue.out" 2>&1 &
    local rpid=$! rc=0 rogue_rc=0 observed verdict=ok
    wait_listening "$dir/rogue.out" $rpid
    "${wrap[@]}" "$bin/$program" client "$addr" -p $port --timeout 4 "$@" >"$dir/client.out" 2>"$dir/client.err" &
    local cpid=$!
    wait_bounded $cpid 30 || rc=$?
    wait_bounded $rpid 30 || rogue_rc=$?
    observed="exit $rc: $(last_line "$dir/client.err")"
    if [ "$rc" != 1 ] || [ "$(stderr_lines "$dir/client.err")" != 1 ]; then verdict=FAIL; fi
    if [ "$rogue_rc" != 0 ]; then verdict=FAIL; observed+="; rogue-peer exit $rogue_rc: $(tail -n 1 "$dir/rogue.out")"; fi
    none_left $rpid $cpid || verdict=FAIL
    local what
    case $mode in
        version) what="server advertises protocol version 9" ;;
        truncated) what="server advertisement cut to 10 bytes" ;;
        rkey) what="server advertises an rkey it does not own" ;;
        length) what="server advertises 1 MiB over a 4 KiB region" ;;
        silent) what="server accepts, then does nothing" ;;
    esac
    record "$program" "rogue: $what" "client exits 1, one line; nothing written past the region" "$observed" "$verdict"
    [ "$verdict" = ok ] || tail -n 5 "$dir"/*
}

# rogue_client MODE PROGRAM [SERVER_ARGS...]: rogue-peer plays PROGRAM's client.
rogue_client() {
    local mode=$1 program=$2 timeout_s=3
    shift 2
    local dir=$scratch/$program-rogue-client-$mode kind=client
    port=$((port + 1))
    mkdir -p "$dir"
    [ "$program" = rdma-bench ] && kind=bench-client
    "${wrap[@]}" "$bin/$program" server -p $port --accept-timeout 20 --timeout $timeout_s "$@" \
        >"$dir/server.out" 2>"$dir/server.err" &
    local spid=$! rc=0 observed verdict=ok start elapsed
    wait_listening "$dir/server.out" $spid
    start=$(now_ms)
    "$bin/rogue-peer" $kind "$addr" "$mode" -p $port --hold 20 >"$dir/rogue.out" 2>&1 &
    local rpid=$!
    wait_bounded $spid $((timeout_s + 20)) || rc=$?
    elapsed=$(($(now_ms) - start))
    wait_bounded $rpid 30
    observed="exit $rc after $(awk -v ms=$elapsed 'BEGIN { printf "%.1f", ms / 1000 }') s: $(last_line "$dir/server.err")"
    if [ "$rc" != 1 ] || [ "$(stderr_lines "$dir/server.err")" != 1 ] ||
        [ "$elapsed" -gt $(((timeout_s + 10) * 1000)) ]; then verdict=FAIL; fi
    none_left $spid $rpid || verdict=FAIL
    local what
    case $mode in
        nothing|silent) what="client connects, sends nothing" ;;
        truncated) what="client sends a truncated message" ;;
        oversize) what="client claims 2 GiB written" ;;
        version) what="client speaks protocol 99" ;;
    esac
    record "$program" "rogue: $what" "server exits 1 within --timeout, one line" "$observed" "$verdict"
    [ "$verdict" = ok ] || tail -n 5 "$dir"/*
}

rdma_objects() { rdma res show 2>/dev/null | sed -E 's/^[0-9]+: //'; }
before=$(rdma_objects)

# ---- the cells
bench_args=(-- --op write -s 64K -n 100000 --warmup 10 --no-progress)
if [ "$scope" != cell ]; then
    # compact: one cell per way a peer can fail, on the cheapest programs (the default suite)
    server_killed send-recv -n 1000 -s 64K -- -n 1000 -s 64K
    server_killed rdma-bench "${bench_args[@]}"
    client_killed srq 3 --clients 3 -- -n 300
    rogue_server rkey rdma-write
    rogue_client truncated rdma-write
    rogue_client version rdma-bench
fi
if [ "$scope" = cell ]; then
    # One cell, for debugging: RDMALAB_FAULT_CELL='client_killed srq 3 --clients 3 -- -n 300'
    read -r -a cell <<<"${RDMALAB_FAULT_CELL:?scope cell needs RDMALAB_FAULT_CELL}"
    "${cell[@]}"
elif [ "$scope" = full ]; then
    server_killed rdma-write -s 8M -- -s 8M
    client_killed rdma-write 1 -s 8M -- -s 8M
    rogue_server version rdma-write
    rogue_server length rdma-write -s 1M
    server_killed rdma-read -s 8M -- -s 8M
    server_killed write-imm -n 256 -- -n 256
    server_killed atomics -n 100000 -- -n 100000
    server_killed completion-events -n 10000 -- -n 10000
    server_killed error-recovery -n 64 -- -n 64
    server_killed selective-signaling -- -n 1000000
    server_killed rendezvous --
    server_killed credit-ring -n 10000 -- -n 10000
    server_killed srq -- -n 1000
    server_killed uc -n 64 -- -n 64
    server_killed qp-state-machine --
    server_killed memory-windows --
    server_killed on-the-wire --
    server_killed ud -- -n 100000
    client_killed send-recv 1 -n 1000 -s 64K -- -n 1000 -s 64K
    trigger=connected client_killed atomics 3 --clients 3 -n 2000 -- -n 2000
    client_killed rdma-bench 1 -- --op write -s 64K -n 100000 --warmup 10 --no-progress
    rogue_server truncated rdma-write
    rogue_server silent rdma-write
    rogue_server rkey rdma-read
    rogue_server length rdma-read -s 1M
    rogue_client nothing rdma-write
    rogue_client oversize rdma-write
    rogue_client truncated send-recv
    rogue_client truncated rdma-bench
    rogue_client silent rdma-bench
fi

after=$(rdma_objects)
if [ "$before" = "$after" ]; then
    record "(all cells)" "resources" "the kernel's RDMA objects as before" "rdma res show: unchanged ($(echo "$after" | tr '\n' ' ' | cut -c1-100))" ok
else
    record "(all cells)" "resources" "the kernel's RDMA objects as before" "before: $(echo "$before" | tr '\n' ' '); after: $(echo "$after" | tr '\n' ' ')" FAIL
fi
echo "faults: $(grep -c $'\tok$' "$results") survived, $failed failed"
[ "$failed" = 0 ]
