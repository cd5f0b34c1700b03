# Tests of the lab's wire, from the host: two guests on a virtual link. One boot runs the
# lessons with the server on host 1 and the client on host 2 and checks, from the capture, that
# the packets really crossed the link with the opcodes each operation must produce; a second
# boot runs a WRITE across a lossy link (go-back-N must recover it) and takes the link down and
# up. Then the wire decoder's refusals. The packets are read through rdma-wire
# (the packet record, wire/packet.hpp): --count and --print answer each question. Each `part` is a
# CTest test of its own over this one run (vm.wire.PART; tests/checks.sh says how).
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$repo/build/bin}
source "$repo/tests/checks.sh"
lab=$repo/lab/lab.sh
wire=$bin/rdma-wire
scratch=$(mktemp -d)
out=$(mktemp -d "$repo/build/wire-test.XXXXXX")   # the guests write here: it is in the repository
trap 'rm -rf "$scratch" "$out"' EXIT

# in_psn_range FIRST LAST: how many of the PSNs on stdin (one a line) lie in FIRST…LAST.
in_psn_range() { local n=0 p; while read -r p; do [ "$p" -ge "$1" ] && [ "$p" -le "$2" ] && n=$((n + 1)); done; echo "$n"; }

# ---- 1. Lessons across the link, captured.
part across-exits
rc=0
"$lab" --hosts 2 --timeout 400 --capture "$scratch/across.pcap" -- \
    bash "$repo/tests/wire/lessons-across.sh" "$bin" "$out" >"$scratch/across.out" 2>"$scratch/across.err" || rc=$?
