#!/usr/bin/env bash
# The lab part of an exercise check, on both hosts of `rdmalab lab --hosts 2`: host 1 runs the
# reference peer and captures the link, host 2 runs the reader's program (observed: its
# registrations, work requests and completions, exercises/support/observe.cpp). Several runs,
# one after the other, in one boot:
#   lab/lab.sh --hosts 2 -- bash exercises/judge/in-lab.sh BUILD_BIN_DIR RUNS_FILE CAPTURE
# RUNS_FILE: one run per line, EXERCISE_DIR <TAB> PROGRAM <TAB> RUN_DIR (folders under the
# repository: both guests write there). One capture of the link for the whole boot goes to
# CAPTURE; each RUN_DIR gets `window`, the run's start and end on the capture's clock (host 1's),
# which exercises/exercise.sh cuts the capture by before judge.sh judges each RUN_DIR.
# Every wait is bounded: a program that hangs is stopped and its run judged as it stands.
# An exercise whose rules.sh says reader_role=server (the capstone, 14) turns the roles round: host 1
# runs the reader's program as a server (its address and the port as arguments), host 2 the
# reference clients that judge it (peer_clients in rules.sh; exercise-kv-clients by default).
# A client exercise's rules.sh may name its own peer instead of exercise-peer: peer_program, run
# with peer_args, --address (host 1's), --port and --timeout 600 (its wait for the reader's first
# connection, a safety net only); the reader's program starts once the kernel's rdma_cm shows it
# listening, and the peer, which gives no verdict, is stopped as soon as that program has ended
# (it ends on no clock of its own: a guest's clock under emulation can run many times fast).
# EXERCISE_BUILDING=1 (the suite's self-test): the programs are still being compiled on the host;
# both hosts wait for PROGRAM.built before a run's handshake (host 2's wait for the peer's
# readiness is shorter than a slow compile).
set -uo pipefail
bin=${1:?usage: in-lab.sh BUILD_BIN_DIR RUNS_FILE CAPTURE}
runs=${2:?usage: in-lab.sh BUILD_BIN_DIR RUNS_FILE CAPTURE}
capture=${3:?usage: in-lab.sh BUILD_BIN_DIR RUNS_FILE CAPTURE}
shared=${RDMALAB_SHARED:?in-lab.sh runs inside rdmalab lab --hosts 2}
host=${RDMALAB_HOST:?}
peer_address=${RDMALAB_ADDR%.*}.1
program_limit_s=30   # the reader's program, at most (a rules.sh may give its own: reader_limit_s)

# wait_for FILE [PATTERN] SECONDS: until FILE exists (and holds a line matching PATTERN).
wait_for() {
    local file=$1 pattern=${3:+$2} seconds=${3:-$2} ticks=0
    while :; do
        if [ -e "$file" ] && { [ -z "$pattern" ] || grep -q "$pattern" "$file"; }; then return 0; fi
        [ $ticks -lt $((seconds * 10)) ] || return 1
        sleep 0.1
        ticks=$((ticks + 1))
    done
}

now() { date +%s.%N; }

# One run of a server exercise (reader_role=server): see above. Same files, same handshakes.
server_run() {
    if [ "$host" = 1 ]; then
        rm -f "$run/capture.pcapng" "$run/packets.json" "$run/window" "$run/observe.tsv" \
            "$run/reader.out" "$run/reader.err" "$run/reader.rc"
        local start rc=0 ended
        start=$(now)
        EXERCISE_OBSERVE=$run/observe.tsv LD_PRELOAD=$bin/libexercise-observe.so \
            timeout -k 2 "$server_limit_s" "$program" "$RDMALAB_ADDR" "$port" \
            >"$run/reader.out" 2>"$run/reader.err" </dev/null &
        local server=$! tick
        # The clients start once the server listens, as the kernel's rdma_cm sees it (a slow
        # start under emulation outlasts any fixed wait), or once it has ended without.
        for ((tick = 0; tick < 300; tick++)); do
            rdma resource show cm_id 2>/dev/null | grep -q "state LISTEN .* src-addr $RDMALAB_ADDR:$port " && break
            kill -0 "$server" 2>/dev/null || break
            sleep 0.1
        done
        touch "$shared/run-$n.listening"
        wait "$server" || rc=$?
        echo "$rc" >"$run/reader.rc"
        ended=$(now)
        touch "$shared/run-$n.reader-ended"
        wait_for "$shared/run-$n.done" 40
        echo "$start $start $ended $(now)" >"$run/timeline"
        sleep 0.3   # the last ACKs
        echo "$start $(now)" >"$run/window"
        touch "$shared/run-$n.captured"
    else
        rm -f "$run/peer.out" "$run/peer.rc"
        if wait_for "$shared/run-$n.listening" 60; then
            local rc=0
            # Once the server has ended the clients have nothing left to wait for.
            timeout -k 2 "$server_limit_s" "$bin/$peer_clients" --address "$peer_address" \
                --port "$port" >"$run/peer.out" 2>&1 </dev/null &
            local clients=$!
            while kill -0 "$clients" 2>/dev/null; do
                if [ -e "$shared/run-$n.reader-ended" ]; then
                    local tick   # a grace of 3 s for the clients' last lines
                    for ((tick = 0; tick < 30; tick++)); do kill -0 "$clients" 2>/dev/null || break; sleep 0.1; done
                    kill -KILL "$clients" 2>/dev/null
                    break
                fi
                sleep 0.1
            done
            wait "$clients" || rc=$?
            [ "$rc" = 137 ] && rc=killed
            echo "$rc" >"$run/peer.rc"
        else
            echo "peer: the server never listened (nor ended) within 60 s" >"$run/peer.out"
            echo none >"$run/peer.rc"
        fi
        touch "$shared/run-$n.done"
        wait_for "$shared/run-$n.captured" 60
    fi
}
server_limit_s=45   # the reader's server, at most
stopped=()   # peers killed after a failed run, still being torn down
if [ "$host" = 1 ]; then
    rm -f "$capture"
    dumpcap -q -i eth0 -w "$capture" 2>"$capture.err" &
    dumpcap_pid=$!
    wait_for "$capture.err" "Capturing on" 20 || echo "in-lab: dumpcap did not start: $(head -n 1 "$capture.err")" >&2
