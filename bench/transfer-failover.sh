#!/usr/bin/env bash
# The transfer engine's failover, again and again (issue 43): one boot of two hosts on two rails,
# each held to 40 Mbit/s on host 2's way out; RUNS runs of transfer-bench writing 96 batches of 8
# x 64 KiB (48 MiB) from host 2 to host 1 with every byte checked, and in each, at a seeded moment
# 0.1 to 0.6 s after the batches start, host 1 takes its rail 2 down (host 2's link stays up: its QP
# sends into silence until its retries run out), bringing it back between runs. Then, for the
# bandwidth, three runs on rail 1 alone and three on both rails, nothing killed.
# Per run: did every batch complete and verify, how many slices went again, how long the engine
# took to notice the dead rail (from its last completion there), the slowest batch. Each run's
# record (transfer-bench --json, records/transfer.hpp) is kept in OUT_DIR/records/NAME.json, and
# the bandwidth runs are drawn by `rdma-bench plot` into OUT_DIR/bandwidth.svg.
#   bench/transfer-failover.sh [RUNS] [OUT_DIR]   (default 50, bench/results/transfer)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=$repo/build/bin
die() { echo "transfer-failover: $*" >&2; exit 2; }
runs=${1:-50}
[[ $runs =~ ^[1-9][0-9]{0,3}$ ]] || die "RUNS must be a number of runs (1-9999), got '$runs'"
out=${2:-$repo/bench/results/transfer}
mkdir -p "$out"
out=$(cd "$out" && pwd)
[[ $out == "$repo"/* ]] || die "OUT_DIR must lie inside the repository (the lab's hosts write there)"
[ -x "$bin/transfer-bench" ] || die "$bin/transfer-bench is missing: build first (./rdmalab build)"
[ -x "$bin/rdma-bench" ] || die "$bin/rdma-bench is missing (it draws the figure): build first (./rdmalab build)"
work=$(mktemp -d "$repo/build/transfer-failover.XXXXXX")
[ -n "${RDMALAB_KEEP_OUTPUT:-}" ] || trap 'rm -rf "$work"' EXIT

cat >"$work/guest.sh" <<'GUEST'
set -uo pipefail
work=$1 bin=$2 runs=$3
h=$RDMALAB_HOST
devices=$RDMALAB_RAIL_DEV_1,$RDMALAB_RAIL_DEV_2
source "${bin%/build/bin}/lab/guest-wait.sh"  # wait_for, listening
# step NAME DEVICES KILL(0/1) SEED: one run, both hosts in step through files in $work/NAME.
step() {
    local dir=$work/$1 devs=$2 kill=$3 seed=$4
    mkdir -p "$dir"
    if [ "$h" = 1 ]; then
        timeout -k 2 120 "$bin/transfer-bench" server --devices "$devs" --timeout 60 >"$dir/server.out" 2>&1 &
        local server=$!
        listening 18515 && touch "$dir/listening"
        if [ "$kill" = 1 ]; then
            # Down on host 2's word; up again once the run is over, and ACTIVE before the next.
            while kill -0 $server 2>/dev/null && [ ! -e "$dir/kill" ]; do sleep 0.02; done
            [ -e "$dir/kill" ] && ip link set "$RDMALAB_RAIL_NETDEV_2" down
        fi
        wait $server
        echo $? >"$dir/server.rc"
        ip link set "$RDMALAB_RAIL_NETDEV_2" up
        for ((tick = 0; tick < 200; tick++)); do
            rdma link show "$RDMALAB_RAIL_DEV_2/1" | grep -q 'state ACTIVE' && break
            sleep 0.05
        done
    else
        wait_for "$dir/listening" 60 || return 1
        timeout -k 2 120 "$bin/transfer-bench" client "$RDMALAB_ADDR_1" --devices "$devs" -s 64K \
            --batch 8 --batches 96 --check --retry 3 --ack-timeout 14 --timeout 60 --json "$dir/record.json" \
            >"$dir/client.out" 2>&1 &
        local client=$!
        if [ "$kill" = 1 ]; then
            for ((tick = 0; tick < 600; tick++)); do
                grep -q 'the batches start' "$dir/client.out" 2>/dev/null && break
                kill -0 $client 2>/dev/null || break
                sleep 0.02
            done
            local started delay_ms
            started=$(date +%s%N)
            delay_ms=$(awk -v s="$seed" 'BEGIN { srand(s); printf "%d", 100 + rand() * 500 }')
            sleep "$(awk -v ms="$delay_ms" 'BEGIN { printf "%.3f", ms / 1000 }')"
            touch "$dir/kill"
            echo "$delay_ms $((($(date +%s%N) - started) / 1000000))" >"$dir/killed"
        fi
        wait $client
        echo $? >"$dir/client.rc"
    fi
    touch "$dir/left-$h"
    wait_for "$dir/left-1" 180 && wait_for "$dir/left-2" 180
}
for ((run = 1; run <= runs; run++)); do step "kill-$run" "$devices" 1 "$run" || exit 1; done
for run in 1 2 3; do
    step "one-rail-$run" "$RDMALAB_RAIL_DEV_1" 0 0 || exit 1
    step "two-rails-$run" "$devices" 0 0 || exit 1
done
exit 0
GUEST

started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
commit="$(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" diff --quiet HEAD -- . ':!bench/results' || echo -dirty)"
lab_rc=0
"$repo/lab/lab.sh" --hosts 2 --rails 2 --timeout 3000 --rate 2:40mbit --rate 2.2:40mbit \
    --capture "$work/wire.pcap" -- \
    bash "$work/guest.sh" "$work" "$bin" "$runs" >"$work/lab.out" 2>&1 || lab_rc=$?
finished=$(date -u +%Y-%m-%dT%H:%M:%SZ)
[ "$lab_rc" = 0 ] || { echo "transfer-failover: the boot ended with exit $lab_rc:" >&2; tail -n 8 "$work/lab.out" >&2; }
accel=$(grep -o -m 1 'TCG emulation\|KVM' "$work/lab.out" || echo "unknown acceleration")

# Each run's record, under the name of its run; a run that failed wrote none.
rm -rf "$out/records"
mkdir -p "$out/records"
for d in "$work"/kill-* "$work"/one-rail-* "$work"/two-rails-*; do
    if [ -f "$d/record.json" ]; then cp "$d/record.json" "$out/records/$(basename "$d").json"; fi
done
record_field() { grep '^record ' "$1" 2>/dev/null | tail -n 1 | tr ' ' '\n' | sed -n "s/^$2=//p"; }
{
    printf 'run\tseed\tkill_after_ms\tcompleted\tverified\treposted\tdetect_ms\tslowest_batch_ms\tgbit\n'
    for ((run = 1; run <= runs; run++)); do
        d=$work/kill-$run
        completed=0
        [ "$(cat "$d/client.rc" 2>/dev/null)" = 0 ] && [ "$(cat "$d/server.rc" 2>/dev/null)" = 0 ] && completed=1
        printf '%d\t%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n' "$run" "$run" "$(cut -d' ' -f1 "$d/killed" 2>/dev/null || echo -)" \
            "$completed" "$(record_field "$d/client.out" verified)" "$(record_field "$d/client.out" reposted)" \
            "$(record_field "$d/client.out" rail2_detect_ms)" "$(record_field "$d/client.out" p999_ms)" \
            "$(record_field "$d/client.out" gbit)"
    done
} >"$out/failover.tsv"
{
    printf 'run\trails\tcompleted\tgbit\trail1_bytes\trail2_bytes\n'
    for kind in one-rail two-rails; do
        for run in 1 2 3; do
            d=$work/$kind-$run
            printf '%s-%d\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$run" "$(record_field "$d/client.out" rails)" \
                "$([ "$(cat "$d/client.rc" 2>/dev/null)" = 0 ] && echo 1 || echo 0)" "$(record_field "$d/client.out" gbit)" \
                "$(record_field "$d/client.out" rail1_bytes)" "$(record_field "$d/client.out" rail2_bytes)"
        done
    done
} >"$out/bandwidth.tsv"
# The first run's failover as the two rails' captures show it (failover-capture.txt, for the
# chapter): the runs are told apart by their TCP exchanges on rail 1 (a SYN-ACK each); in the
# first, rail 2's last packets — host 1's last acknowledgement, then host 2's resends into
# silence — and on rail 1 the first WRITE to an address rail 2 had carried, each packet's time from
# that last acknowledgement.
capture_excerpt() {
    local wire=$bin/rdma-wire from to last
    from=$(tshark -r "$work/wire.pcap" -Y 'tcp.flags.syn==1 && tcp.flags.ack==1' -T fields -e frame.time_epoch 2>/dev/null | sed -n 1p)
    to=$(tshark -r "$work/wire.pcap" -Y 'tcp.flags.syn==1 && tcp.flags.ack==1' -T fields -e frame.time_epoch 2>/dev/null | sed -n 2p)
    [ -n "$from" ] && [ -n "$to" ] || { echo "no excerpt: the capture holds fewer than two runs"; return; }
    "$wire" "$work/wire.rail-2.pcap" --print time_epoch,src,dst,opcode_name,psn,reth.va >"$work/rail-2.tsv" 2>/dev/null
    "$wire" "$work/wire.pcap" --print time_epoch,src,dst,opcode_name,psn,reth.va >"$work/rail-1.tsv" 2>/dev/null
    last=$(awk -F'\t' -v a="$from" -v b="$to" '$1 >= a && $1 < b && $2 == "203.0.113.1" { t = $1 } END { print t }' "$work/rail-2.tsv")
    [ -n "$last" ] || { echo "no excerpt: host 1 sent nothing on rail 2 in the first run"; return; }
    echo "The first of the $runs runs, from the two rails' captures; times from host 1's last packet on rail 2."
    echo "Rail 2: host 1's last acknowledgement, then host 2 sending into silence (the same PSNs again):"
    # Consecutive packets of one direction and opcode on one line: how many, and their PSNs.
    awk -F'\t' -v a="$from" -v last="$last" '
        function flush() { if (n) printf "  %+8.1f ms  %-12s -> %-12s  %-24s x%-4d PSN %s%s\n", t0, s0, d0, o0, n, p0, (n > 1 ? "-" p1 : "") }
        $1 >= a && $1 >= last - 0.02 && $1 < last + 1.5 {
            key = $2 "|" $3 "|" $4
            if (key != prev) { flush(); n = 0; t0 = ($1 - last) * 1000; s0 = $2; d0 = $3; o0 = $4; p0 = $5 }
            n++; p1 = $5; prev = key
        }
        END { flush() }' "$work/rail-2.tsv" | head -n 24
    echo "Rail 1: the first WRITE to an address rail 2 had carried in this run, after rail 2 fell silent:"
    awk -F'\t' -v a="$from" -v b="$to" '$1 >= a && $1 < b && $6 != "" { print $6 }' "$work/rail-2.tsv" | sort -u >"$work/rail-2.va"
    awk -F'\t' -v last="$last" -v b="$to" 'NR == FNR { va[$1] = 1; next }
        $1 > last && $1 < b && ($6 in va) {
            printf "  %+8.1f ms  %-12s -> %-12s  %-28s PSN %s  VA %s\n", ($1 - last) * 1000, $2, $3, $4, $5, $6; exit }' \
        "$work/rail-2.va" "$work/rail-1.tsv"
}
capture_excerpt >"$out/failover-capture.txt"

# One rail against two, from the bandwidth runs' records: a line of their medians, a band from the
# lowest to the highest.
bandwidth_records=()
for kind in one-rail two-rails; do
    for run in 1 2 3; do
        if [ -f "$out/records/$kind-$run.json" ]; then bandwidth_records+=("$out/records/$kind-$run.json"); fi
    done
done
figure="no figure: no bandwidth run wrote its record"
if [ "${#bandwidth_records[@]}" -gt 0 ]; then
    if "$bin/rdma-bench" plot "${bandwidth_records[@]}" --y gbit --x rails --series op \
        --title "Transfer engine: 8 x 64 KiB WRITE batches, one rail and two (40 Mbit/s each)" \
        -o "$out/bandwidth.svg" >"$work/plot.out" 2>&1; then
        figure="bandwidth.svg: the same, drawn by \`rdma-bench plot --y gbit --x rails\` from ${#bandwidth_records[@]} records"
    else
        figure="no figure: rdma-bench plot failed: $(tail -n 1 "$work/plot.out")"
    fi
fi
{
    echo "# The transfer engine's failover, measured"
    echo
    echo "Soft-RoCE (rxe) in two QEMU guests ($accel) on one 2-core machine, two rails, host 2's egress"
    echo "held to 40 Mbit/s on each: a model, not NICs. Recorded by \`bench/transfer-failover.sh $runs\` from"
    echo "$started to $finished, commit $commit, host kernel $(uname -r), guest kernel $(ls /boot/vmlinuz-* | sort -V | tail -n 1 | sed 's|/boot/vmlinuz-||')."
    echo
    echo "## $runs runs, rail 2 killed in each (failover.tsv)"
    echo
    awk -F'\t' 'NR > 1 { n++; done += $4; ver += ($5 == 1); rep += $6; if ($7 != "") { d[++m] = $7 } }
        END {
            printf "- completed: %d of %d; every byte verified in %d\n", done, n, ver
            printf "- the kill landed while batches were in flight (the engine saw rail 2 fail) in %d runs (in any other, the transfer had ended first)\n", m
            printf "- slices posted again on rail 1: %d in all\n", rep
            if (m) {
                for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (d[j] < d[i]) { t = d[i]; d[i] = d[j]; d[j] = t }
                printf "- rail 2 noticed dead after its last completion: median %.1f ms, lowest %.1f, highest %.1f (%d runs; the QPs'\'' bound: (3 + 1) x 4.096 us x 2^14 = 268.4 ms)\n", d[int((m + 1) / 2)], d[1], d[m], m
            }
        }' "$out/failover.tsv"
    echo
    echo "## Bandwidth, one rail against two (bandwidth.tsv)"
    echo
    awk -F'\t' 'NR > 1 && $3 == 1 { k = ($2 == 1 ? "one" : "two"); s[k] += $4; n[k]++ }
        END { if (n["one"] && n["two"]) printf "- one rail: %.4f Gbit/s, two rails: %.4f Gbit/s (mean of %d runs each): %.2f x\n", s["one"] / n["one"], s["two"] / n["two"], n["one"], (s["two"] / n["two"]) / (s["one"] / n["one"]) }' "$out/bandwidth.tsv"
    echo "- $figure"
    echo
    echo "Each run's record: records/NAME.json (transfer-bench --json; read with \`rdma-bench records\`)."
} >"$out/README.md"
cat "$out/README.md"
[ "$lab_rc" = 0 ]
