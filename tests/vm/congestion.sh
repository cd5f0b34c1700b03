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
count_packets() {  # count_packets FILE CONDITION...
    local file=$1
    shift
    "$wire" "$file" --count "${@/#/--where=}"
}
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
check "incast: each link's capture is kept" [ -s "$into" ] && [ -s "$from2" ]
"$wire" "$into" --json "$scratch/into.json" --quiet
"$wire" "$from2" --json "$scratch/from2.json" --quiet
for sender in 198.51.100.1 198.51.100.2; do
    data=$(count_packets "$scratch/into.json" src=$sender dst=$receiver dscp=26 'opcode_name~^RDMA WRITE')
    marked=$(count_packets "$scratch/into.json" src=$sender dst=$receiver dscp=26 ecn=3)
    check "incast: $sender's WRITEs reach host 3 in class 26 ($data)" [ "${data:-0}" -ge 500 ]
    check "incast: the centre's queue marked some of them CE ($marked)" [ "${marked:-0}" -ge 1 ]
done
check "incast: host 2's WRITEs leave it ECT(0), none marked yet" \
    [ "$(count_packets "$scratch/from2.json" src=198.51.100.2 dscp=26 ecn=3)" = 0 ] &&
    [ "$(count_packets "$scratch/from2.json" src=198.51.100.2 dscp=26 'opcode_name~^RDMA WRITE' ecn=2)" -ge 500 ]
check "incast: nothing of class 26 reaches host 3 without an ECN codepoint" \
    [ "$(count_packets "$scratch/into.json" dst=$receiver dscp=26 ecn=0)" = 0 ]
check "incast: three WRITE streams of class 26 reach host 3" \
    [ "$("$wire" "$scratch/into.json" --print src,qpn --where dst=$receiver --where dscp=26 \
        --where 'opcode_name~^RDMA WRITE' | sort -u | wc -l)" = 3 ]
# --aqm's refusals: one line, exit 2, no boot.
refused() {  # refused NAME REGEX ARGS...
    local name=$1 regex=$2 rc=0
    shift 2
    "$repo/lab/lab.sh" "$@" -- true >/dev/null 2>"$scratch/refused.err" || rc=$?
    check "--aqm refused, $name: exit 2, one line" \
        bash -c '[ "$2" = 2 ] && [ "$(grep -c . "$1")" = 1 ] && grep -qE -- "$3" "$1"' _ "$scratch/refused.err" "$rc" "$regex"
}
refused "no host" "must be like 2:20mbit" --hosts 3 --aqm 20mbit
refused "an unknown queue" "must be like 2:20mbit" --hosts 3 --aqm 2:20mbit:fq
refused "too slow" "start at 100kbit" --hosts 3 --aqm 2:50kbit
refused "with netem on its host" "give it one of them" --hosts 2 --aqm 2:20mbit --rate 2:1mbit
refused "one host" "need the wire" --aqm 1:20mbit

echo "incast at host 1's port to host 3 (20 mbit, RED with ECN; no reaction to the marks):"
"$wire" "$scratch/into.json" --flows --where dst=$receiver --where dscp=26
finish