check "lessons across: the lab exits 0" [ "$rc" = 0 ]
check "lessons across: the boot line names both hosts" grep -q 'booting 2 Soft-RoCE hosts on a virtual link' "$scratch/across.err"
for lesson in rdma-write rdma-read send-recv write-imm atomics ud qp-state-machine rdma-bench; do
    check "$lesson across hosts: server (host 1) exits 0" rc_is "$out/$lesson/server.rc" 0
    check "$lesson across hosts: client (host 2) exits 0" rc_is "$out/$lesson/client.rc" 0
    rc_is "$out/$lesson/server.rc" 0 && rc_is "$out/$lesson/client.rc" 0 ||
        tail -n 5 "$out/$lesson"/*.out 2>/dev/null
done
part across-verified
check "rdma-write across: verified on host 1" has_line "$out/rdma-write/server.out" '^server: verified 65536 bytes placed'
check "rdma-write across: the client's connection is RoCE v2 from 198.51.100.2" \
    has_line "$out/rdma-write/client.out" 'RoCE v2 ::ffff:198\.51\.100\.2'
check "rdma-read across: verified on host 2" has_line "$out/rdma-read/client.out" 'verified'
check "rdma-read across: the fenced SEND carried what the READ fetched" has_line "$out/rdma-read/server.out" \
    '^server: \[fence\] SEND 2, IBV_SEND_FENCE: the 65536 bytes the READ fetched, verified'
check "send-recv across: every message verified" has_line "$out/send-recv/server.out" 'verified'
check "atomics across: the counter is exact" has_line "$out/atomics/server.out" 'counter'
check "ud across: counts add up" has_line "$out/ud/server.out" '^server: received [0-9]+ of 100 datagrams'
check "qp-state-machine across: verified" has_line "$out/qp-state-machine/server.out" '^server: verified 4096 bytes'
check "on-the-wire across: the server verified all 11 steps" has_line "$out/on-the-wire/server.out" '^server: all 11 steps verified$'
check "on-the-wire across: the client verified 11 operations and predicted their packets" \
    has_line "$out/on-the-wire/client.out" '^client: 11 operations verified; [0-9]+ packets predicted'
check "rdma-bench across: one record per operation (6)" records_count_is 6 "$out/rdma-bench/records.json"
check "rdma-bench across: records say they ran on the two-host wire" records_match 6 "$out/rdma-bench/records.json" environment/lab_hosts '^2$'

# rdma-doctor between the two hosts (doctor-pair.sh): a healthy pair, then one world each for
# four faults between hosts; each names its cause in its one finding, with its fix. Then five
# worlds where no responder can be reached, the IP layer broken a different way in each.
pair=$out/doctor-pair
reader=${RDMALAB_RECORD_READER:-$bin/rdma-bench}
# json_is FILE PATH VALUE, json_count_is FILE PATH N, json_matches FILE PATH REGEX: read through the
# record reader (strings without quotes).
json_is() { [ "$("$reader" json "$1" --raw --get "$2" 2>/dev/null)" = "$3" ]; }
json_count_is() { [ "$("$reader" json "$1" --count "$2" 2>/dev/null)" = "$3" ]; }
json_matches() { [[ "$("$reader" json "$1" --raw --get "$2" 2>/dev/null)" =~ $3 ]]; }
# pair_world_says WORLD RC REGEX: the prober exited RC with REGEX as its only finding (none when
# RC is 0), and the responder answered and exited 0.
pair_world_says() {
    local dir=$pair/$1
    check "doctor pair, $1: the prober exits $2" rc_is "$dir/report.rc" "$2"
    check "doctor pair, $1: says $3" has_line "$dir/report.txt" "$3"
    check "doctor pair, $1: $([ "$2" = 0 ] && echo no finding || echo one finding)" \
        [ "$(grep -c '^[✗!] ' "$dir/report.txt" 2>/dev/null)" = "$([ "$2" = 0 ] && echo 0 || echo 1)" ]
    check "doctor pair, $1: nothing on the prober's stderr" [ ! -s "$dir/report.err" ]
    check "doctor pair, $1: the responder exited 0" rc_is "$dir/responder.rc" 0
    check "doctor pair, $1: the responder answered host 2's probes" \
        has_line "$dir/responder.out" '^rdma-doctor: answered [1-9][0-9]* probes? from 198\.51\.100\.2$'
    has_line "$dir/report.txt" "$3" || cat "$dir/report.txt" "$dir/report.err" "$dir/responder.out" 2>/dev/null
}
part doctor-healthy
pair_world_says healthy 0 '^rdma-doctor: healthy'
check "doctor pair, healthy: a verified round trip on the addresses' GIDs" \
    has_line "$pair/healthy/report.txt" '^✓ round-trip: RC connection to 198\.51\.100\.1 \(rxe0 port 1\) and a verified 64-byte round trip on GID index 1 → 1'
check "doctor pair, healthy: the path MTU both ends agree on, verified" \
    has_line "$pair/healthy/report.txt" '^✓ path-mtu: both ends MTU 1500 \(RDMA MTU 1024\); a round trip at path MTU 1024 verified'
check "doctor pair, healthy: the traffic class as the peer received it" \
    has_line "$pair/healthy/report.txt" '^✓ traffic-class: traffic class 0 \(the default\): the peer received DSCP 0, ECN 00'
echo "note: the pair checks took $(cat "$pair/healthy/seconds" 2>/dev/null) s on the healthy pair"
check "doctor pair, healthy --json: exits 0" rc_is "$pair/healthy-json/report.rc" 0
check "doctor pair, healthy --json: healthy" json_is "$pair/healthy-json/report.txt" healthy true
check "doctor pair, healthy --json: no finding" json_count_is "$pair/healthy-json/report.txt" findings 0
check "doctor pair, healthy --json: the first GID round trip verified" \
    json_is "$pair/healthy-json/report.txt" pair/gid_round_trips/0/verified true
check "doctor pair, healthy --json: ... at path MTU 1024" \
    json_is "$pair/healthy-json/report.txt" pair/gid_round_trips/0/path_mtu 1024
check "doctor pair, healthy --json: the peer received TOS 0" \
    json_is "$pair/healthy-json/report.txt" pair/class_probe/received_tos 0
part doctor-mtu-firewall
pair_world_says mtu-mismatch 1 \
    '^✗ mtu-mismatch: the MTU differs between the ends: here eth0 9000 \(RDMA MTU 4096\), on 198\.51\.100\.1 eth0 1500 \(RDMA MTU 1024\) .*at path MTU 4096 failed.*at path MTU 1024 verified.*Fix: one MTU for both: sudo ip link set dev eth0 mtu 1500 here'
pair_world_says roce-blocked 1 \
    '^✗ roce-blocked: RoCE v2 packets \(UDP port 4791\) from here never reach 198\.51\.100\.1, though TCP to it works .*Fix: on 198\.51\.100\.1 .*udp dport 4791 accept'
check "doctor pair, roce-blocked: the firewall rule on host 1 dropped packets" \
    has_line "$pair/roce-blocked/nft.txt" 'udp dport 4791 counter packets [1-9][0-9]* bytes [0-9]+ drop'
part doctor-gid-class
pair_world_says gid-index 1 \
    '^✗ gid-index: NCCL_IB_GID_INDEX=0 is fe80::[0-9a-f:]+ \(RoCE v2, IPv6 link-local\), not the address.s GID \(198\.51\.100\.2.s entry is index 1\) .*Fix: NCCL_IB_GID_INDEX=1'
pair_world_says tclass-ecn 1 \
    '^✗ traffic-class: traffic class 3 \(NCCL_IB_TC\) sets both ECN bits: every packet leaves marked Congestion Experienced \(the peer received DSCP 0, ECN 11 \(CE\)\) .*NCCL_IB_TC=106'

# The peer unreachable, its IP layer broken (doctor-pair.sh's unreachable worlds, no responder):
# exit 1 and one finding, the layer that fails, in the report's record.
# unreachable_says WORLD CHECK FIELD VALUES REGEX: the finding is CHECK, its text matches REGEX,
# and the reach record's FIELD matches ^(VALUES)$.
unreachable_says() {
    local report=$pair/$1/report.json
    check "doctor unreachable, $1: the prober exits 1 (a finding)" rc_is "$pair/$1/report.rc" 1
    check "doctor unreachable, $1: nothing on stderr" [ ! -s "$pair/$1/report.err" ]
    check "doctor unreachable, $1: one finding" json_count_is "$report" findings 1
    check "doctor unreachable, $1: the finding is $2" json_is "$report" findings/0/check "$2"
    check "doctor unreachable, $1: the record says $3 $4" json_matches "$report" "reach/$3" "^($4)\$"
    check "doctor unreachable, $1: says $5" json_matches "$report" findings/0/what "$5"
    json_is "$report" findings/0/check "$2" || cat "$report" "$pair/$1/report.err" 2>/dev/null
    echo "note: $1 took $(cat "$pair/$1/seconds" 2>/dev/null) s"
}
part doctor-unreachable-ip
unreachable_says route-prohibit route route prohibit \
    '^a route of type prohibit covers 198\.51\.100\.1 \(ip route get 198\.51\.100\.1: Permission denied\)$'
unreachable_says static-neighbour neighbour neighbour PERMANENT \
    '^a static neighbour entry on eth0 sends 198\.51\.100\.1.s frames to 02:00:00:00:00:99 and nothing answers through it \(0 of 3 ICMP echoes answered\)$'
# (The TCP wait and ARP's three tries both end near 3 s: the connection ends silent or
# unreachable, whichever comes first; the neighbour entry is the record's fact.)
unreachable_says arp-ignored neighbour neighbour 'FAILED|INCOMPLETE' \
    '^ARP for 198\.51\.100\.1 on eth0 got no answer \(neighbour entry (FAILED|INCOMPLETE); 0 of 3 ICMP echoes answered\)$'
part doctor-unreachable-tcp
unreachable_says no-responder tcp-port tcp refused '^198\.51\.100\.1 port 18516 refused the connection$'
check "doctor unreachable, no-responder: the fix starts the responder" \
    json_matches "$pair/no-responder/report.json" findings/0/fix 'rdma-doctor --respond'
unreachable_says port-filtered firewall tcp silent \
    '^198\.51\.100\.1 answers ICMP echo, but TCP to 198\.51\.100\.1 port 18516 got no answer within 3\.0 s$'
check "doctor unreachable, port-filtered: host 1's rule dropped the connection's SYNs" \
    has_line "$pair/port-filtered/nft.txt" 'tcp dport 18516 counter packets [1-9][0-9]* bytes [0-9]+ drop'

part capture-classes
rc=0
"$wire" "$scratch/across.pcap" --json "$scratch/across.json" >"$scratch/across.ladder" 2>"$scratch/wire.err" || rc=$?
check "wire: decodes the capture (exit 0)" [ "$rc" = 0 ]
total=$(count_packets "$scratch/across.json")
check "wire: the capture holds RoCE v2 packets ($total)" [ "${total:-0}" -gt 100 ]
check "wire: every packet went between 198.51.100.1 and .2" \
    [ "$(count_packets "$scratch/across.json" 'src~^198\.51\.100\.[12]$' 'dst~^198\.51\.100\.[12]$')" = "$total" ]
# On the wire: the traffic class 3 the tclass-ecn world probed with left as ECN 11 (CE) in the IP
# header, and nothing else in this boot asked for ECN at all (every other program uses class 0).
ce=$(count_packets "$scratch/across.json" ecn=3 dscp=0)
check "doctor pair, tclass-ecn: its probes crossed the wire marked CE ($ce packets, DSCP 0, ECN 11)" [ "${ce:-0}" -gt 0 ]
# --tclass 106 (DSCP 26, ECT(0)): the 16 KiB WRITE of rdma-write (rdma_cm, the client's class)
# and the 4 KiB WRITE of qp-state-machine (hand-made, both sides) crossed with it, and the
# servers' packets too; nothing else in the boot asked for an ECN-capable class.
for lesson in rdma-write qp-state-machine; do
    check "$lesson --tclass 106 across: both sides exit 0" \
        bash -c "[ \"\$(cat '$out/$lesson-tclass/server.rc' '$out/$lesson-tclass/client.rc' 2>/dev/null | tr -d '\n')\" = 00 ]"
done
check "tclass 106: the two WRITEs' 20 packets carried DSCP 26, ECT(0)" \
    [ "$(count_packets "$scratch/across.json" dscp=26 ecn=2 sent_again=false 'opcode_name~^RDMA WRITE')" = 20 ]
check "tclass 106: the servers' packets (ACKs) carried it too" \
    [ "$(count_packets "$scratch/across.json" dscp=26 ecn=2 src=198.51.100.1 opcode_name=Acknowledge)" -ge 2 ]
check "tclass: no other packet carried an ECN-capable codepoint" \
    [ "$(count_packets "$scratch/across.json" 'ecn~^[12]$')" = "$(count_packets "$scratch/across.json" dscp=26 ecn=2)" ]

part capture-operations
# A 64 KiB WRITE at path MTU 1024: 64 packets, First/Middle…/Last, consecutive PSNs, 1024 bytes
# each, and only the First carries the RETH.
qpn="" psn=""
read -r qpn psn < <("$wire" "$scratch/across.json" --print qpn,psn --where 'opcode_name=RDMA WRITE First' \
    --where reth.length=65536 | head -n 1)
psn=${psn:-0}
check "WRITE 64 KiB: a First packet with RETH length 65536" [ -n "$qpn" ]
check "WRITE 64 KiB: 62 Middle packets on its QP, 1024 bytes each" \
    [ "$(count_packets "$scratch/across.json" "qpn=$qpn" 'opcode_name=RDMA WRITE Middle' 'payload_bytes=1024')" = 62 ]
check "WRITE 64 KiB: Middle and Last carry no RETH" \
    [ "$(count_packets "$scratch/across.json" "qpn=$qpn" 'opcode_name~^RDMA WRITE (Middle|Last)' reth)" = 0 ]
check "WRITE 64 KiB: the Last packet has PSN First + 63 and asks for an ACK" \
    [ "$(count_packets "$scratch/across.json" "qpn=$qpn" 'opcode_name=RDMA WRITE Last' "psn=$((psn + 63))" ack_requested=true)" = 1 ]
acks=$("$wire" "$scratch/across.json" --print psn --where src=198.51.100.1 --where opcode_name=Acknowledge |
    in_psn_range "$psn" $((psn + 63)))
check "WRITE 64 KiB: ACKs are coalesced: $acks ACK(s) for its 64 packets" [ "$acks" -ge 1 ] && [ "$acks" -lt 64 ]

# A 64 KiB READ: one Read Request with RETH length 65536, 64 Read Responses back (First, 62
# Middle, Last), the responses numbered from the request's PSN.
rpsn="" rsrc=""
read -r rpsn rsrc < <("$wire" "$scratch/across.json" --print psn,src --where 'opcode_name=RDMA READ Request' \
    --where reth.length=65536 | head -n 1)
rpsn=${rpsn:-0}
check "READ 64 KiB: one Read Request carrying RETH length 65536, from host 2" [ "$rsrc" = 198.51.100.2 ]
responses=$("$wire" "$scratch/across.json" --print psn --where src=198.51.100.1 --where 'opcode_name~^RDMA READ Response' |
    in_psn_range "$rpsn" $((rpsn + 63)))
check "READ 64 KiB: 64 Read Responses from host 1, PSN request…request+63 ($responses)" [ "$responses" = 64 ]
check "READ 64 KiB: they are First, 62 Middle, Last" \
    [ "$(count_packets "$scratch/across.json" src=198.51.100.1 'opcode_name=RDMA READ Response Middle' payload_bytes=1024)" -ge 62 ]
check "SEND: RC SEND Only packets" [ "$(count_packets "$scratch/across.json" transport=RC 'opcode_name~^SEND Only')" -ge 4 ]
check "WRITE WITH IMMEDIATE: a packet carries ImmDt" [ "$(count_packets "$scratch/across.json" 'opcode_name~with Immediate' immdt)" -ge 1 ]
check "atomics: FetchAdd packets" [ "$(count_packets "$scratch/across.json" opcode_name=FetchAdd atomic)" -ge 1 ]
check "atomics: CmpSwap packets" [ "$(count_packets "$scratch/across.json" opcode_name=CmpSwap atomic)" -ge 1 ]
check "atomics: ATOMIC Acknowledges with the original value" \
    [ "$(count_packets "$scratch/across.json" 'opcode_name=ATOMIC Acknowledge' atomic_ack)" -ge 1 ]
ud_lesson=$(($(count_packets "$scratch/across.json" transport=UD) - $(count_packets "$scratch/across.json" transport=UD qpn=0x000001)))
check "UD: the lesson's datagrams are on the wire ($ud_lesson)" [ "${ud_lesson:-0}" -ge 50 ]
# The on-the-wire lesson's prediction, packet by packet (opcode, direction, PSN, payload),
# against the capture: all there, once each, and nothing else of those QPs in its PSN range.
comparison=$("$wire" "$scratch/across.json" --check-predicted "$out/on-the-wire/client.out" 2>&1)
check "on-the-wire: every predicted packet is in the capture (a resent one counted apart), and no other ($comparison)" \
    bash -c "grep -qE '^predicted ([4-9][0-9]) found \\1 missing 0 extra 0 sent-again [0-9]+$' <<<'$comparison'"
grep '^missing:' <<<"$comparison" | head -n 5
check "wire ladder: a header line and a summary" \
    bash -c "head -n 1 '$scratch/across.ladder' | grep -q 'from → to' && tail -n 3 '$scratch/across.ladder' | grep -q 'RoCE v2 packets:'"
sed -n '2,4p' "$scratch/across.ladder"

# ---- 2. Faults: loss on host 2's egress (rdma-bench, then the loss-and-retransmission lesson),
# then its link down and up again on a signal.
part faults
mkdir -p "$out/faults"
rc=0
"$lab" --hosts 2 --timeout 300 --loss 2:10% --link-down 2@signal+2 --capture "$scratch/faults.pcap" -- \
    bash "$repo/tests/wire/faults.sh" "$bin" "$out/faults" >"$scratch/faults.out" 2>"$scratch/faults.err" || rc=$?
check "faults: the lab exits 0" [ "$rc" = 0 ]
check "faults: the lab states them" grep -qx 'lab: faults: host 2 egress loss 10%, host 2 link down on a signal for 2 s' "$scratch/faults.err"
check "faults: the command sees them (RDMALAB_FAULTS)" \
    grep -q 'faults as the command sees them: host 2 egress loss 10%, host 2 link down on a signal for 2 s' "$out/faults/faults.txt"
check "lossy WRITE: both sides exit 0" bash -c "[ \"\$(cat '$out/faults/lossy-write/server.rc' '$out/faults/lossy-write/client.rc' 2>/dev/null | tr -d '\n')\" = 00 ]"
check "lossy WRITE: every message's bytes verified on host 1 (RC recovered every lost packet)" \
    record_has "$out/faults/lossy-write/records.json" result/verified '^true$'
check "lossy WRITE: the record states the fault it ran under" \
    record_has "$out/faults/lossy-write/records.json" environment/lab_faults '^host 2 egress loss 10%, host 2 link down on a signal for 2 s$'
check "doctor on the lossy link: exits 1 (a finding)" rc_is "$out/faults/doctor.rc" 1
check "doctor on the lossy link: names the retransmissions on host 1's port" \
    has_line "$out/faults/doctor.txt" '^! counters: rxe0 port 1 is retransmitting: .*\+[0-9]+ in [0-9.]+ s .*Fix: find the lossy hop'
grep -E '^[✗!]' "$out/faults/doctor.txt" 2>/dev/null | sed 's/^/    /'
check "loss lesson: both sides exit 0" bash -c "[ \"\$(cat '$out/faults/loss/server.rc' '$out/faults/loss/client.rc' 2>/dev/null | tr -d '\n')\" = 00 ]"
check "loss lesson: RC: every byte of 64 WRITEs verified on host 1 despite the loss" \
    has_line "$out/faults/loss/server.out" '^server: RC: verified all 1048576 bytes of 64 WRITEs'
line=$(grep -m 1 '^client: RC: 64 WRITEs' "$out/faults/loss/client.out" || true)
resent=$(sed -nE 's/.* ([0-9]+) of them sent again; ([0-9]+) NAKs.*/\1 \2/p' <<<"$line")
check "loss lesson: RC: packets sent again and NAKs received, by rxe's counters (${resent:-none})" \
    bash -c "read again naks <<<'${resent:-0 0}'; [ \"\$again\" -gt 0 ] && [ \"\$naks\" -gt 0 ]"
