#!/usr/bin/env bash
# Rails in the lab (lab.sh --rails, docs/lab.md#rails): one boot of two hosts on two rails at
# MTU 9000, every frame captured per rail, host 2's egress held to 60 Mbit/s on rail 1 and 40 on
# rail 2 (netem: the captures stay small), its rail 2 taken down on a signal
# (tests/vm/rails/hosts.sh runs the hosts' part). Checked from the hosts' own reports
# (ibv_devinfo, rdma link, tc, their environment), rdma-bench's records and the captures:
#   devices  each host has rxe0 on eth0 and rxe1 on r2eth0, both ACTIVE at active MTU 4096,
#            the rails' variables, and each of host 2's rates on its own rail's NIC
#   traffic  a WRITE stream on each rail at once lands in its own rail's capture only, in 4 KiB
#            packets (jumbo frames on both links)
#   rail-down rail 2 taken down under its QP: that QP fails, rail 1's carries on to its end and
#            keeps sending after rail 2 fell silent; rail 2 comes back
#   tests/vm/rails.sh BUILD_BIN_DIR
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$repo/build/bin}
source "$repo/tests/checks.sh"
[ -e /dev/kvm ] || [ -x "$(command -v qemu-system-x86_64)" ] || { echo "SKIP: no QEMU"; exit 77; }
out=$(mktemp -d "$repo/build/rails-test.XXXXXX")   # the guests write here
scratch=$out/scratch
mkdir -p "$scratch"
[ -n "${RDMALAB_KEEP_OUTPUT:-}" ] || trap 'rm -rf "$out"' EXIT

part setup
rc=0
started=$SECONDS
"$repo/lab/lab.sh" --hosts 2 --rails 2 --mtu 9000 --timeout 240 --capture "$out/rails.pcap" \
    --rate 2:60mbit --rate 2.2:40mbit --link-down 2.2@signal+2 -- \
    bash "$repo/tests/vm/rails/hosts.sh" "$bin" "$out" >"$out/lab.out" 2>"$out/lab.err" || rc=$?
measured rails-lab-s $((SECONDS - started))
check "the lab ran both hosts' part (exit $rc)" [ "$rc" = 0 ]
[ "$rc" = 0 ] || tail -n 20 "$out/lab.err"
check "the lab named rail 2's subnet and device" has_line "$out/lab.err" '^lab: rail 2: a link of its own, 203\.0\.113\.1–203\.0\.113\.2, rxe1$'
check "a capture per rail: rails.pcap and rails.rail-2.pcap" \
    bash -c "[ -s '$out/rails.pcap' ] && [ -s '$out/rails.rail-2.pcap' ]"

part devices
for h in 1 2; do
    f=$out/facts-$h
    for dev in rxe0 rxe1; do
        # ibv_devinfo: the device's block, its port's state and active MTU.
        awk -v d="$dev" '/^hca_id:/ { on = ($2 == d) } on && /state:|active_mtu:/ { $1 = $1; print }' \
            "$f/devinfo.txt" >"$scratch/$h-$dev.port"
        check "host $h: $dev's port is ACTIVE" has_line "$scratch/$h-$dev.port" '^state: PORT_ACTIVE'
        check "host $h: $dev's active MTU is 4096 (links at MTU 9000)" \
            has_line "$scratch/$h-$dev.port" '^active_mtu: 4096 \(5\)$'
    done
    check "host $h: rxe0 on eth0 (rail 1)" has_line "$f/links.txt" '^link rxe0/1 state ACTIVE .*netdev eth0 '
    check "host $h: rxe1 on r2eth0 (rail 2)" has_line "$f/links.txt" '^link rxe1/1 state ACTIVE .*netdev r2eth0 '
    check "host $h: two rxe devices, no more" count_is 2 "$f/links.txt" '^link rxe'
    check "host $h: RDMALAB_RAILS=2, RDMALAB_MTU=9000" \
        bash -c "grep -qx RDMALAB_RAILS=2 '$f/env.txt' && grep -qx RDMALAB_MTU=9000 '$f/env.txt'"
    check "host $h: its rails' addresses and devices" \
        bash -c "grep -qx RDMALAB_RAIL_ADDR_1=198.51.100.$h '$f/env.txt' && grep -qx RDMALAB_RAIL_ADDR_2=203.0.113.$h '$f/env.txt' &&
                 grep -qx RDMALAB_RAIL_DEV_1=rxe0 '$f/env.txt' && grep -qx RDMALAB_RAIL_DEV_2=rxe1 '$f/env.txt' &&
                 grep -qx RDMALAB_RAIL_NETDEV_2=r2eth0 '$f/env.txt'"
    check "host $h: every host's address on rail 2" \
        bash -c "grep -qx RDMALAB_RAIL_ADDRS_2=203.0.113.1,203.0.113.2 '$f/env.txt' && grep -qx RDMALAB_ADDR_1_2=203.0.113.1 '$f/env.txt'"
