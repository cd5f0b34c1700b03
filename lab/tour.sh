#!/usr/bin/env bash
# The tour: every lesson in turn, in the README's order, against real verbs, with one line on
# what each shows. `./rdmalab tour` runs the section "lab" inside the lab (the verbs lessons and
# rdma-bench), the section "wire" on two lab hosts joined by a captured link, then the section
# "native" on this host (efa-rdm through libfabric over loopback), and prints one summary from
# the result files the sections leave.
#   lab/tour.sh BUILD_BIN_DIR lab|wire|native RESULT_FILE   run a section; a line per step in RESULT_FILE
#   lab/tour.sh --steps lab|wire|native                     the section's steps, in order
set -uo pipefail
lab_steps=(devices hello-rdma rdma-write rdma-read send-recv cm-simple write-imm scatter-gather atomics rendezvous credit-ring
           completion-events solicited-events post-api selective-signaling srq async-events ud multicast memory-windows
           send-invalidate registration-cost qp-state-machine uc error-recovery threads gpu-write gpu-read proxy ring-allreduce
           recursive-doubling dcqcn rdma-bench)
wire_steps=(on-the-wire loss-and-retransmission link-failure)
native_steps=(efa-rdm)
usage="usage: tour.sh BUILD_BIN_DIR lab|wire|native RESULT_FILE, or tour.sh --steps lab|wire|native"
if [ "${1:-}" = --steps ]; then
    case "${2:-}" in
        lab) echo "${lab_steps[@]}" ;;
        wire) echo "${wire_steps[@]}" ;;
        native) echo "${native_steps[@]}" ;;
        *) echo "tour.sh: $usage" >&2; exit 2 ;;
    esac
    exit 0