lost=$(sed -nE 's/^server: UD: received [0-9]+ of 200 datagrams, every one verified; ([0-9]+) lost.*/\1/p' "$out/faults/loss/server.out")
check "loss lesson: UD: the receiver counted lost datagrams at 10% loss (${lost:-none} of 200, expected 1…100)" \
    bash -c "[ -n '$lost' ] && [ '${lost:-0}' -ge 1 ] && [ '${lost:-0}' -le 100 ]"
grep -hE '^(client|server): (RC|UD):' "$out/faults/loss/"*.out 2>/dev/null | cut -c1-160 | sed 's/^/    /'
"$wire" "$scratch/faults.pcap" --json "$scratch/faults.json" >"$scratch/faults.ladder" 2>&1
naks=$(count_packets "$scratch/faults.json" 'aeth.meaning=NAK PSN sequence error')
again=$(count_packets "$scratch/faults.json" sent_again=true)
check "lossy WRITE: the receiver NAKed a PSN sequence error ($naks) and packets were sent again ($again)" \
    [ "${naks:-0}" -ge 1 ] && [ "${again:-0}" -ge 1 ]
tail -n 3 "$scratch/faults.ladder"
check "link down: host 2 saw its link go down, then up" \
    bash -c "grep -q 'eth0 down' '$out/faults/link.txt' && sed -n '/eth0 down/,\$p' '$out/faults/link.txt' | grep -q 'eth0 up'"
