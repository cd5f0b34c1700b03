#!/usr/bin/env bash
# Many paths, measured on the lab's two-path fabric (lab/paths.sh: host 2 sends to host 3
# through host 1 over paths A and B, VLANs 10 and 20, 20 Mbit/s each, 1 and 3 ms). Three parts,
# all in one boot by default:
#   goodput     one flow of 2 MiB in 1 KiB RDMA WRITEs with 64 in flight, on K = 1, 2, 4 and 8 QPs
#               (64 / K each: UCCL's idea, one flow split over QPs that ECMP hashes each to a
#               path of its own), five runs per K, fresh QPs every run; RC on one QP sprayed
#               packet by packet over both paths; the reliable unordered layer
#               (unordered-delivery) under ECMP and sprayed
#   collisions  100 sets of 8 fresh QPs (rdma-bench runs of 8 QPs: every run's QP numbers are new,
#               so are their UDP source ports) hashed onto the two paths: QPs per path against
#               the binomial expectation
#   elephants   20 runs of 2 QPs writing 1 MiB each (32 in flight each): goodput when ECMP put
#               both on one path against when it split them
# Every run opens one TCP connection from host 2 to host 3 (the QPs' out-of-band exchange): in
# the capture of host 1's link to host 3 its SYN starts the run's packets, and the VLAN of each
# packet says which path it took. A run that fails ends the boot (what follows would measure a
# broken lab); each host leaves its kernel's last words and its links' counters behind.
# Records, tables and the summary go to OUT_DIR (README.md there says what was run, where, when).
#   bench/many-paths.sh [--parts goodput,collisions,elephants] [OUT_DIR]
#                       (default: every part, bench/results/many-paths; RDMALAB_KEEP_OUTPUT=1
#                       keeps the boot's work folder, build/many-paths.XXXXXX, capture included)
#   bench/many-paths.sh --analyse WORK_DIR[,WORK_DIR...] [OUT_DIR]
#       no measurement: the tables again from kept work folders; a run found in several (by its
#       name) is taken from the last folder where it succeeded
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=$repo/build/bin
die() { echo "many-paths: $*" >&2; exit 2; }
parts=goodput,collisions,elephants
runs=()
while [ $# -gt 0 ]; do
    case $1 in
        --parts)
            [ $# -ge 2 ] || die "--parts needs a list: goodput, collisions, elephants"
            [[ $2 =~ ^(goodput|collisions|elephants)(,(goodput|collisions|elephants))*$ ]] ||
                die "--parts takes goodput, collisions and elephants, comma-separated; got '$2'"
            parts=$2
            shift 2 ;;
        --analyse)
            [ $# -ge 2 ] || die "--analyse needs the work folders of runs, comma-separated"
            IFS=, read -r -a runs <<<"$2"
            for run in "${runs[@]}"; do
                [ -f "$run/steps" ] && [ -f "$run/wire.link-3.pcap" ] && [ -f "$run/started" ] ||
                    die "$run holds no run (steps, started, wire.link-3.pcap)"
            done
            shift 2 ;;
        -*) die "unknown option '$1' (--parts LIST, --analyse DIRS)" ;;
        *) break ;;
    esac
