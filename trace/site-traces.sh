#!/usr/bin/env bash
# The recorded traces the site's chapters play (docs/public/traces/*.json), each regenerated
# from a fresh run in the lab by ./rdmalab trace (two lab guests each, three for the allreduce;
# one run at a time); each file carries its environment in "meta". The arguments keep each run
# to a few dozen packets.
#   trace/site-traces.sh [BUILD_BIN_DIR] [NAME...]    (names: only those traces, e.g. atomics)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$repo/build/bin}
[ $# -eq 0 ] || shift
wanted=("$@")
out=$repo/docs/public/traces
mkdir -p "$out"
known=(rdma-write rdma-read send-recv write-imm atomics selective-signaling rendezvous
    credit-ring loss-and-retransmission link-failure ring-allreduce)
for name in "${wanted[@]}"; do
    [[ " ${known[*]} " == *" $name "* ]] || { echo "site-traces: no trace named '$name' (${known[*]})" >&2; exit 2; }
done
# record NAME [FAULTS...] LESSON ARGS...: one trace into $out/NAME.json, if NAME is wanted.
record() {
    local name=$1
    shift
    [ ${#wanted[@]} -eq 0 ] || [[ " ${wanted[*]} " == *" $name "* ]] || return 0
    local start=$SECONDS
    "$repo/trace/record.sh" --bin "$bin" -o "$out/$name.json" "$@"
    echo "site-traces: $name.json in $((SECONDS - start)) s"
}
# rdma-write, 4 KiB: at the lab's path MTU of 1024 bytes, a First, two Middle and a Last packet.
record rdma-write rdma-write -s 4K -- -s 4K
# rdma-read, 4 KiB: one READ Request; the server's NIC answers with First/Middle/Last responses.
record rdma-read rdma-read -s 4K -- -s 4K
# send-recv, 3 messages: each SEND consumes one of the receives the server posted first.
record send-recv send-recv -n 3 -- -n 3
# write-imm, 2 parts of 2 KiB: each WRITE WITH IMMEDIATE ends in a receive completion.
record write-imm write-imm -n 2 -s 2K -- -n 2 -s 2K
# atomics, one client, 2 iterations: fetch-and-adds, then CAS lock / READ / WRITE / CAS unlock.
record atomics atomics --clients 1 -n 2 -- -n 2
# selective-signaling, 8 WRITEs of 64 bytes signaled every 4th: 6 WRs leave no completion.
record selective-signaling selective-signaling -- -n 8 --signal-every 4
# rendezvous, 4 KiB pulled with RDMA READ, then FIN.
record rendezvous rendezvous -s 4K -- -s 4K
# credit-ring, 4 messages through a ring of 2 slots: credits written back after each one.
record credit-ring credit-ring --slots 2 -- -n 4
# loss-and-retransmission, 20% loss on the client's egress: 4 WRITEs of 4 KiB (16 packets), NAKs
# and go-back-N resends; then 10 UD datagrams, some lost for good.
record loss-and-retransmission --loss 2:20% \
    loss-and-retransmission -n 4 -s 4K --datagrams 10 -- -n 4 -s 4K --datagrams 10
# link-failure, 1 KiB rounds: the server's link goes down (for 3 s) once the client writes; the
# WRITE is resent retry_cnt times and fails (IBV_WC_RETRY_EXC_ERR); later RNR NAKs and
# IBV_WC_RNR_RETRY_EXC_ERR; the QP recovered both times.
record link-failure --link-down 1@signal+3 --signal-on 'until the link dies' \
    link-failure -s 1K -- -s 1K
# ring-allreduce, one allreduce of 3 KiB per rank over three hosts: 1 KiB chunks, so each of the
# 4 steps is one WRITE WITH IMMEDIATE per link (one packet at the path MTU), and 2 slots per link
# returned by credits (SENDs with immediate).
record ring-allreduce --ranks 3 ring-allreduce -s 3K --segment 1K --slots 2 -n 1