check "link down: the lab said so on host 2's stderr" \
    bash -c "grep -q '^\[host2\] lab: host 2: link down' '$scratch/faults.err' && grep -q '^\[host2\] lab: host 2: link up' '$scratch/faults.err'"
cat "$out/faults/link.txt" 2>/dev/null | sed 's/^/    /'
check "no socket file left behind" bash -c "! ls -d /tmp/rdmalab-wire.* 2>/dev/null | grep -q ."

# ---- 3. Three hosts: a star whose centre (host 1) bridges; host 2 writes to host 3 through it.
part star
mkdir -p "$out/star"
rc=0
"$lab" --hosts 3 --timeout 300 --capture "$scratch/star.pcap" -- bash "$repo/tests/wire/star.sh" "$bin" "$out/star" \
    >"$scratch/star.out" 2>"$scratch/star.err" || rc=$?
check "star: the lab exits 0" [ "$rc" = 0 ]
check "star: host 3 verified the WRITE from host 2" has_line "$out/star/server.out" '^server: verified 65536 bytes placed'
check "star: host 2's client exits 0" rc_is "$out/star/client.rc" 0
"$wire" "$scratch/star.pcap" --json "$scratch/star.json" >/dev/null 2>&1
# The lesson's QP: the first WRITE from .2 to .3 (the ring allreduce that follows on the same boot
# writes between the same hosts, on QPs of its own).
star_qpn=$("$wire" "$scratch/star.json" --print qpn --where src=198.51.100.2 --where dst=198.51.100.3 \
    --where 'opcode_name=RDMA WRITE First' | head -n 1)