done
[ $# -le 1 ] || die "one OUT_DIR at most, got: $*"
out=${1:-$repo/bench/results/many-paths}
mkdir -p "$out"
out=$(cd "$out" && pwd)
[[ $out == "$repo"/* ]] || die "OUT_DIR must lie inside the repository (the lab's hosts write there)"
for tool in rdma-bench unordered-delivery rdma-wire; do
    [ -x "$bin/$tool" ] || die "$bin/$tool is missing: build first (./rdmalab build)"
done
command -v tshark >/dev/null || die "tshark is missing (apt install tshark)"

# ---- The measurement: one boot of the selected parts.
if [ ${#runs[@]} = 0 ]; then
work=$(mktemp -d "$repo/build/many-paths.XXXXXX")
[ -n "${RDMALAB_KEEP_OUTPUT:-}" ] || trap 'rm -rf "$work"' EXIT
runs=("$work")

# The steps, in order: NAME MODE PROGRAM CLIENT_ARGUMENTS (the server needs the same -n/-s for
# unordered-delivery, none for rdma-bench).
{
    if [[ ,$parts, == *,goodput,* ]]; then
        # 64 WRITEs in flight in all: a queue of at most 64 packets (26 ms at 20 Mbit/s), well
        # inside RC's ACK timeout (67 ms); a deeper one makes every QP time out and go back.
        for k in 1 2 4 8; do
            for run in 1 2 3 4 5; do
                echo "rc-k$k-$run ecmp rdma-bench -q $k -t $((64 / k)) -s 1K -n $((2048 / k)) --warmup 0"
            done
        done
        echo "unordered-ecmp ecmp unordered-delivery -n 16 -s 128K"
        echo "rc-sprayed spray rdma-bench -q 1 -t 64 -s 1K -n 512 --warmup 0"
        echo "unordered-sprayed spray unordered-delivery -n 16 -s 128K"
    fi
    if [[ ,$parts, == *,collisions,* ]]; then
        for i in $(seq 1 100); do echo "collision-$i ecmp rdma-bench -q 8 -s 1K -n 2 --warmup 0"; done
    fi
    if [[ ,$parts, == *,elephants,* ]]; then
        for i in $(seq 1 20); do echo "elephant-$i ecmp rdma-bench -q 2 -t 32 -s 1K -n 1024 --warmup 0"; done
    fi
} >"$work/steps"

cat >"$work/guest.sh" <<'GUEST'
set -uo pipefail
work=$1 bin=$2
h=$RDMALAB_HOST
source "${bin%/build/bin}/lab/guest-wait.sh"  # wait_for, listening
bash lab/paths.sh setup --rate 20mbit,20mbit --delay 1,3 >"$work/setup-$h.out" 2>&1 ||
    { echo "host $h: lab/paths.sh setup failed"; cat "$work/setup-$h.out"; exit 1; }
mode=ecmp failed=0
while read -r name step_mode program arguments; do
    [ -e "$work/abort" ] && { failed=1; break; }  # a run failed: the rest would tell nothing new
    dir=$work/$name
    mkdir -p "$dir"
    case $h in
        1)
            if [ "$step_mode" != "$mode" ]; then bash lab/paths.sh mode "$step_mode" || exit 1; mode=$step_mode; fi
            touch "$dir/mode-set" ;;
        3)
            wait_for "$dir/mode-set" 120 || exit 1
            rdma statistic show link rxe0/1 >"$dir/stats-host3-before.txt" 2>&1
            server_arguments=""
            [ "$program" = unordered-delivery ] && server_arguments=$arguments
            timeout -k 2 100 "$bin/$program" server --timeout 60 $server_arguments >"$dir/server.out" 2>&1 &
            listening 18515
            touch "$dir/listening"
            wait $!
            echo $? >"$dir/server.rc"
            rdma statistic show link rxe0/1 >"$dir/stats-host3-after.txt" 2>&1 ;;
        2)
            wait_for "$dir/listening" 200 || exit 1
            rdma statistic show link rxe0/1 >"$dir/stats-host2-before.txt" 2>&1
            json=()
            [ "$program" = rdma-bench ] && json=(--json "$dir/bench.json" --no-progress)
            timeout -k 2 100 "$bin/$program" client 198.51.100.3 $arguments --timeout 60 "${json[@]}" \
                >"$dir/client.out" 2>&1
            rc=$?
            echo $rc >"$dir/client.rc"
            rdma statistic show link rxe0/1 >"$dir/stats-host2-after.txt" 2>&1
            [ $rc = 0 ] || { echo "$name: the client failed ($rc)"; tail -n 3 "$dir/client.out"; touch "$work/abort"; } ;;
    esac
    touch "$dir/left-$h"
    for n in 1 2 3; do wait_for "$dir/left-$n" 300 || exit 1; done
done <"$work/steps"
{ dmesg | grep -v 'speed is unknown' | tail -n 40; ip -s link; rdma statistic show link 2>/dev/null; } >"$work/diagnosis-$h.txt" 2>&1
exit $failed
GUEST

date -u +%Y-%m-%dT%H:%M:%SZ >"$work/started"
echo "$(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" diff --quiet HEAD -- . ':!bench/results' || echo -dirty)" >"$work/commit"
lab_rc=0
"$repo/lab/lab.sh" --hosts 3 --timeout 2400 --capture "$work/wire.pcap" -- bash "$work/guest.sh" "$work" "$bin" \
    >"$work/lab.out" 2>&1 || lab_rc=$?
date -u +%Y-%m-%dT%H:%M:%SZ >"$work/finished"
[ "$lab_rc" = 0 ] || { echo "many-paths: the boot ended with exit $lab_rc; its last lines:" >&2; tail -n 8 "$work/lab.out" >&2; }
[ -f "$work/wire.link-3.pcap" ] || { echo "many-paths: no capture of host 1's link to host 3" >&2; exit 1; }
fi

# ---- The analysis, run by run.
# Per run, host 2's RoCE data packets on host 1's link to host 3, each under the step whose TCP
# exchange began last before it (a SYN to port 18515; one that repeats the SYN before it, same
# source port and no RoCE packet between, is that SYN retransmitted): STEP QPN OPCODE VLAN PSN
# (packets.tsv); then per step and destination QP the
# packets on path A (VLAN 10) and on path B (VLAN 20) (qp-paths.tsv).
index=$(mktemp)
trap 'rm -f "$index"; [ -z "${work:-}" ] || [ -n "${RDMALAB_KEEP_OUTPUT:-}" ] || rm -rf "$work"' EXIT
for run in "${runs[@]}"; do
    run=$(cd "$run" && pwd)
    tshark -r "$run/wire.link-3.pcap" 2>/dev/null \
        -Y 'ip.src==198.51.100.2 && ((tcp.dstport==18515 && tcp.flags.syn==1 && tcp.flags.ack==0) || (udp.dstport==4791 && infiniband.bth.destqp != 1))' \
        -T fields -e tcp.srcport -e infiniband.bth.destqp -e infiniband.bth.opcode -e vlan.id -e infiniband.bth.psn \
        -e frame.number |
        awk -F'\t' -v starts="$run/step-frames.tsv" '
            $1 != "" { if ($1 != last || roce) { step++; print step "\t" $6 >starts } last = $1; roce = 0; next }
            { roce = 1; print step "\t" $2 "\t" $3 "\t" $4 "\t" $5 }' >"$run/packets.tsv"
    awk -F'\t' '{ key = $1 "\t" $2; if ($4 == 10) a[key]++; else b[key]++; keys[key] = 1 }
        END { for (k in keys) print k "\t" a[k] + 0 "\t" b[k] + 0 }' "$run/packets.tsv" | sort -n >"$run/qp-paths.tsv"
    # The index: RUN STEP_NUMBER NAME MODE PROGRAM, for the steps whose client succeeded (their
    # TCP exchanges are the first ones; a failed run ends the boot, so numbers stay aligned).
    number=0
    while read -r name mode program _; do
        number=$((number + 1))
        [ "$(cat "$run/$name/client.rc" 2>/dev/null)" = 0 ] && printf '%s\t%s\t%s\t%s\t%s\n' "$run" "$number" "$name" "$mode" "$program"
    done <"$run/steps" >>"$index"
done
# The last successful run of each name, in the order of first appearance.
awk -F'\t' '{ if (!($3 in row)) order[++n] = $3; row[$3] = $0 } END { for (i = 1; i <= n; i++) print row[order[i]] }' "$index" >"$index.last"
mv "$index.last" "$index"

# counter_delta RUN STEP NAME: how much the rxe counter NAME grew on host 3 during STEP ('-' for a
# run recorded before host 3 kept its counters apart from host 2's).
counter_delta() {
    local before after
    [ -f "$1/$2/stats-host3-before.txt" ] || { echo -; return; }
    before=$(grep -o "$3 [0-9]*" "$1/$2/stats-host3-before.txt" | cut -d' ' -f2)
    after=$(grep -o "$3 [0-9]*" "$1/$2/stats-host3-after.txt" | cut -d' ' -f2)
    echo $((after - before))
}
record_field() { grep '^record ' "$1" | tail -n 1 | tr ' ' '\n' | sed -n "s/^$2=//p"; }
bench_field() { "$bin/rdma-bench" records "$1/$2/bench.json" --get "records/0/$3"; }
# paths_of RUN NUMBER: the QPs of step NUMBER on path A, on path B, on both.
paths_of() {
    awk -F'\t' -v s="$2" '$1 == s { if ($3 > 0 && $4 > 0) both++; else if ($3 > 0) a++; else b++ }
        END { printf "%d\t%d\t%d\n", a, b, both }' "$1/qp-paths.tsv"
}
mbit() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.2f", b * 8 / s / 1e6 }'; }

# Goodput: every step but the collision sets and the elephants.
{
    printf 'step\ttransport\tpaths\tqps\tbytes\tseconds\tgoodput_mbit\tqps_on_a\tqps_on_b\tqps_on_both\tpackets\tresent\thost3_out_of_seq_request\n'
    while IFS=$'\t' read -r run number name mode program; do
        case $name in collision-* | elephant-*) continue ;; esac
        packets=$(awk -F'\t' -v s="$number" '$1 == s { n++ } END { print n + 0 }' "$run/packets.tsv")
        if [ "$program" = rdma-bench ]; then
            transport=rc qps=$(bench_field "$run" "$name" config/qps)
            bytes=$(bench_field "$run" "$name" result/bytes) seconds=$(bench_field "$run" "$name" result/seconds)
            # Packets whose QP and PSN had been seen before in the step: sent again.
            resent=$(awk -F'\t' -v s="$number" '$1 == s { if (($2 SUBSEP $5) in seen) n++; seen[$2, $5] = 1 } END { print n + 0 }' "$run/packets.tsv")
        else
            transport=unordered qps=1
            bytes=$(record_field "$run/$name/client.out" bytes) seconds=$(record_field "$run/$name/client.out" seconds)
            # Its datagrams carry new PSNs when sent again: its own count says.
            resent=$(($(record_field "$run/$name/client.out" resent_on_gap) + $(record_field "$run/$name/client.out" resent_on_timeout)))
        fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$transport" "$mode" "$qps" "$bytes" "$seconds" \
            "$(mbit "$bytes" "$seconds")" "$(paths_of "$run" "$number")" "$packets" "$resent" \
            "$(counter_delta "$run" "$name" out_of_seq_request)"
    done <"$index"
} >"$out/goodput.tsv"

# Collisions: QPs on each path per set (a QP's packets all on one path under ECMP).
{
    printf 'set\tqps_on_a\tqps_on_b\tqps_on_both\n'
    while IFS=$'\t' read -r run number name _; do
        [[ $name == collision-* ]] && printf '%s\t%s\n' "${name#collision-}" "$(paths_of "$run" "$number")"
    done <"$index"
} >"$out/collisions.tsv"

# Elephants: two QPs, one path or two, and the run's goodput.
{
    printf 'run\tshared_path\tbytes\tseconds\tgoodput_mbit\n'
    while IFS=$'\t' read -r run number name _; do
        [[ $name == elephant-* ]] || continue
        read -r a b both <<<"$(paths_of "$run" "$number")"
        shared=no
        if [ "$a" = 0 ] || [ "$b" = 0 ]; then shared=yes; fi
        bytes=$(bench_field "$run" "$name" result/bytes) seconds=$(bench_field "$run" "$name" result/seconds)
        printf '%s\t%s\t%s\t%s\t%s\n' "${name#elephant-}" "$shared" "$bytes" "$seconds" "$(mbit "$bytes" "$seconds")"
    done <"$index"
} >"$out/elephants.tsv"

# The sprayed RC QP's first packets as a ladder (rdma-wire): the step's RoCE packets lie between
# its TCP exchange's SYN and the next step's (step-frames.tsv).
: >"$out/rc-sprayed-ladder.txt"
if sprayed_row=$(awk -F'\t' '$3 == "rc-sprayed"' "$index") && [ -n "$sprayed_row" ]; then
    IFS=$'\t' read -r run number _ <<<"$sprayed_row"
    from=$(awk -F'\t' -v s="$number" '$1 == s { print $2 }' "$run/step-frames.tsv")
    to=$(awk -F'\t' -v s="$((number + 1))" '$1 == s { print $2 }' "$run/step-frames.tsv")
    tshark -r "$run/wire.link-3.pcap" -Y "frame.number > $from${to:+ && frame.number < $to} && udp.dstport==4791" \
        -w "$run/rc-sprayed.pcap" 2>/dev/null
    "$bin/rdma-wire" "$run/rc-sprayed.pcap" --brief >"$run/rc-sprayed-ladder.txt"
    head -n 70 "$run/rc-sprayed-ladder.txt" | sed -E 's/ RETH va 0x[0-9a-f]+ rkey 0x[0-9a-f]+ len [0-9]+ ·//; s/ · ack requested//; s/ +headers · payload$//' |
        # One QP: its number is said once, above the table, not on every line.
        sed -E 's/opcode +QPN +PSN/opcode                 PSN/; s/ {17}0x[0-9a-f]{6} {2}/ /' >"$out/rc-sprayed-ladder.txt"
fi

# The summary.
{
    echo "# Many paths, measured on the lab's two-path fabric"
    echo
    echo "Soft-RoCE (rxe) in three QEMU guests on one 2-core machine; the paths are netem on host 1"
    echo "(20 Mbit/s each, 1 and 3 ms): a model of a fabric, not a NIC. Recorded by \`bench/many-paths.sh\`"
    echo "(host kernel $(uname -r), guest kernel $(ls /boot/vmlinuz-* | sort -V | tail -n 1 | sed 's|/boot/vmlinuz-||')) in these boots:"
    echo
    for run in "${runs[@]}"; do
        run=$(cd "$run" && pwd)
        steps=$(wc -l <"$run/steps")
        ok=$(awk -F'\t' -v r="$run" '$1 == r' "$index" | wc -l)
        accel=$(grep -o -m 1 'TCG emulation\|KVM' "$run/lab.out" 2>/dev/null || echo "unknown acceleration")
        echo "- $(cat "$run/started") to $(cat "$run/finished"), commit $(cat "$run/commit"), $accel: $steps runs planned, $ok of them used here$(
            failed=$(grep -l -v '^0$' "$run"/*/client.rc 2>/dev/null | head -n 1)
            [ -z "$failed" ] || echo "; $(basename "$(dirname "$failed")") failed and ended the boot: $(grep -m 1 -h 'timed out\|NETDEV' "$run"/diagnosis-*.txt 2>/dev/null | sed 's/^\[ *[0-9.]*\] //' | head -c 110)")"
    done
    echo
    echo "## One flow over K QPs (goodput.tsv, steps rc-kK-RUN)"
    echo
    echo "2 MiB in 1 KiB RDMA WRITEs, 64 in flight in all, on K QPs hashed by ECMP; five runs each."
    echo
    echo "| K | Mbit/s, mean (lowest-highest) | runs with every QP on one path | packets sent again |"
    echo "|---|---|---|---|"
    awk -F'\t' 'NR > 1 && $1 ~ /^rc-k/ { split($1, part, "-"); k = substr(part[2], 2); n[k]++; sum[k] += $7
            if (!(k in lo) || $7 < lo[k]) lo[k] = $7; if ($7 > hi[k]) hi[k] = $7
            if ($8 == 0 || $9 == 0) one[k]++; again[k] += $12 }
        END { for (k = 1; k <= 8; k *= 2) if (k in n)
            printf "| %d | %.1f (%.1f-%.1f) | %d of %d | %d |\n", k, sum[k] / n[k], lo[k], hi[k], one[k], n[k], again[k] }' "$out/goodput.tsv"
    echo
    echo "## RC and the unordered layer, ECMP and sprayed (goodput.tsv)"
    echo
    echo "| step | transport | paths | QPs on A / B / both | Mbit/s | packets | sent again | host 3 out of sequence |"
    echo "|---|---|---|---|---|---|---|---|"
    awk -F'\t' 'NR > 1 && $1 !~ /^rc-k/ { printf "| %s | %s | %s | %s / %s / %s | %s | %s | %s | %s |\n", $1, $2, $3, $8, $9, $10, $7, $11, $12, $13 }' "$out/goodput.tsv"
    echo
    echo "## Collisions: sets of 8 QPs under ECMP (collisions.tsv)"
    echo
    echo "| QPs on the busier path | sets observed | expected (binomial) |"
    echo "|---|---|---|"
    awk -F'\t' 'NR > 1 { m = ($2 > $3 ? $2 : $3); seen[m]++; sets++ }
        END {
            for (k = 4; k <= 8; k++) {
                c = 1; for (i = 0; i < k; i++) c = c * (8 - i) / (i + 1)
                p = (k == 4 ? c : 2 * c) / 256
                printf "| %d of 8 | %d | %.1f |\n", k, seen[k] + 0, p * sets
            }
        }' "$out/collisions.tsv"
    echo
    awk -F'\t' 'NR > 1 { a += $2; n += $2 + $3 + $4; both += $4; sets++ } END { if (n) printf "%d sets, %d QPs, %d on path A (%.1f %%), %d on both paths.\n", sets, n, a, 100 * a / n, both }' "$out/collisions.tsv"
    echo
    echo "## Two elephants (elephants.tsv)"
    echo
    echo "Two QPs writing 1 MiB each, 32 in flight per QP."
    echo
    awk -F'\t' 'NR > 1 { n[$2]++; sum[$2] += $5; if (!($2 in lo) || $5 < lo[$2]) lo[$2] = $5; if ($5 > hi[$2]) hi[$2] = $5 }
        END { for (s in n) printf "- on %s: %d runs, %.1f Mbit/s on average (%.1f-%.1f)\n", (s == "yes" ? "one path" : "two paths"), n[s], sum[s] / n[s], lo[s], hi[s] }' "$out/elephants.tsv" | sort
    echo
    echo "## The sprayed RC QP's first packets (rc-sprayed-ladder.txt, rdma-wire --brief)"
    echo
    echo '```text'
    cat "$out/rc-sprayed-ladder.txt"
    echo '```'
} >"$out/README.md"
cat "$out/README.md"
