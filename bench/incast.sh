#!/usr/bin/env bash
# The congestion chapter's incast, recorded: three lab hosts, --aqm 1:RATE on the star's centre,
# three rdma-bench WRITE flows of class 106 into host 3 (bench/congestion/rdma-bench-incast.sh), then the receiver
# link's capture summed per flow (rdma-wire --flows). Writes, in bench/results/congestion/:
#   incast-red.tsv        rdma-wire --flows' table, as it printed it
#   incast-red.table.md   the same as a Markdown table with the environment (docs/congestion.md)
#   bench/incast.sh [RATE] [SECONDS]      (defaults 20mbit, 4)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
rate=${1:-20mbit}
seconds=${2:-4}
bin=$repo/build/bin
results=$repo/bench/results/congestion
[ -x "$bin/rdma-wire" ] && [ -x "$bin/rdma-bench" ] || { echo "incast: build first (./rdmalab build)" >&2; exit 2; }
mkdir -p "$results"
work=$(mktemp -d "$repo/build/incast.XXXXXX")  # the guests write here: it is in the repository
trap 'rm -rf "$work"' EXIT
"$repo/lab/lab.sh" --hosts 3 --aqm "1:$rate" --timeout 300 --capture "$work/incast.pcap" -- \
    bash "$repo/bench/congestion/rdma-bench-incast.sh" "$bin" "$work/out" "$seconds" >"$work/lab.log" 2>&1 ||
    { tail -n 5 "$work/lab.log" >&2; exit 1; }
"$bin/rdma-wire" "$work/incast.link-3.pcap" --flows --where dscp=26 --where dst=198.51.100.3 >"$results/incast-red.tsv"
# The NAKs host 3 sent back, per sender (the streams from host 3; a sender's QPs summed).
declare -A naks=()
while IFS=$'\t' read -r src dst _qpn _packets _bytes _again _ect _ce _acks nak _rest; do
    case $src in src | \#*) continue ;; esac
    naks[$dst]=$((${naks[$dst]:-0} + nak))
done < <("$bin/rdma-wire" "$work/incast.link-3.pcap" --flows --where dscp=26 --where src=198.51.100.3)
{
    echo "| flow | packets | data bytes | sent again | ECT | CE | CE share | NAKs to its host | goodput (Mbit/s) |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    while IFS=$'\t' read -r src dst qpn packets bytes again ect ce _acks _naks _rnr _first _last goodput; do
        case $src in src | \#*) continue ;; esac
        echo "| $src → $dst QP $qpn | $packets | $bytes | $again | $ect | $ce | $((ce * 100 / packets)) % | ${naks[$src]:-0} | $goodput |"
    done <"$results/incast-red.tsv"
    while IFS=$'\t' read -r tag value what; do
        [ "$tag" = "# jain_fairness" ] && echo && echo "Jain's fairness over the $what: **$value**."
    done <"$results/incast-red.tsv"
    echo
    echo "Recorded $(date -u '+%Y-%m-%d') by \`bench/incast.sh $rate $seconds\` at $(git -C "$repo" rev-parse --short HEAD):" \
        "three lab hosts (Soft-RoCE, rxe, in QEMU guests under TCG emulation on a $(nproc)-core host," \
        "kernel $(grep -o 'kernel [^ ,)]*' "$work/lab.log" | head -n 1 | cut -d' ' -f2)), host 1's ports held to $rate with RED" \
        "marking DSCP 26 (lab.sh --aqm 1:$rate), $seconds s of 4 KiB RDMA WRITEs, eight in flight, per flow;" \
        "no congestion control reacting to the marks. Read from host 3's link (\`rdma-wire --flows\`)."
} >"$results/incast-red.table.md"
cat "$results/incast-red.table.md"