check "star: the WRITE crossed from .2 to .3, each packet once in the merged capture (64)" \
    [ "$(count_packets "$scratch/star.json" dst=198.51.100.3 "qpn=${star_qpn:-none}" 'opcode_name~^RDMA WRITE')" = 64 ]
check "star: none of its packets counted as sent again (the bridge's copies are dropped)" \
    [ "$(count_packets "$scratch/star.json" dst=198.51.100.3 "qpn=${star_qpn:-none}" sent_again=true)" = 0 ]
part ring
# The ring allreduce across the three hosts: every rank verified every sum; on the wire each link
# of the ring carried WRITEs with immediate one way and credits (SENDs with immediate) back.
for size in small large; do
    for rank in 0 1 2; do
        check "ring $size: rank $rank (host $((rank + 1))) exits 0" rc_is "$out/star/ring/$size-r$rank.rc" 0
        check "ring $size: rank $rank verified every sum of every allreduce" \
            count_is "$([ $size = small ] && echo 2 || echo 3)" "$out/star/ring/$size-r$rank.out" \
            "^rank $rank: allreduce [0-9]+: [0-9.]+ ms, all $([ $size = small ] && echo 250 || echo 262144) sums verified$"
        rc_is "$out/star/ring/$size-r$rank.rc" 0 || tail -n 5 "$out/star/ring/$size-r$rank.out"
    done
