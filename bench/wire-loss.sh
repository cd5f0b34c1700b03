#!/usr/bin/env bash
# Goodput against packet loss, measured across the lab's wire: rdma-bench from host 2 to host 1
# with netem dropping P% of host 2's egress, for P = 0, 0.1, 1, 5, 10. RC WRITE at 1 KiB…64 KiB,
# 16 outstanding, 2 s each (go-back-N: every loss resends from the lost PSN), and UD SEND of 1 KiB with the receiver
# counting what never arrived. rxe's port counters on both hosts are read before and after each
# rate. Records (every one stating its fault), counters, the figure and a table go to OUT_DIR.
#   bench/wire-loss.sh [--report-only] [OUT_DIR]   (./rdmalab bench-wire-loss; default bench/results/wire)
#     --report-only   no measurement: the figure and the table again, from OUT_DIR's records
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=$repo/build/bin
report_only=0
[ "${1:-}" = --report-only ] && { report_only=1; shift; }
out=${1:-$repo/bench/results/wire}
mkdir -p "$out"
out=$(cd "$out" && pwd)
[[ $out == "$repo"/* ]] || { echo "wire-loss: OUT_DIR must lie inside the repository (the lab's hosts write there)" >&2; exit 2; }
rates=(0 0.1 1 5 10)
work=$(mktemp -d "$repo/build/wire-loss.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Inside the guests: both hosts walk the rates in step; host 1 serves, host 2 sets its netem
# loss and runs the client. Each step's folder is the rendezvous.
cat >"$work/guest.sh" <<'GUEST'
set -uo pipefail
work=$1 bin=$2 out=$3
shift 3
export RDMALAB_BIN=$bin RDMALAB_ADDR=$RDMALAB_ADDR_1
pair_limit_s=300   # at 10 % loss a phase drains slowly
source lab/pair.sh || exit 1
counters() { for f in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do echo "${f##*/} $(cat "$f")"; done; }
failed=0
for rate in "$@"; do
    if [ "$RDMALAB_HOST" = 2 ]; then
        tc qdisc replace dev eth0 root netem loss "$rate%" || exit 1
        export RDMALAB_FAULTS="host 2 egress loss $rate%"
    fi
    counters >"$work/counters-$rate-host$RDMALAB_HOST-before"
    wire_pair "$work/rc-$rate" rdma-bench --timeout 60 -- --op write -c RC -s 1K,4K,16K,64K -t 16 -D 2 --warmup 5 --no-progress \
        --timeout 60 --json "$out/rc-loss-$rate.json"
    wire_pair "$work/ud-$rate" rdma-bench --timeout 60 -- --op send -c UD -s 1K -n 2000 --warmup 5 --no-progress \
        --timeout 60 --json "$out/ud-loss-$rate.json"
    counters >"$work/counters-$rate-host$RDMALAB_HOST-after"
    for step in rc ud; do
        rc_file=$work/$step-$rate/$([ "$RDMALAB_HOST" = 1 ] && echo server || echo client).rc
        [ "$(cat "$rc_file" 2>/dev/null)" = 0 ] || { echo "$step at $rate%: failed"; cat "$work/$step-$rate"/*.out; failed=1; }
    done
done
exit $failed
GUEST

if [ "$report_only" = 0 ]; then
"$repo/lab/lab.sh" --hosts 2 --timeout 900 -- bash "$work/guest.sh" "$work" "$bin" "$out" "${rates[@]}"

# The counters: after minus before, a row per rate, host and counter under a header naming the
# columns (read back by those names below, never by position).
{
    printf 'loss_percent\thost\tcounter\tchange\n'
    for rate in "${rates[@]}"; do
        for host in 1 2; do
            join -j 1 <(sort "$work/counters-$rate-host$host-before") <(sort "$work/counters-$rate-host$host-after") |
                awk -v rate="$rate" -v host="$host" '{ printf "%s\t%s\t%s\t%d\n", rate, host, $1, $3 - $2 }'
        done
    done
} >"$out/rxe-counters.tsv"
fi

records=()
for rate in "${rates[@]}"; do records+=("$out/rc-loss-$rate.json"); done
"$bin/rdma-bench" plot "${records[@]}" --series environment.lab_faults --y gib -o "$out/rc-write-goodput-vs-loss.svg" \
    --title "RC WRITE goodput under loss (go-back-N), rdma-bench across the lab's wire"

# A table: goodput per size and rate, UD delivery, and what the counters saw.
{
    echo "# Goodput against loss across the lab's wire"
    echo
    echo "Soft-RoCE (rxe) in two QEMU guests on one 2-core machine: software, not a NIC; only the"
    echo "ratios within this run mean anything. Recorded by \`bench/wire-loss.sh\` on $(date -u +%Y-%m-%d) ($(uname -r) host, kernel in the guests from /boot)."
    echo "Loss is netem on host 2's egress (the data direction); ACKs and NAKs from host 1 are not dropped."
    echo
    echo "rxe's port counters (\`/sys/class/infiniband/rxe0/ports/1/hw_counters\`, after minus before each rate's runs):"
    echo "on host 1, the responder, \`out_of_seq_request\` counts packets that arrived past a gap (each answered by a"
    echo "NAK or dropped while one is outstanding) and \`duplicate_request\` packets it had already executed; on host 2,"
    echo "the requester, \`rcvd_seq_err\` counts the NAKs it received and \`completer_retry_err\` its retransmission rounds."
    echo "Each rate's runs last a fixed time, so \`sent_pkts\` falls as goodput falls."
    echo
    echo "| loss | RC WRITE 1 KiB GiB/s | 4 KiB | 16 KiB | 64 KiB | 4 KiB vs no loss | UD 1 KiB: received of sent | host 1 out_of_seq_request | host 1 duplicate_request | host 2 rcvd_seq_err | host 2 completer_retry_err | host 2 sent_pkts |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    base4k=""
    for rate in "${rates[@]}"; do
        # Read back through rdma-bench's own reader: RC WRITE's goodput per size, UD's counts.
        rc_records=$out/rc-loss-$rate.json
        mapfile -t sizes < <("$bin/rdma-bench" records "$rc_records" --get 'records/*/config/size')
        mapfile -t rates_gib < <("$bin/rdma-bench" records "$rc_records" --get 'records/*/result/gib_per_s')
        declare -A gib=()
        for i in "${!sizes[@]}"; do gib[${sizes[$i]}]=${rates_gib[$i]}; done
        read -r g1 g4 g16 g64 < <(printf '%.4f %.4f %.4f %.4f\n' "${gib[1024]:-0}" "${gib[4096]:-0}" "${gib[16384]:-0}" "${gib[65536]:-0}")
        unset gib
        [ -n "$base4k" ] || base4k=$g4
        mapfile -t ud_counts < <("$bin/rdma-bench" records "$out/ud-loss-$rate.json" \
            --get records/0/result/receiver/messages --get records/0/result/receiver/lost)
        ud="${ud_counts[0]} of $((ud_counts[0] + ud_counts[1]))"
        counter() {  # HOST COUNTER: its change at this rate, the columns found by their names
            awk -F'\t' -v rate="$rate" -v host="$1" -v name="$2" '
                NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
                $at["loss_percent"] == rate && $at["host"] == host && $at["counter"] == name { print $at["change"] }' \
                "$out/rxe-counters.tsv"
        }
        echo "| $rate % | $g1 | $g4 | $g16 | $g64 | $(awk -v a="$g4" -v b="$base4k" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }') | $ud | $(counter 1 out_of_seq_request) | $(counter 1 duplicate_request) | $(counter 2 rcvd_seq_err) | $(counter 2 completer_retry_err) | $(counter 2 sent_pkts) |"
    done
} >"$out/README.md"
cat "$out/README.md"
