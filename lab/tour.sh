#!/usr/bin/env bash
# The tour: every lesson in turn, against real verbs, with one line on what each shows.
# Run by `./rdmalab tour`: the verbs lessons inside the lab (section "lab"), then the libfabric
# lesson on the host over loopback (section "native"). Usage: lab/tour.sh BUILD_BIN_DIR lab|native
set -uo pipefail
export RDMALAB_BIN=${1:?usage: tour.sh BUILD_BIN_DIR lab|native}
section=${2:?usage: tour.sh BUILD_BIN_DIR lab|native}
case "$section" in
    lab) export RDMALAB_ADDR=${RDMALAB_ADDR:?run the tour through ./rdmalab tour (the lab sets RDMALAB_ADDR)} ;;
    native) export RDMALAB_ADDR=127.0.0.1 ;;  # libfabric over tcp, loopback only
    *) echo "tour.sh: unknown section '$section' (lab or native)" >&2; exit 2 ;;
esac
source "$(dirname "$0")/pair.sh" || exit 1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
shown=0
verified=0
failed_lessons=()

heading() {
    printf '\n\033[1m[%d] %s\033[0m — %s\n' "$((shown + 1))" "$1" "$2"
}
[ -t 1 ] || heading() { printf '\n[%d] %s — %s\n' "$((shown + 1))" "$1" "$2"; }

# lesson NAME "what it shows" [SERVER_ARGS...] -- [CLIENT_ARGS...]: run a client/server lesson.
lesson() {
    local name=$1 what=$2
    shift 2
    heading "$name" "$what"
    pair_run "$scratch/$name" "$name" "$@"
    show_and_finish "$name"
}

# lesson_group NAME CLIENTS "what it shows" [SERVER_ARGS...] -- [CLIENT_ARGS...]: several clients.
lesson_group() {
    local name=$1 clients=$2 what=$3
    shift 3
    heading "$name" "$what"
    group_run "$scratch/$name" "$name" "$clients" "$@"
    show_and_finish "$name"
}

show_and_finish() {
    local dir=$scratch/$1
    sed 's/^/    /' "$dir/server.out" "$dir"/client*.out
    finish_lesson "$1" $(cat "$dir"/*.rc)
}

finish_lesson() {
    local name=$1
    shift
    shown=$((shown + 1))
    for rc in "$@"; do
        if [ "$rc" != 0 ]; then
            echo "    ✗ $name failed (exit codes: $*)"
            failed_lessons+=("$name")
            return
        fi
    done
    verified=$((verified + 1))
}

if [ "$section" = lab ]; then
heading devices "what the lab offers: one Soft-RoCE device (rxe0) on a veth, its port, GIDs and limits"
"$RDMALAB_BIN/devices" >"$scratch/devices.out" 2>&1
devices_rc=$?
sed 's/^/    /' "$scratch/devices.out"
finish_lesson devices "$devices_rc"

lesson rdma-write "one-sided: the client writes into the server's memory; a final SEND says 'done'" \
    -s 64K -- -s 64K
lesson rdma-read "one-sided: the client reads the server's memory; the server only advertised it" \
    -s 64K -- -s 64K
lesson send-recv "two-sided: pre-posted receives; every SEND arrives whole, in order" -n 4 -- -n 4
lesson write-imm "RDMA WRITE WITH IMMEDIATE: one-sided writes the server learns of from its receive CQ" --
lesson_group atomics 2 "remote fetch-and-add and a CAS spin lock: 2 clients at once, counted exactly" --clients 2 --
lesson qp-state-machine "RC without rdma_cm: QPN/PSN/GID over TCP, RESET->INIT->RTR->RTS by hand, proven by a WRITE" --
lesson uc "Unreliable Connected: WRITE and SEND work; unreceived SENDs 'succeed' yet vanish; no READ" --
lesson error-recovery "wrong rkey and RNR put the QP in ERROR (WRs flushed); RESET->INIT->RTR->RTS recovers it" --
lesson rendezvous "large transfers: SEND {addr, rkey, len} → RDMA READ → FIN; then an RDMA WRITE ring with credits" --
lesson completion-events "busy polling vs sleeping on a completion channel: RTT and CPU of both sides (Soft-RoCE: compare rows only)" --
lesson selective-signaling "a completion on every Nth WR only: N > send-queue depth deadlocks (shown, with a time limit); N = depth/2 works" --
lesson_group srq 3 "one shared receive queue serves three clients; its limit event asks for a refill" --clients 3 --
lesson ud "datagrams: no connection; each SEND names an address handle, a QPN and a Q_Key; the receiver counts what arrived" --
lesson memory-windows "type 2 memory windows: remote access to part of a region, with the window's own rkey and rights, until invalidated" --
lesson gpu-write "GPU memory: the registration ladder probed on real verbs (dma-buf, peer memory, staging); here --mem host" -- --mem host
lesson gpu-read "GPU memory, read side: the server's buffer read by the client, the path each side took reported" -- --mem host
lesson rdma-bench "the benchmark: write vs send at 64 B, 4 KiB, 64 KiB; send counted at the receiver (Soft-RoCE numbers)" -- \
    --op write,send -s 64,4K,64K -n 500 --warmup 20 --no-progress
lesson rdma-bench "the benchmark with the server's buffer staged (--path staging: a pinned bounce buffer, as GPU memory without GPUDirect); each record names both sides' path" \
    --path staging -- --op write-imm -s 4K -n 500 --warmup 20 --no-progress

# multicast: two receivers (separate processes, each a "server") join one group; one sender.
multicast_lesson() {
    local dir=$scratch/multicast pids=() rcs=() r
    heading multicast "UD multicast through rdma_cm: two receivers join 239.1.1.1, one sender; each receiver counts its own copies"
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
    finish_lesson multicast "${rcs[@]}"
}
multicast_lesson
else
    lesson efa-rdm "libfabric RDM, the AWS EFA interface: SEND, WRITE, READ to an address-vector peer over tcp;ofi_rxm" --
fi

echo
if [ ${#failed_lessons[@]} -eq 0 ]; then
    if [ "$section" = lab ]; then
        echo "tour: $verified of $shown lessons ran on real verbs (Soft-RoCE) and verified their data"
    else
        echo "tour: $verified of $shown lessons ran on this host through libfabric and verified their data"
    fi
    exit 0
fi
echo "tour: ${#failed_lessons[@]} of $shown lessons failed: ${failed_lessons[*]}"
exit 1
