#!/usr/bin/env bash
# The congestion chapter's DCQCN runs, recorded: three lab hosts, --aqm 1:RATE on the star's
# centre, the dcqcn lesson's incast (bench/congestion/dcqcn-incast.sh) without and then with
# DCQCN's reaction point (a model in user space), read from the receiver's link (rdma-wire --flows)
# and the senders' timelines; REPEATS lab boots, so the spread between runs is recorded too.
# Writes, in bench/results/congestion/:
#   dcqcn-RUN.flows.tsv          the first boot: rdma-wire --flows for RUN's three streams
#   dcqcn-RUN-FLOW.timeline.tsv  the first boot: each sender's timeline (--timeline), FLOW 1..3
#   dcqcn.table.md               the first boot, both runs side by side, with the environment
#   dcqcn-repeats.tsv            every boot: fairness, CE share and completion time of both runs
#   dcqcn-first-cnp.md           the first boot: host 3's link from the reaction run's first CE mark
#                                to just after its first CNP, packet by packet
# RUN is none or dcqcn.
#   bench/dcqcn.sh [RATE] [SECONDS] [REPEATS]      (defaults 20mbit, 8, 5)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
rate=${1:-20mbit}
seconds=${2:-8}
repeats=${3:-5}
bin=$repo/build/bin
results=$repo/bench/results/congestion
[ -x "$bin/rdma-wire" ] && [ -x "$bin/dcqcn" ] || { echo "dcqcn: build first (./rdmalab build)" >&2; exit 2; }
[[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "dcqcn: REPEATS must be a positive number, got '$repeats'" >&2; exit 2; }
# The commit the runs are made from, named before this script rewrites its own results (tracked
# files: naming it later would always say "dirty").
made_at=$(git -C "$repo" describe --always --dirty)
mkdir -p "$results"
work=$(mktemp -d "$repo/build/dcqcn.XXXXXX")  # the guests write here: it is in the repository
trap 'rm -rf "$work"' EXIT
declare -A address=([none]=198.51.100.13 [dcqcn]=198.51.100.23)
declare -A title=([none]="no reaction (CNPs counted, not obeyed)" [dcqcn]="DCQCN's reaction point (a model)")

source "$repo/bench/congestion/tables.sh"  # header_value, mean_completion_of, cnps_of, jain_of, ce_share_of
# flows_and_timelines BOOT RUN DIR: RUN's flows table into DIR, and each sender's timeline as
# DIR/RUN-FLOW.timeline.tsv, FLOW numbered as the table's rows (its qpn is the QP the sender's
# packets were for, which the timeline's header names).
flows_and_timelines() {
    local boot=$1 run=$2 dir=$3 flow=0 src qpn timeline
    "$bin/rdma-wire" "$boot/incast.link-3.pcap" --flows --where dscp=26 --where transport=RC \
        --where dst="${address[$run]}" >"$dir/$run.flows.tsv"
    while IFS=$'\t' read -r src _ qpn _; do
        case $src in src | \#*) continue ;; esac
        flow=$((flow + 1))
        for timeline in "$boot/out/$run"/client-*.tsv; do
            [ "$(header_value "$timeline" remote_qp)" = "$qpn" ] && cp "$timeline" "$dir/$run-$flow.timeline.tsv"
        done
        [ -s "$dir/$run-$flow.timeline.tsv" ] || { echo "dcqcn: no timeline for QP $qpn ($run)" >&2; return 1; }
    done <"$dir/$run.flows.tsv"
    [ $flow = 3 ] || { echo "dcqcn: $flow streams to ${address[$run]}, not 3" >&2; return 1; }
}

# The first boot's first CNP, as host 3's link carried it: the reaction's run from its first
# packet marked CE to two packets after the first CNP (a SEND with immediate from host 3), every
# packet to or from host 3's address for the run on the way, times from the run's first packet.
first_cnp_excerpt() {
    local time src dst transport opcode qpn psn ecn start="" marked=0 after=-1
    echo '| ms | from | to | packet | QP | PSN | ECN |'
    echo '|---:|---|---|---|---|---:|---|'
    while IFS=$'\t' read -r time src dst transport opcode qpn psn ecn; do
        [ "$transport" = RC ] || continue
        [ "$src" = "${address[dcqcn]}" ] || [ "$dst" = "${address[dcqcn]}" ] || continue
        [ -n "$start" ] || start=$time
        [ "$ecn" = 3 ] && marked=1
        [ $marked = 1 ] || continue
        if [ "$src" = "${address[dcqcn]}" ] && [ "$opcode" = "SEND Only with Immediate" ] && [ $after -lt 0 ]; then
            after=3
            opcode="$opcode (the CNP)"
        fi
        echo "| $(awk -v t="$time" -v s="$start" 'BEGIN { printf "%.1f", 1000 * (t - s) }') | $src | $dst | $opcode | $qpn | $psn | $(case $ecn in 0) echo Not-ECT ;; 1) echo 'ECT(1)' ;; 2) echo 'ECT(0)' ;; 3) echo '**CE**' ;; esac) |"
        if [ $after -ge 0 ]; then
            after=$((after - 1))
            [ $after -ge 0 ] || break
        fi
    done < <("$bin/rdma-wire" "$1" --print time_s,src,dst,transport,opcode_name,qpn,psn,ecn)
}
for boot in $(seq "$repeats"); do
    dir=$work/$boot
    mkdir -p "$dir"
    "$repo/lab/lab.sh" --hosts 3 --aqm "1:$rate" --timeout 300 --capture "$dir/incast.pcap" -- \
        bash "$repo/bench/congestion/dcqcn-incast.sh" "$bin" "$dir/out" "$seconds" >"$dir/lab.log" 2>&1 ||
        { tail -n 5 "$dir/lab.log" >&2; exit 1; }
    for run in none dcqcn; do flows_and_timelines "$dir" "$run" "$dir"; done
    echo "dcqcn: boot $boot of $repeats done" >&2
done

# The first boot in detail; every boot's summary.
rm -f "$results"/dcqcn-*  # what an earlier recording left must not mix with this one
for run in none dcqcn; do
    cp "$work/1/$run.flows.tsv" "$results/dcqcn-$run.flows.tsv"
    for flow in 1 2 3; do cp "$work/1/$run-$flow.timeline.tsv" "$results/dcqcn-$run-$flow.timeline.tsv"; done
done
{
    echo "# bench/dcqcn.sh $rate $seconds $repeats: one row per lab boot; CE share in percent, completion in ms (mean of the timelines' rows)"
    printf 'boot\tjain_none\tjain_dcqcn\tce_share_none\tce_share_dcqcn\tcompletion_none\tcompletion_dcqcn\n'
    for boot in $(seq "$repeats"); do
        dir=$work/$boot
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$boot" "$(jain_of "$dir/none.flows.tsv")" "$(jain_of "$dir/dcqcn.flows.tsv")" \
            "$(ce_share_of "$dir/none.flows.tsv")" "$(ce_share_of "$dir/dcqcn.flows.tsv")" \
            "$(mean_completion_of "$dir"/none-*.timeline.tsv)" "$(mean_completion_of "$dir"/dcqcn-*.timeline.tsv)"
    done
} >"$results/dcqcn-repeats.tsv"
first_cnp_excerpt "$work/1/incast.link-3.pcap" >"$results/dcqcn-first-cnp.md"
# The range over the boots of one column of dcqcn-repeats.tsv: "LOW–HIGH".
range_of() {
    awk -F '\t' -v column="$1" '$1 ~ /^#/ || $1 == "boot" { next }
        { v = $column + 0; if (n++ == 0 || v < low) low = v; if (n == 1 || v > high) high = v }
        END { printf "%s–%s", low, high }' "$results/dcqcn-repeats.tsv"
}
{
    echo "| run | flow | goodput (Mbit/s) | packets | CE | CE share | sent again | CNPs | completion, mean of 50 ms rows (ms) |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
    for run in none dcqcn; do
        flow=0
        while IFS=$'\t' read -r src dst qpn packets _bytes again _ect ce _acks _naks _rnr _first _last goodput; do
            case $src in src | \#*) continue ;; esac
            flow=$((flow + 1))
            timeline=$results/dcqcn-$run-$flow.timeline.tsv
            completion=$(mean_completion_of "$timeline")
            cnps=$(cnps_of "$timeline")
            echo "| ${title[$run]} | $src → $dst QP $qpn | $goodput | $packets | $ce | $((ce * 100 / packets)) % | $again | $cnps | $completion |"
        done <"$results/dcqcn-$run.flows.tsv"
    done
    echo
    for run in none dcqcn; do
        echo "Jain's fairness, ${title[$run]}: **$(jain_of "$results/dcqcn-$run.flows.tsv")**."
    done
    echo
    echo "Over all $repeats boots (\`dcqcn-repeats.tsv\`), without → with the reaction: Jain's fairness" \
        "$(range_of 2) → $(range_of 3); share of packets marked CE $(range_of 4) % → $(range_of 5) %;" \
        "completion time $(range_of 6) ms → $(range_of 7) ms."
    echo
    echo "Recorded $(date -u '+%Y-%m-%d') by \`bench/dcqcn.sh $rate $seconds $repeats\` at $made_at:" \
        "three lab hosts (Soft-RoCE, rxe, in QEMU guests under TCG emulation on a $(nproc)-core host," \
        "kernel $(grep -o 'kernel [^ ,)]*' "$work/1/lab.log" | head -n 1 | cut -d' ' -f2)), host 1's ports held to $rate with RED" \
        "marking DSCP 26 (lab.sh --aqm 1:$rate); per flow $seconds s of 4 KiB RDMA WRITEs, eight in flight, class 106," \
        "made by the dcqcn lesson. The reaction is a user-space model of DCQCN, its parameters scaled to the lab:" \
        "$(header_value "$results/dcqcn-dcqcn-1.timeline.tsv" model). The table is the first boot; flows in the order" \
        "the receiver's link saw them start; each sender's timeline is \`dcqcn-RUN-FLOW.timeline.tsv\`."
} >"$results/dcqcn.table.md"
cat "$results/dcqcn.table.md"