done
check "host 2: --rate 2:60mbit is netem on eth0 (rail 1)" has_line "$out/facts-2/qdisc.txt" '^qdisc netem .* dev eth0 .*rate 60Mbit'
check "host 2: --rate 2.2:40mbit is netem on r2eth0 (rail 2)" has_line "$out/facts-2/qdisc.txt" '^qdisc netem .* dev r2eth0 .*rate 40Mbit'
check "host 2: no other netem" count_is 2 "$out/facts-2/qdisc.txt" '^qdisc netem'
check "host 1: no netem anywhere" count_is 0 "$out/facts-1/qdisc.txt" '^qdisc netem'

# data_flows CAPTURE SRC: the data streams SRC sent in CAPTURE, in the order they began:
# "packets data_bytes first_s last_s goodput_mbit" (rdma-wire --flows' columns 4, 5, 12-14).
data_flows() {
    "$bin/rdma-wire" "$1" --flows --where "src=$2" --where 'payload_bytes~^[1-9]' 2>/dev/null |
        awk -F'\t' 'NR > 1 && $1 !~ /^#/ { print $4, $5, $12, $13, $14 }' | sort -g -k3
}
part traffic
dir=$out/both
for r in 1 2; do
    check "rail $r: rdma-bench wrote its 60 messages (client exit 0, server exit 0)" \
        bash -c "[ \"\$(cat '$dir/rail$r-client.rc')\" = 0 ] && [ \"\$(cat '$dir/rail$r-server.rc')\" = 0 ]"
    check "rail $r: its record's device is rxe$((r - 1))" \
        records_match 1 "$dir/rail$r.json" environment/device "^rxe$((r - 1))\$"
    check "rail $r: its record's server device is rxe$((r - 1))" \
        records_match 1 "$dir/rail$r.json" environment/server/device "^rxe$((r - 1))\$"
    check "rail $r: its record's path MTU is 4096" records_match 1 "$dir/rail$r.json" environment/path_mtu '^4096$'
    check "rail $r: its record's address is on the rail's subnet" \
        records_match 1 "$dir/rail$r.json" environment/port "$([ $r = 1 ] && echo '198\.51\.100\.2' || echo '203\.0\.113\.2')"
done
rail1=$out/rails.pcap rail2=$out/rails.rail-2.pcap
data_flows "$rail1" 198.51.100.2 >"$scratch/rail1.flows"
data_flows "$rail2" 203.0.113.2 >"$scratch/rail2.flows"
# The first data stream on each rail is this world's: 60 messages of 16 KiB (warm-up included).
check "rail 1's capture: its first WRITE stream carried 983,040 bytes ($(head -n 1 "$scratch/rail1.flows"))" \
    bash -c "[ \"\$(head -n 1 '$scratch/rail1.flows' | cut -d' ' -f2)\" = 983040 ]"
check "rail 2's capture: its first WRITE stream carried 983,040 bytes ($(head -n 1 "$scratch/rail2.flows"))" \
    bash -c "[ \"\$(head -n 1 '$scratch/rail2.flows' | cut -d' ' -f2)\" = 983040 ]"
