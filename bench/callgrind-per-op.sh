#!/usr/bin/env bash
# Instructions per operation on the client, rdma-bench against perftest, counted by callgrind
# (repeatable where timings are not): each client runs twice, with N1 and N2 operations, and
# (Ir(N2) - Ir(N1)) / (N2 - N1) is its cost per operation without start-up and teardown.
# Runs in the lab: ./rdmalab lab -- bash bench/callgrind-per-op.sh build/bin
set -euo pipefail
bin=${1:?usage: callgrind-per-op.sh BIN_DIR}
: "${RDMALAB_ADDR:?run it in the lab}"
command -v valgrind >/dev/null || { echo "callgrind-per-op: valgrind is missing (Debian package valgrind)" >&2; exit 1; }
source "$(dirname "$0")/lab-pair.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/callgrind.XXXXXX")
trap 'lab_pair_cleanup; rm -rf "$work"' EXIT
n1=5000
n2=25000

# instructions NAME SERVER... -- CLIENT...: the client's total instruction count (Ir).
instructions() {
    local name=$1
    shift
    local server=() client=()
    while [ "$1" != -- ]; do server+=("$1"); shift; done
    shift
    client=("$@")
    lab_pair "$work/$name" 600 "${server[@]}" -- \
        valgrind --tool=callgrind --callgrind-out-file="$work/$name.out" "${client[@]}" >/dev/null || exit 1
    awk '/^summary:/ {print $2}' "$work/$name.out"
}

declare -A ir
for n in $n1 $n2; do
    ir[pt-write-$n]=$(instructions pt-write-$n ib_write_bw -d rxe0 -x 1 -F -s 64 -t 128 -n $n -- \
        ib_write_bw -d rxe0 -x 1 -F -s 64 -t 128 -n $n "$RDMALAB_ADDR")
    ir[rb-write-$n]=$(instructions rb-write-$n "$bin/rdma-bench" server --accept-timeout 60 -- \
        "$bin/rdma-bench" client "$RDMALAB_ADDR" --no-progress --op write -s 64 -t 128 -Q 100 -n $n --warmup 0)
    ir[pt-send-$n]=$(instructions pt-send-$n ib_send_bw -d rxe0 -x 1 -F -s 64 -t 128 -n $n -- \
        ib_send_bw -d rxe0 -x 1 -F -s 64 -t 128 -n $n "$RDMALAB_ADDR")
    ir[rb-send-$n]=$(instructions rb-send-$n "$bin/rdma-bench" server --accept-timeout 60 -- \
        "$bin/rdma-bench" client "$RDMALAB_ADDR" --no-progress --op send -s 64 -t 128 -Q 100 -n $n --warmup 0)
done
printf '| client, 64 B, window 128, signal 1/100 | perftest Ir/op | rdma-bench Ir/op | ratio |\n| --- | --- | --- | --- |\n'
for op in write send; do
    pt=$(( (ir[pt-$op-$n2] - ir[pt-$op-$n1]) / (n2 - n1) ))
    rb=$(( (ir[rb-$op-$n2] - ir[rb-$op-$n1]) / (n2 - n1) ))
    printf '| %s | %d | %d | %s |\n' "$op" "$pt" "$rb" "$(awk -v a="$rb" -v b="$pt" 'BEGIN {printf "%.2f", a / b}')"
done
