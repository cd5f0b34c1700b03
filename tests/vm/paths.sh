#!/usr/bin/env bash
# Many paths, on the lab's two-path fabric (lab/paths.sh, docs/lab.md#two-paths): three lab hosts,
# host 2 sending to host 3 through host 1 over paths A and B (tests/vm/paths/worlds.sh runs the
# worlds). Checked on the capture of host 1's link to host 3 (path A is VLAN 10, path B VLAN 20)
# and on host 3's rxe counters:
#   ECMP     16 QPs spread over both paths by their UDP source port, each QP on one path only.
#   spraying one QP's packets on both paths in turn: host 3 counted packets out of sequence and
#            NAKed them (PSN sequence error), and host 2 sent them again (go-back-N).
#   unordered the reliable unordered layer over UD (unordered-delivery), sprayed the same way:
#            its datagrams on both paths and out of order at host 3, placed all the same, every
#            byte verified, at most 2 % sent again (RC: most); its goodput against RC's sprayed.
#   tests/vm/paths.sh BUILD_BIN_DIR
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$repo/build/bin}
source "$repo/tests/checks.sh"
[ -e /dev/kvm ] || [ -x "$(command -v qemu-system-x86_64)" ] || { echo "SKIP: no QEMU"; exit 77; }
out=$(mktemp -d "$repo/build/paths-test.XXXXXX")   # the guests write here
[ -n "${RDMALAB_KEEP_OUTPUT:-}" ] || trap 'rm -rf "$out"' EXIT

part setup
rc=0
"$repo/lab/lab.sh" --hosts 3 --timeout 500 --capture "$out/wire.pcap" -- \
    bash "$repo/tests/vm/paths/worlds.sh" "$bin" "$out" >"$out/lab.out" 2>&1 || rc=$?
check "the lab ran every world (exit $rc)" [ "$rc" = 0 ]
[ "$rc" = 0 ] || tail -n 20 "$out/lab.out"
for h in 1 2 3; do check "host $h set up its part of the fabric" rc_is "$out/setup-$h.rc" 0; done
[ "$(cat "$out/setup-1.rc" 2>/dev/null)" = 0 ] || cat "$out"/setup-*.out

# counter_growth WORLD NAME: how much host 3's rxe counter NAME grew during WORLD.
counter_growth() {
    local before after
    before=$(grep -o "$2 [0-9]*" "$out/$1/stats-before.txt" 2>/dev/null | cut -d' ' -f2)
    after=$(grep -o "$2 [0-9]*" "$out/$1/stats-after.txt" 2>/dev/null | cut -d' ' -f2)
    [ -n "$before" ] && [ -n "$after" ] && echo $((after - before)) || echo none
}
# The RoCE data packets host 2 sent towards host 3, on host 1's link to host 3: per destination QP
# (QP 1, rdma_cm's, left out), the VLANs it travelled on and its packets on each.
# (UD SEND Only packets, BTH opcode 100, are the unordered layer's: left out here.)
tshark -r "$out/wire.link-3.pcap" -Y 'ip.src==198.51.100.2 && infiniband.bth.destqp != 1 && infiniband.bth.opcode != 100' \
    -T fields -e infiniband.bth.destqp -e vlan.id 2>/dev/null | sort | uniq -c >"$out/qp-paths.txt"
# qps_on N: the QPs seen on exactly N paths.
qps_on() { awk '{ paths[$2] = paths[$2] " " $3 } END { for (q in paths) if (split(paths[q], v, " ") == n) print q }' n="$1" "$out/qp-paths.txt"; }
one_path=$(qps_on 1 | wc -l)
both=$(qps_on 2)
on_a=$(awk '$3 == 10' "$out/qp-paths.txt" | wc -l)
on_b=$(awk '$3 == 20' "$out/qp-paths.txt" | wc -l)

part ecmp
check "ecmp: rdma-bench's 16 QPs wrote their messages (client exit 0)" rc_is "$out/ecmp-qps/client.rc" 0
check "ecmp: the 16 QPs each travelled one path only ($one_path)" [ "$one_path" = 16 ]
check "ecmp: both paths carried QPs (A: $on_a, B: $on_b, counting the sprayed one on each)" \
    bash -c "[ $on_a -ge 2 ] && [ $on_b -ge 2 ]"
ecmp_ooo=$(counter_growth ecmp-qps out_of_seq_request)
echo "    ECMP: $((on_a - 1)) QPs on path A, $((on_b - 1)) on path B; out of sequence at host 3: $ecmp_ooo"