for r in 1 2; do
    file=$out/rails.pcap
    [ "$r" = 1 ] || file=$out/rails.rail-$r.pcap
    other='^203\.0\.113\.'
    [ "$r" = 1 ] || other='^198\.51\.100\.'
    n=$(count_packets "$file" "src~$other")
    check "rail $r's capture: no packet of the other rail's subnet ($n)" [ "$n" = 0 ]
    n=$(count_packets "$file" payload_bytes=4096)
    check "rail $r's capture: WRITEs in 4096-byte packets, path MTU 4096 ($n, at least 240)" \
        bash -c "[ '$n' -ge 240 ]"
    n=$(count_packets "$file" 'frame_length~^(4[1-9][0-9][0-9]|[5-9][0-9][0-9][0-9])$')
    check "rail $r's capture: frames over 4,100 bytes crossed the link ($n)" bash -c "[ '$n' -ge 240 ]"
done

part rail-down
dir=$out/rail2-down
check "host 2 signalled once rail 2's QP was under way ($(cat "$dir/rail2-sent-at-signal" 2>/dev/null) packets sent)" \
    bash -c "[ \"\$(cat '$dir/rail2-sent-at-signal')\" -ge 100 ]"
check "the lab took host 2's rail 2 down" has_line "$out/lab.err" '^\[host2\] lab: host 2 rail 2: link down \('
check "host 2, rail 2 down: r2eth0 down, rxe1 DOWN" \
    bash -c "grep -qx 'r2eth0 down' '$dir/down.txt' && grep -qx 'rxe1 1: DOWN' '$dir/down.txt'"
check "host 2, rail 2 down: eth0 up, rxe0 ACTIVE" \
    bash -c "grep -qx 'eth0 up' '$dir/down.txt' && grep -qx 'rxe0 4: ACTIVE' '$dir/down.txt'"
check "rail 2's client failed on a work completion (exit $(cat "$dir/rail2-client.rc" 2>/dev/null))" \
    bash -c "[ \"\$(cat '$dir/rail2-client.rc')\" = 1 ] && grep -q 'work completion failed' '$dir/rail2-client.out'"
check "rail 1's client ran its 4 s to the end (client exit 0, server exit 0)" \
    bash -c "[ \"\$(cat '$dir/rail1-client.rc')\" = 0 ] && [ \"\$(cat '$dir/rail1-server.rc')\" = 0 ]"
check "rail 1's record: one measurement on rxe0" records_match 1 "$dir/rail1.json" environment/device '^rxe0$' 
# The second stream on each rail is this world's. Both captures are host 1's, one clock: rail 1's
# packets after rail 2's last.
r2_last=$("$bin/rdma-wire" "$rail2" --print time_epoch --where src=203.0.113.2 2>/dev/null | sort -g | tail -n 1)
after=$("$bin/rdma-wire" "$rail1" --print time_epoch --where src=198.51.100.2 --where payload_bytes=4096 2>/dev/null |
    awk -v t="${r2_last:-0}" '$1 > t' | wc -l)
check "rail 1 kept writing after rail 2 fell silent ($after packets of 4096 bytes)" bash -c "[ '$after' -ge 100 ]"
check "rail 1's capture: two WRITE streams, one a world ($(wc -l <"$scratch/rail1.flows"))" count_is 2 "$scratch/rail1.flows" .
# Rail 1's second stream ran 4 s against host 2's 60 Mbit/s (the payload's share of a 4,154-byte
# frame: 59.2): whatever the emulation's speed, netem allows no more.
goodput=$(sed -n 2p "$scratch/rail1.flows" | cut -d' ' -f5)
measured rails-rail1-goodput-mbit "${goodput:-none}"
check "rail 1's WRITEs held to its own rate, 60 Mbit/s ($goodput Mbit/s of payload)" \
    awk -v g="${goodput:-x}" 'BEGIN { exit !(g ~ /^[0-9.]+$/ && g > 0 && g <= 60) }'
check "the lab brought rail 2 back" has_line "$out/lab.err" '^\[host2\] lab: host 2 rail 2: link up \('
check "host 2, rail 2 back: rxe1 ACTIVE again" bash -c "grep -qx 'rxe1 4: ACTIVE' '$dir/after.txt'"
finish