fi
n=0
while IFS=$'\t' read -r exercise_dir program run; do
    [ -n "$exercise_dir" ] || continue
    n=$((n + 1))
    port=$((19600 + n))
    peer_exercise="" peer_size="" reader_role=client peer_clients=exercise-kv-clients
    peer_program="" peer_args="" reader_limit_s=$program_limit_s
    source "$exercise_dir/rules.sh"   # peer_exercise, peer_size, reader_role, peer_clients, ...
    if [ -n "${EXERCISE_BUILDING:-}" ] && ! wait_for "$program.built" 300; then
        echo "in-lab: run $n: $program was not compiled within 300 s" >&2
    fi
    if [ "$reader_role" = server ]; then
        server_run
    elif [ "$host" = 1 ]; then
        rm -f "$run/capture.pcapng" "$run/packets.json" "$run/peer.out" "$run/peer.rc" "$run/window"
        start=$(now)
        if [ -n "$peer_program" ]; then
            # shellcheck disable=SC2086  # peer_args are words
            "$bin/$peer_program" $peer_args --address "$RDMALAB_ADDR" --port "$port" --timeout 600 \
                >"$run/peer.out" 2>&1 &
        else
            "$bin/exercise-peer" "$peer_exercise" --port "$port" --size "$peer_size" --timeout 10 \
                >"$run/peer.out" 2>&1 &
        fi
        peer_pid=$!
        wait_for "$run/peer.out" 'listening' 20 || echo "in-lab: run $n: the peer never listened" >&2
        if [ -n "$peer_program" ]; then   # the reader's first connect is not tried again
            for ((tick = 0; tick < 100; tick++)); do
                rdma resource show cm_id 2>/dev/null | grep -q "state LISTEN .* src-addr $RDMALAB_ADDR:$port " && break
                sleep 0.1
            done
        fi
        listening=$(now)
        touch "$shared/run-$n.ready"
        # The reader's side says when its program ended. After a program that exited 0 the peer
        # has 15 s to give its verdict. After one that failed it has nothing to wait for: it is
        # killed and left to end while the next run starts (a process holding rdma_cm ids takes
        # seconds to be torn down under emulation); the script waits for it before it exits.
        wait_for "$shared/run-$n.done" $((reader_limit_s + 30))
        reader_done=$(now)
        if [ "$(cat "$run/reader.rc" 2>/dev/null)" = 0 ] && [ -z "$peer_program" ]; then
            for ((tick = 0; tick < 150; tick++)); do kill -0 "$peer_pid" 2>/dev/null || break; sleep 0.1; done
        fi
        if kill -0 "$peer_pid" 2>/dev/null; then
            kill -KILL "$peer_pid" 2>/dev/null
            echo killed >"$run/peer.rc"
            stopped+=("$peer_pid")
        else
            rc=0
            wait "$peer_pid" || rc=$?
            echo "$rc" >"$run/peer.rc"
        fi
        # Where a run's time went (host 1's clock): started, listening, reader done, peer ended.
        echo "$start $listening $reader_done $(now)" >"$run/timeline"
        sleep 0.3   # the last ACKs
        echo "$start $(now)" >"$run/window"
        touch "$shared/run-$n.captured"
    else
        rm -f "$run/observe.tsv" "$run/reader.out" "$run/reader.err" "$run/reader.rc"
        if wait_for "$shared/run-$n.ready" 60; then
            rc=0
            EXERCISE_OBSERVE=$run/observe.tsv LD_PRELOAD=$bin/libexercise-observe.so \
                timeout -k 2 "$reader_limit_s" "$program" "$peer_address" "$port" \
                >"$run/reader.out" 2>"$run/reader.err" </dev/null || rc=$?
            echo "$rc" >"$run/reader.rc"
        else
            echo "the peer's host never got ready" >"$run/reader.err"
            echo none >"$run/reader.rc"
        fi
        touch "$shared/run-$n.done"
        wait_for "$shared/run-$n.captured" 60
    fi
done <"$runs"
if [ "$host" = 1 ]; then
    for pid in "${stopped[@]}"; do wait "$pid" 2>/dev/null; done
    kill -INT "$dumpcap_pid" 2>/dev/null
    wait "$dumpcap_pid" 2>/dev/null
fi
exit 0
