#!/usr/bin/env bash
# Instructions per operation on the client, rdma-bench against perftest, counted by callgrind
# (repeatable where timings are not): each client runs twice, with N1 and N2 operations, and
# (Ir(N2) - Ir(N1)) / (N2 - N1) is its cost per operation without start-up and teardown.
# Then the same difference per function (self cost, at least 1 instruction per operation either
# way): where each tool's instructions go, busy polling included. A negative entry is a function
# that ran longer in the shorter run (a spin before the timed loop, whose length is timing).
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
    for op in write send; do  # the same clients posting through the extended API (--api ex)
        ir[rbx-$op-$n]=$(instructions rbx-$op-$n "$bin/rdma-bench" server --accept-timeout 60 -- \
            "$bin/rdma-bench" client "$RDMALAB_ADDR" --no-progress --api ex --op $op -s 64 -t 128 -Q 100 \
            -n $n --warmup 0)
    done
done
printf '| client, 64 B, window 128, signal 1/100 | perftest Ir/op | rdma-bench Ir/op | ratio | rdma-bench --api ex Ir/op | ratio |\n| --- | --- | --- | --- | --- | --- |\n'
for op in write send; do
    pt=$(( (ir[pt-$op-$n2] - ir[pt-$op-$n1]) / (n2 - n1) ))
    rb=$(( (ir[rb-$op-$n2] - ir[rb-$op-$n1]) / (n2 - n1) ))
    rbx=$(( (ir[rbx-$op-$n2] - ir[rbx-$op-$n1]) / (n2 - n1) ))
    printf '| %s | %d | %d | %s | %d | %s |\n' "$op" "$pt" "$rb" "$(awk -v a="$rb" -v b="$pt" 'BEGIN {printf "%.2f", a / b}')" \
        "$rbx" "$(awk -v a="$rbx" -v b="$pt" 'BEGIN {printf "%.2f", a / b}')"
done

# per_function RUN: "Ir<TAB>function (object)" lines (self cost, summed over source files).
per_function() {
    callgrind_annotate --threshold=100 --inclusive=no --show-percs=no --auto=no "$work/$1.out" |
        awk '$1 ~ /^[0-9,]+$/ && $2 ~ /:/ {
                 ir = $1; gsub(",", "", ir); $1 = ""; sub(/^ /, "")
                 object = ""
                 if (match($0, / \[[^]]*\]$/)) {
                     object = substr($0, RSTART + 2, RLENGTH - 3); sub(/.*\//, "", object)
                     $0 = substr($0, 1, RSTART - 1)
                 }
                 sub(/^[^:]*:/, "")
                 if ($0 ~ /^0x/ && object != "") $0 = $0 " in " object  # unnamed: per object
                 sum[$0] += ir
                 if (object != "") where[$0] = " (" object ")"
             }
             END { for (f in sum) print sum[f] "\t" f where[f] }'
}
for run in pt-write rb-write rbx-write pt-send rb-send rbx-send; do
    echo
    echo "$run: instructions per operation by function (self), |x| ≥ 1"
    per_function "$run-$n1" >"$work/$run-$n1.functions"
    per_function "$run-$n2" >"$work/$run-$n2.functions"
    awk -F '\t' -v d=$((n2 - n1)) 'FNR == NR { before[$2] = $1; next }
        { per = ($1 - before[$2]) / d; if (per >= 1 || per <= -1) printf "%8.1f  %s\n", per, $2 }' \
        "$work/$run-$n1.functions" "$work/$run-$n2.functions" | sort -rn
done