fi
[ $# -eq 3 ] || { echo "tour.sh: $usage" >&2; exit 2; }
export RDMALAB_BIN=$1
section=$2
result=$3
results_dir=$(cd "$(dirname "$result")" && pwd)
case "$section" in
    lab) export RDMALAB_ADDR=${RDMALAB_ADDR:?run the tour through ./rdmalab tour (the lab sets RDMALAB_ADDR)}
         steps=("${lab_steps[@]}"); first=1 ;;
    wire) [ -n "${RDMALAB_HOST:-}" ] || { echo "tour.sh: the wire section runs on the lab's two hosts" >&2; exit 2; }
          steps=("${wire_steps[@]}"); first=$((${#lab_steps[@]} + 1)) ;;
    native) export RDMALAB_ADDR=127.0.0.1   # libfabric over tcp, loopback only
            steps=("${native_steps[@]}"); first=$((${#lab_steps[@]} + ${#wire_steps[@]} + 1)) ;;
    *) echo "tour.sh: unknown section '$section' (lab or native)" >&2; exit 2 ;;
esac
total=$((${#lab_steps[@]} + ${#wire_steps[@]} + ${#native_steps[@]}))
source "$(dirname "$0")/pair.sh" || exit 1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
[ "$section" = wire ] && [ "$RDMALAB_HOST" != 2 ] && result=/dev/null   # host 2 reports the step
: >"$result"
number=$first

heading() { printf '\n\033[1m[%d/%d] %s\033[0m — %s\n' "$number" "$total" "$1" "$2"; }
[ -t 1 ] || heading() { printf '\n[%d/%d] %s — %s\n' "$number" "$total" "$1" "$2"; }

# finish_step NAME EXIT_CODES...: the step's line in the result file; every process must exit 0.
finish_step() {
    local name=$1 rc
    shift
    number=$((number + 1))
    for rc in "$@"; do
        if [ "$rc" != 0 ]; then
            echo "    ✗ $name failed (exit codes: $*)"
            echo "$name failed" >>"$result"
            return
        fi
    done
    echo "$name ok" >>"$result"
}

show() { sed 's/^/    /' "$@"; }

# pair NAME [SERVER_ARGS...] -- [CLIENT_ARGS...]: a client/server lesson run once; prints both
# sides and leaves the exit codes in rcs.
pair() {
    local name=$1
    shift
    pair_run "$scratch/$name" "$name" "$@"
    show "$scratch/$name/server.out" "$scratch/$name/client.out"
    rcs+=($(cat "$scratch/$name/server.rc" "$scratch/$name/client.rc"))
}
group() {  # group NAME CLIENTS [SERVER_ARGS...] -- [CLIENT_ARGS...]
    local name=$1 clients=$2
    shift 2
    group_run "$scratch/$name" "$name" "$clients" "$@"
    show "$scratch/$name/server.out" "$scratch/$name"/client*.out
    rcs+=($(cat "$scratch/$name"/*.rc))
}

# multicast: two receivers (separate processes, each a "server") join one group; one sender.
multicast_step() {
    local dir=$scratch/multicast pids=() r
    mkdir -p "$dir"
    for r in 1 2; do
        timeout -k 5 60 "$RDMALAB_BIN/multicast" receiver --accept-timeout 20 >"$dir/receiver-$r.out" 2>&1 &
        pids+=($!)
    done
    for r in 1 2; do  # each receiver prints "server: listening" once it has joined
        for _ in $(seq 200); do
            grep -q '^server: listening' "$dir/receiver-$r.out" 2>/dev/null && break
            sleep 0.05
        done
    done
    timeout -k 5 60 "$RDMALAB_BIN/multicast" sender "$RDMALAB_ADDR" >"$dir/sender.out" 2>&1
    rcs+=($?)
    for r in 1 2; do
        wait "${pids[$((r - 1))]}"
        rcs+=($?)
        sed "s/^/    receiver $r: /" "$dir/receiver-$r.out"
    done
    sed 's/^/    sender: /' "$dir/sender.out"
}

# ranks_step LESSON OTHERS_PATTERN ARGS...: three ranks of a collective lesson on this host (rank R
# on TCP port 18515 + R), each with ARGS; rank 0's output in full, then the lines of ranks 1 and 2
# that match "^rank R" followed by OTHERS_PATTERN.
ranks_step() {
    local lesson=$1 others=$2 dir=$scratch/$1 r hosts=$RDMALAB_ADDR,$RDMALAB_ADDR,$RDMALAB_ADDR pids=()
    shift 2
    mkdir -p "$dir"
    for r in 0 1 2; do
        timeout -k 5 90 "$RDMALAB_BIN/$lesson" --rank "$r" --hosts "$hosts" "$@" >"$dir/rank-$r.out" 2>&1 &
        pids+=($!)
    done
    for r in 0 1 2; do
        wait "${pids[$r]}"
        rcs+=($?)
    done
    show "$dir/rank-0.out"
    for r in 1 2; do grep -E "^rank $r$others" "$dir/rank-$r.out" | show; done
}

# run_step NAME: what the step shows, and how it runs.
run_step() {
    rcs=()
    case "$1" in
        devices)
            heading devices "what the lab offers: one Soft-RoCE device (rxe0) on a veth, its port, GIDs and limits"
            "$RDMALAB_BIN/devices" >"$scratch/devices.out" 2>&1
            rcs+=($?)
            show "$scratch/devices.out" ;;
        hello-rdma)
            heading hello-rdma "the smallest whole program (libibverbs and librdmacm only): one RDMA WRITE into the server's memory, checked there"
            pair hello-rdma -- ;;
        rdma-write)
            heading rdma-write "one-sided: the client writes into the server's memory; a final SEND says 'done'"
            pair rdma-write -s 64K -- -s 64K ;;
        rdma-read)
            heading rdma-read "one-sided: the client reads the server's memory; then a READ and a SEND of what it fetched, without and with IBV_SEND_FENCE"
            pair rdma-read -s 64K -- -s 64K ;;
        send-recv)
            heading send-recv "two-sided: pre-posted receives; every SEND arrives whole, in order"
            pair send-recv -n 4 -- -n 4 ;;
        cm-simple)
            heading cm-simple "rdma_cm's simplified API: rdma_create_ep does the setup, rdma_get_recv_comp the waiting"
            pair cm-simple -- ;;
        write-imm)
            heading write-imm "RDMA WRITE WITH IMMEDIATE: one-sided writes the server learns of from its receive CQ"
            pair write-imm -- ;;
        scatter-gather)
            heading scatter-gather "several buffers per WR: a SEND gathered from 3 lands scattered in 2; one SGE too many is refused"
            pair scatter-gather -- ;;
        atomics)
            heading atomics "remote fetch-and-add and a CAS spin lock: 2 clients at once, counted exactly"
            group atomics 2 --clients 2 -- ;;
        rendezvous)
            heading rendezvous "large transfers: SEND {addr, rkey, len} → RDMA READ → FIN, then the buffer is released"
            pair rendezvous -- ;;
        credit-ring)
            heading credit-ring "a stream of small messages: an RDMA WRITE ring consumed by polling, credits written back"
            pair credit-ring -- ;;
        completion-events)
            heading completion-events "busy polling vs sleeping on a completion channel: RTT and CPU of both sides (Soft-RoCE: compare rows only)"
            pair completion-events -- ;;
        solicited-events)
            heading solicited-events "a CQ armed for solicited completions: solicited SENDs wake an epoll loop, plain ones do not"
            pair solicited-events -- ;;
        post-api)
            heading post-api "the extended API: ibv_wr_* builds a WRITE and a SEND with immediate, one ibv_wr_complete; ibv_start_poll reads them"
            pair post-api -- ;;
        selective-signaling)
            heading selective-signaling "a completion on every Nth WR only: N > send-queue depth deadlocks (shown, with a time limit); N = depth/2 works"
            pair selective-signaling -- ;;
        srq)
            heading srq "one shared receive queue serves three clients; its limit event asks for a refill"
            group srq 3 --clients 3 -- ;;
        async-events)
            heading async-events "an event thread: the SRQ limit and a QP moved to ERROR, read with ibv_get_async_event and acknowledged"
            "$RDMALAB_BIN/async-events" >"$scratch/async-events.out" 2>&1
            rcs+=($?)
            show "$scratch/async-events.out" ;;
        ud)
            heading ud "datagrams: no connection; each SEND names an address handle, a QPN and a Q_Key; the receiver counts what arrived"
            pair ud -- ;;
        multicast)
            heading multicast "UD multicast through rdma_cm: two receivers join 239.1.1.1, one sender; each receiver counts its own copies"
            multicast_step ;;
        memory-windows)
            heading memory-windows "type 2 memory windows: remote access to part of a region, with the window's own rkey and rights, until invalidated; a type 1 window bound with ibv_bind_mw"
            pair memory-windows -- ;;
        send-invalidate)
            heading send-invalidate "SEND WITH INVALIDATE: the peer that wrote through a window revokes its rkey in the same message"
            "$RDMALAB_BIN/send-invalidate" >"$scratch/send-invalidate.out" 2>&1
            rcs+=($?)
            show "$scratch/send-invalidate.out" ;;
        registration-cost)
            heading registration-cost "what ibv_reg_mr costs: size, untouched vs resident pages, huge pages, a registration cache, fork; ODP asked for, then tried"
            "$RDMALAB_BIN/registration-cost" >"$scratch/registration-cost.out" 2>&1
            rcs+=($?)
            show "$scratch/registration-cost.out" ;;
        qp-state-machine)
            heading qp-state-machine "RC without rdma_cm: QPN/PSN/GID over TCP, RESET->INIT->RTR->RTS by hand, proven by a WRITE"
            pair qp-state-machine -- ;;
        uc)
            heading uc "Unreliable Connected: WRITE and SEND work; unreceived SENDs 'succeed' yet vanish; no READ"
            pair uc -- ;;
        error-recovery)
            heading error-recovery "wrong rkey and RNR put the QP in ERROR (WRs flushed); RESET->INIT->RTR->RTS recovers it"
            pair error-recovery -- ;;
        threads)
            heading threads "threads and QPs: a shared QP (two locks), a QP per thread with a poller, a QP and CQ per thread"
            "$RDMALAB_BIN/threads" -n 300 >"$scratch/threads.out" 2>&1
            rcs+=($?)
            show "$scratch/threads.out" ;;
        gpu-write)
            heading gpu-write "GPU memory: the registration ladder probed on real verbs (dma-buf, peer memory, staging); here --mem host"
            pair gpu-write -- --mem host ;;
        gpu-read)
            heading gpu-read "GPU memory, read side: the server's buffer read by the client, the path each side took reported"
            pair gpu-read -- --mem host ;;
        proxy)
            heading proxy "the GPU-era proxy pattern: a producer's ring of requests, a CPU proxy thread posting RDMA WRITEs, completions back through a ring; latency per leg (Soft-RoCE numbers)"
            pair proxy -n 200 -- -n 200 ;;
        ring-allreduce)
            heading ring-allreduce "a collective: three ranks sum their vectors in a ring, reduce-scatter then all-gather, as RDMA WRITEs with immediate and credits"
            ranks_step ring-allreduce ': (allreduce of|.*bytes written)' -s 256K --segment 16K -n 3 ;;
        recursive-doubling)
            heading recursive-doubling "the small vectors' allreduce: ranks swap whole vectors with rank XOR 2^k, log2(n) steps; with three, rank 2 folds into rank 0 and gets the sum back"
            ranks_step recursive-doubling '( of |: (allreduce of|.*bytes written))' -s 16K -n 3 ;;
        dcqcn)
            heading dcqcn "DCQCN as a model: the server reads its own packets' ECN bits and answers marks with CNPs, the client paces its WRITEs by DCQCN's rate; on one host rxe loops the packets inside the kernel, so nothing is marked or copied here (the marking queue takes three hosts: bench/dcqcn.sh)"
            pair dcqcn -- -D 1 ;;
        rdma-bench)
            heading rdma-bench "the benchmark: write vs send at 64 B, 4 KiB, 64 KiB, send counted at the receiver; then the server's buffer staged (--path staging: a pinned bounce buffer, as GPU memory without GPUDirect). Soft-RoCE numbers"
            pair rdma-bench -- --op write,send -s 64,4K,64K -n 500 --warmup 20 --no-progress
            pair rdma-bench --path staging -- --op write-imm -s 4K -n 500 --warmup 20 --no-progress ;;
        on-the-wire)
            # Both hosts run the wire's steps: the server on host 1, the client on host 2, which
            # shows both sides.
            [ "$RDMALAB_HOST" = 2 ] && heading on-the-wire "the wire: each RC operation from host 2 into host 1, below and above the path MTU, predicted as the packets it makes, then done and verified (./rdmalab tour then holds the prediction against the capture)"
            local dir=$results_dir/wire-packets   # emptied by ./rdmalab tour before the boot
            export RDMALAB_ADDR=$RDMALAB_ADDR_1
            wire_pair "$dir" on-the-wire --
            if [ "$RDMALAB_HOST" = 2 ]; then
                rcs+=($(wire_pair_codes "$dir"))
                # The first operations' predictions in full, then each step's one line.
                { sed -n '/^client: path MTU/,/^client: step 4: completed/p' "$dir/client.out"
                  grep -E '^client: step ([5-9]|1[01]): [A-Z]' "$dir/client.out"
                  grep -E '^(server: all|client: [0-9]+ operations)' "$dir/server.out" "$dir/client.out" -h; } | show
            fi ;;
        loss-and-retransmission)
            # This step alone runs on a lossy link: netem on host 2's egress, removed after it.
            local dir=$results_dir/wire-loss loss="5%"
            export RDMALAB_ADDR=$RDMALAB_ADDR_1 RDMALAB_FAULTS="host 2 egress loss $loss (this tour step only)"
            if [ "$RDMALAB_HOST" = 2 ]; then
                heading loss-and-retransmission "the wire with $loss loss on host 2's egress (netem): 64 RC WRITEs verified after go-back-N resends, counted by rxe's port counters; 200 UD datagrams, the lost ones counted by the receiver"
                tc qdisc add dev eth0 root netem loss "$loss" || rcs+=(125)
            fi
            wire_pair "$dir" loss-and-retransmission --
            if [ "$RDMALAB_HOST" = 2 ]; then
                tc qdisc del dev eth0 root || rcs+=(125)
                rcs+=($(wire_pair_codes "$dir"))
                grep -hE '^(server|client): (RC|UD|the lab)' "$dir/server.out" "$dir/client.out" | show
            fi
            unset RDMALAB_FAULTS ;;
        link-failure)
            # The lab takes host 1's link down on a signal (./rdmalab tour passes --link-down
            # 1@signal+3): host 2 gives it once its client is writing and waiting for the failure.
            [ "$RDMALAB_HOST" = 2 ] && heading link-failure "the wire: host 1's link dies under host 2's WRITEs (IBV_WC_RETRY_EXC_ERR at the time retry_cnt and timeout predict), a SEND meets no receive (RNR NAKs, IBV_WC_RNR_RETRY_EXC_ERR); the QP recovers both times"
            local dir=$results_dir/wire-failure
            export RDMALAB_ADDR=$RDMALAB_ADDR_1
            local signaller=""
            if [ "$RDMALAB_HOST" = 2 ]; then
                (for _ in $(seq 600); do
                     grep -q 'until the link dies' "$dir/client.out" 2>/dev/null && { touch "$RDMALAB_SHARED/link-down-1"; exit; }
                     sleep 0.05
                 done) &
                signaller=$!
            fi
            wire_pair "$dir" link-failure --
            [ -n "$signaller" ] && { kill "$signaller" 2>/dev/null; wait "$signaller" 2>/dev/null; }
            if [ "$RDMALAB_HOST" = 2 ]; then
                rcs+=($(wire_pair_codes "$dir"))
                grep -vE '^(server|client): (    |sent QPN|RESET|INIT|RTR|RTS)' "$dir/server.out" "$dir/client.out" -h | sed 's/^/    /'
            fi ;;
        efa-rdm)
            heading efa-rdm "libfabric RDM, the AWS EFA interface: SEND, WRITE, READ to an address-vector peer over tcp;ofi_rxm (this host)"
            pair efa-rdm -- ;;
        *) echo "tour.sh: no step named '$1'" >&2; rcs+=(2) ;;
    esac
    finish_step "$1" "${rcs[@]}"
}

for step in "${steps[@]}"; do run_step "$step"; done