part spraying
check "spray: one QP's 200 messages written (client exit 0)" rc_is "$out/spray-qp/client.rc" 0
sprayed=$(echo "$both" | wc -w)
check "spray: exactly one QP travelled both paths ($sprayed)" [ "$sprayed" = 1 ]
split=$(awk -v q="$both" '$2 == q { printf "%s%s:%s", sep, $3, $1; sep = " " }' "$out/qp-paths.txt")
check "spray: its packets split about evenly between the paths ($split)" \
    bash -c "set -- \$(echo '$split' | tr ' :' '\n\n' | awk 'NR % 2 == 0'); [ \$# = 2 ] && [ \$((\$1 * 10)) -ge \$((\$2 * 8)) ] && [ \$((\$2 * 10)) -ge \$((\$1 * 8)) ]"
spray_ooo=$(counter_growth spray-qp out_of_seq_request)
spray_dup=$(counter_growth spray-qp duplicate_request)
check "spray: host 3 counted requests out of sequence ($spray_ooo; $ecmp_ooo under ECMP)" \
    bash -c "[ '$spray_ooo' != none ] && [ '$spray_ooo' -gt 0 ]"
naks=$("$bin/rdma-wire" "$out/wire.link-3.pcap" --count --where 'src=198.51.100.3' \
    --where "qpn=$both" --where 'aeth.syndrome=96' 2>/dev/null || echo 0)
check "capture: host 3 NAKed the sprayed QP's packets, PSN sequence error (AETH 0x60) ($naks)" \
    bash -c "[ '$naks' -gt 0 ]"
flows=$("$bin/rdma-wire" "$out/wire.link-2.pcap" --flows --where 'src=198.51.100.2' \
    --where "qpn=$both" 2>/dev/null)
resent=$(echo "$flows" | awk -F'\t' 'NR == 2 { print $6 }')
check "capture: host 2 sent the sprayed QP's packets again ($resent)" bash -c "[ -n '$resent' ] && [ '$resent' -gt 0 ]"
echo "$flows" | sed 's/^/    /'
echo "    host 3's counters while sprayed: out_of_seq_request $spray_ooo, duplicate_request $spray_dup"

part unordered
u=$out/unordered-spray
check "unordered: the client had every transfer acknowledged (exit 0)" rc_is "$u/client.rc" 0
check "unordered: the server verified every byte (exit 0)" rc_is "$u/server.rc" 0
check "unordered: the server's record: 1 MiB verified" \
    bash -c "[ '$(record_field "$u/server.out" verified)' = 1 ] && [ '$(record_field "$u/server.out" bytes)' = 1048576 ]"
# UD SEND Only (BTH opcode 100) from host 2: the layer's datagrams, per path.
ud_paths=$(tshark -r "$out/wire.link-3.pcap" -Y 'ip.src==198.51.100.2 && infiniband.bth.opcode == 100' \
    -T fields -e vlan.id 2>/dev/null | sort | uniq -c | awk '{ printf "%s%s:%s", sep, $2, $1; sep = " " }')
check "unordered: its datagrams travelled both paths ($ud_paths)" \
    bash -c "[ \$(echo '$ud_paths' | wc -w) = 2 ]"
out_of_order=$(record_field "$u/server.out" out_of_order)
check "unordered: host 3 received datagrams out of order ($out_of_order) and placed them" \
    bash -c "[ -n '$out_of_order' ] && [ '$out_of_order' -gt 0 ]"
gap=$(record_field "$u/client.out" resent_on_gap)
not_needed=$(record_field "$u/client.out" resent_not_needed)
timeouts=$(record_field "$u/client.out" resent_on_timeout)
sent=$(record_field "$u/client.out" sent)
# Reordering as deep as its tolerance (48 datagrams, more once it has seen a resend it did not
# need) costs it nothing; a stall of the emulated router deeper than that can cost a few resends
# (seen: 5 of 1064, once). RC, sprayed the same way, sent 15,000 of 16,000 packets again.
check "unordered: it sent at most 2 % of its datagrams again (on a gap: $gap, $not_needed of them not needed; on a timeout: $timeouts; of $sent)" \
    bash -c "[ -n '$gap' ] && [ -n '$timeouts' ] && [ \$(( ($gap + $timeouts) * 100 )) -le \$(( ${sent:-0} * 2 )) ]"
unordered_mbit=$(record_field "$u/client.out" goodput_mbit)
rc_mbit=$("$bin/rdma-bench" records "$out/spray-qp/bench.json" --get records/0/result/gb_per_s 2>/dev/null |
    awk '{ printf "%.3f", $1 * 1000 }')
check "unordered: its goodput sprayed ($unordered_mbit Mbit/s) is at least 1.8 x RC's sprayed ($rc_mbit)" \
    awk -v u="${unordered_mbit:-0}" -v r="${rc_mbit:-0}" 'BEGIN { exit !(r > 0 && u >= 1.8 * r) }'
echo "    sprayed over two 20 Mbit/s paths (1 and 3 ms): RC $rc_mbit Mbit/s, the unordered layer $unordered_mbit Mbit/s"
finish
