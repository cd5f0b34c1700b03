# Congestion on the lab's wire, from the host: three guests in a star whose centre (host 1) holds
# its ports to 20 mbit with RED marking DSCP 26's queue (lab.sh --aqm 1:20mbit). Three rdma-bench
# WRITE flows with traffic class 106 (DSCP 26, ECT(0)) converge on host 3 (tests/wire/incast.sh):
# one from the centre, two from host 2 through its bridge. Checked on each link's own capture:
# the flows leave their senders ECT(0) and unmarked, arrive at host 3 with CE marks from the
# centre's queue, and nothing of class 26 arrives without an ECN codepoint. Each flow's goodput,
# marks and resends, and Jain's fairness, are printed from the receiver's link (rdma-wire --flows):
# no congestion control reacts to the marks here (rxe ignores them), so these are the figures a
# reaction must improve on. Soft-RoCE under emulation: rates are the lab's, not a NIC's.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$repo/build/bin}
source "$repo/tests/checks.sh"
wire=$bin/rdma-wire
scratch=$(mktemp -d)
out=$(mktemp -d "$repo/build/congestion-test.XXXXXX")  # the guests write here: it is in the repository
trap 'rm -rf "$scratch" "$out"' EXIT
receiver=198.51.100.3

rc=0
"$repo/lab/lab.sh" --hosts 3 --aqm 1:20mbit --timeout 300 --capture "$scratch/incast.pcap" -- \
    bash "$repo/tests/wire/incast.sh" "$bin" "$out" 4 >"$scratch/lab.out" 2>"$scratch/lab.err" || rc=$?
check "incast: the lab exits 0" [ "$rc" = 0 ]
check "incast: the lab names the bottleneck" grep -q 'host 1 egress AQM 20mbit red' "$scratch/lab.err"
for port in 18600 18601 18602; do
    check "incast: flow to port $port: server exits 0" rc_is "$out/server-$port.rc" 0
    check "incast: flow to port $port: client exits 0" rc_is "$out/client-$port.rc" 0
    check "incast: flow to port $port: its record names traffic class 106" \
        record_has "$out/client-$port.json" environment/traffic_class '^106$'
done
[ "$rc" = 0 ] || tail -n 5 "$scratch/lab.err" "$out"/*.out

into=$scratch/incast.link-3.pcap     # host 3's port: what the receiver got
from2=$scratch/incast.link-2.pcap    # host 2's port: what host 2 sent, before the centre's queue
check "incast: host 3's link has a capture of its own" [ -s "$into" ]
check "incast: host 2's link has a capture of its own" [ -s "$from2" ]
"$wire" "$into" --json "$scratch/into.json" --quiet
"$wire" "$from2" --json "$scratch/from2.json" --quiet
for sender in 198.51.100.1 198.51.100.2; do
    data=$(count_packets "$scratch/into.json" src=$sender dst=$receiver dscp=26 'opcode_name~^RDMA WRITE')
    marked=$(count_packets "$scratch/into.json" src=$sender dst=$receiver dscp=26 ecn=3)
    check "incast: $sender's WRITEs reach host 3 in class 26 ($data)" [ "${data:-0}" -ge 500 ]
    check "incast: the centre's queue marked some of them CE ($marked)" [ "${marked:-0}" -ge 1 ]
done
check "incast: host 2's WRITEs leave it ECT(0)" \
    [ "$(count_packets "$scratch/from2.json" src=198.51.100.2 dscp=26 'opcode_name~^RDMA WRITE' ecn=2)" -ge 500 ]
check "incast: none of host 2's packets is marked before the centre's queue" \
    [ "$(count_packets "$scratch/from2.json" src=198.51.100.2 dscp=26 ecn=3)" = 0 ]
check "incast: nothing of class 26 reaches host 3 without an ECN codepoint" \
    [ "$(count_packets "$scratch/into.json" dst=$receiver dscp=26 ecn=0)" = 0 ]
check "incast: three WRITE streams of class 26 reach host 3" \
    [ "$("$wire" "$scratch/into.json" --print src,qpn --where dst=$receiver --where dscp=26 \
        --where 'opcode_name~^RDMA WRITE' | sort -u | wc -l)" = 3 ]
# --aqm's refusals: one line, exit 2, no boot.
lab=$repo/lab/lab.sh
expect_failure aqm-without-host 2 "must be like 2:20mbit" "$lab" --hosts 3 --aqm 20mbit -- true
expect_failure aqm-unknown-queue 2 "must be like 2:20mbit" "$lab" --hosts 3 --aqm 2:20mbit:fq -- true
expect_failure aqm-too-slow 2 "start at 100kbit" "$lab" --hosts 3 --aqm 2:50kbit -- true
expect_failure aqm-with-netem 2 "give it one of them" "$lab" --hosts 2 --aqm 2:20mbit --rate 2:1mbit -- true
expect_failure aqm-one-host 2 "need the wire" "$lab" --aqm 1:20mbit -- true

echo "incast at host 1's port to host 3 (20 mbit, RED with ECN; no reaction to the marks):"
"$wire" "$scratch/into.json" --flows --where dst=$receiver --where dscp=26
finish