done
grep -h ': allreduce of ' "$out/star/ring/large-r0.out" "$out/star/ring/small-r0.out" 2>/dev/null | sed 's/^/    /'
part ring-slowed
# The slowed link: every step of a ring waits for its slowest link, here host 3's egress held to
# RATE, so busbw follows that link: predicted RATE × 1024/1082 (the payload's share of a full
# RoCE v2 packet at path MTU 1024: 58 bytes of Ethernet, IPv4, UDP, BTH and ICRC around it).
for rank in 0 1 2; do
    check "ring slowed: rank $rank exits 0" rc_is "$out/star/ring/slow-r$rank.rc" 0
    check "ring slowed: rank $rank verified every sum of every allreduce" \
        count_is 3 "$out/star/ring/slow-r$rank.out" "^rank $rank: allreduce [0-9]+: [0-9.]+ ms, all 262144 sums verified$"
done
busbw_of() { sed -nE 's/^rank 0: allreduce of .* busbw ([0-9.e+-]+) MB\/s$/\1/p' "$1" | head -n 1; }
slow_rate=$(cat "$out/star/ring/slow-rate" 2>/dev/null)
healthy_busbw=$(busbw_of "$out/star/ring/large-r0.out")
slow_busbw=$(busbw_of "$out/star/ring/slow-r0.out")
# One line: the ratio (recorded), a tab, the sentence the check shows.
line=$(awk -v rate="${slow_rate%mbit}" -v slow="${slow_busbw:-0}" -v healthy="${healthy_busbw:-0}" 'BEGIN {
    predicted = rate * 1e6 / 8 / 1e6 * 1024 / 1082
    ratio = slow / predicted
    printf "%.3f\tbusbw %s MB/s with host 3 held to %s mbit: %.2f of the predicted %.3f MB/s (unslowed: %s MB/s)", ratio, slow, rate, ratio, predicted, healthy
    exit !(ratio >= 0.6 && ratio <= 1.05 && healthy > 1.5 * slow)
}') && tracks=0 || tracks=1
verdict=${line#*$'\t'}
echo "note: ring slowed: $verdict"
measured ring_slowed_busbw_over_predicted "${line%%$'\t'*}"
check "ring slowed: busbw tracks the slow link ($verdict)" [ "$tracks" = 0 ]
part ring-links
for link in "1 2" "2 3" "3 1"; do
    read -r from to <<<"$link"
    check "ring: WRITEs with immediate from host $from to host $to" \
        [ "$(count_packets "$scratch/star.json" "src=198.51.100.$from" "dst=198.51.100.$to" 'opcode_name~^RDMA WRITE.*with Immediate')" -gt 0 ]
    check "ring: credits (SENDs with immediate) from host $to back to host $from" \
        [ "$(count_packets "$scratch/star.json" "src=198.51.100.$to" "dst=198.51.100.$from" 'opcode_name=SEND Only with Immediate')" -gt 0 ]
done

# ---- 4. The exit status is that of the first command to fail, whichever guest ends first.
# Both hosts also carry a link-down fault that never comes (a signal nobody gives, a time after
# the command): its waiter must end with the command, not hold the guest until the timeout.
part exit-status
rc=0
started=$SECONDS
"$lab" --hosts 2 --timeout 120 --link-down 1@signal+2 --link-down 2@600+1 --on 1 'sleep 3; exit 3' --on 2 'exit 5' \
    >/dev/null 2>"$scratch/order.err" || rc=$?
took=$((SECONDS - started))
check "exit status: host 2 failed first (5), host 1 later (3): the lab exits 5 ($rc)" [ "$rc" = 5 ]
check "link-down faults that never came held no guest: the lab took $took s (limit 120)" [ "$took" -lt 100 ]
check "link-down faults that never came: no link went down" bash -c "! grep -q 'link down (' '$scratch/order.err'"
check "exit status: both failures are named" \
    bash -c "grep -q 'host 2: the command exited 5' '$scratch/order.err' && grep -q 'host 1: the command exited 3' '$scratch/order.err'"

# ---- 5. The wire decoder's refusals: one line each, exit 2 (the lab's own options' refusals are
# a native test, tests/native/lab-refusals.sh: they boot nothing).
refused() {  # refused NAME REGEX COMMAND...
    local name=$1 regex=$2 rc=0
    shift 2
    "$@" >/dev/null 2>"$scratch/refused.err" || rc=$?
    check "$name: exit 2" [ "$rc" = 2 ]
    check "$name: one line: $regex" bash -c '[ "$(grep -c . "$1")" = 1 ] && grep -qE -- "$2" "$1"' _ "$scratch/refused.err" "$regex"
}
part wire-refusals
refused "wire: no such capture" "no such readable file" "$wire" "$scratch/none.pcap"
printf 'not a pcap\n' >"$scratch/junk.pcap"
refused "wire: a file that is not a capture" "tshark cannot read" "$wire" "$scratch/junk.pcap"
mkdir -p "$scratch/no-tshark"
refused "wire: tshark missing" "tshark is missing: install it with 'apt-get install tshark'" \
    env PATH="$scratch/no-tshark" "$wire" "$scratch/across.pcap"
printf '{"format": "rdmalab-packets", "schema_version": 99, "packets": []}\n' >"$scratch/newer.json"
refused "wire: a packet file of a newer schema" "packet schema version 99; this reader reads version 1" \
    "$wire" "$scratch/newer.json"
printf '[{"src": "198.51.100.1"}]\n' >"$scratch/old.json"
refused "wire: lab/wire.sh's old JSON array" "not a packet file" "$wire" "$scratch/old.json"
refused "wire: a --where naming no field" "no field 'colour' in a packet record" \
    "$wire" "$scratch/across.json" --count --where colour=red
finish
