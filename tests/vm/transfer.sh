#!/usr/bin/env bash
# The transfer engine's failover, on the wire (issue 43): two hosts on two rails, each held to
# 40 Mbit/s, transfer-bench writing 96 batches of 8 x 64 KiB over both with every byte checked;
# at a seeded moment host 1's rail 2 goes down under the transfer (tests/vm/transfer/hosts.sh):
# host 2's QP on rail 2 sends into silence until its retries run out.
# Checked from transfer-bench's records and the two rails' captures (the runs told apart by the
# SYN-ACK of each run's TCP exchange on rail 1):
#   lesson    first the multi-rail lesson, host 2 writing 1 MiB to host 1 over both rails: every
#             byte verified, and WRITEs on each rail's wire
#   returns   a first run, host 2's own rail 2 down for 2 s under the batches: the engine takes
#             the rail down, tries it again after its back-off (a fresh QP on both sides, a probe)
#             until the link is back, and rail 2 carries slices again: on the wire, host 2's
#             WRITEs on rail 2 go to a fresh pair of the server's QPs (--qps 2), with payload
#   failover  every batch completed and the server verified every one; both rails carried
#             slices (in the engine's count and in each rail's capture); rail 2 is down, its
#             slices were posted again on rail 1, and rail 1 wrote after rail 2's last packet
#   timing    from rail 2's last ACK to the first of its slices on rail 1 (a WRITE to an
#             address rail 2 had carried), within twice the bound the QPs' settings predict,
#             (retry_cnt + 1) x 4.096 us x 2^timeout = 268 ms for 3 and 14; likewise the engine's
#             own time from the rail's last completion to its failure
#   vanished  a second run on rail 1 alone, its server killed under the batches: the client
#             ends, not hangs: exit 1, one line naming the dead rail, well inside its timeout
#   many      many-to-one: a server taking two clients at once (--clients 2), both writing
#             16 batches with two QPs on the rail (--qps 2): each client's record verified, the
#             server verified all 32; on the wire, four QPs of the server's took WRITEs, each
#             from one UDP source port (rxe's, a hash of the QP numbers: what ECMP hashes), and
#             from more than one port among them
#   tests/vm/transfer.sh BUILD_BIN_DIR   (RDMALAB_SEED=N: the moment's seed; default: random)
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$repo/build/bin}
source "$repo/tests/checks.sh"
[ -e /dev/kvm ] || [ -x "$(command -v qemu-system-x86_64)" ] || { echo "SKIP: no QEMU"; exit 77; }
out=$(mktemp -d "$repo/build/transfer-test.XXXXXX")   # the guests write here
scratch=$out                                            # checks.sh's record readers write here
[ -n "${RDMALAB_KEEP_OUTPUT:-}" ] || trap 'rm -rf "$out"' EXIT
seed=${RDMALAB_SEED:-$((RANDOM))}
echo "    seed $seed (RDMALAB_SEED=$seed runs this moment again)"

part setup
rc=0
"$repo/lab/lab.sh" --hosts 2 --rails 2 --timeout 240 --capture "$out/wire.pcap" \
    --rate 2:40mbit --rate 2.2:40mbit --link-down 2.2@signal+2 --link-down 1.2@signal -- \
    bash "$repo/tests/vm/transfer/hosts.sh" "$bin" "$out" "$seed" >"$out/lab.out" 2>&1 || rc=$?
check "the lab ran both hosts (exit $rc)" [ "$rc" = 0 ]
[ "$rc" = 0 ] || tail -n 20 "$out/lab.out"
check "a capture per rail" bash -c "[ -s '$out/wire.pcap' ] && [ -s '$out/wire.rail-2.pcap' ]"

# The runs' windows on the capture's clock: each began with its TCP exchange (one SYN-ACK each).
# (The first of each TCP stream's: a SYN-ACK sent again under a slow guest is not a run.)
mapfile -t run_start < <(tshark -r "$out/wire.pcap" -Y 'tcp.flags.syn==1 && tcp.flags.ack==1' \
    -T fields -e tcp.stream -e frame.time_epoch 2>/dev/null | awk '!seen[$1]++ { print $2 }')
check "five runs on the wire (${#run_start[@]} TCP exchanges)" [ "${#run_start[@]}" = 5 ]
returns_from=${run_start[0]:-0} failover_from=${run_start[1]:-0} vanished_from=${run_start[2]:-0}

part lesson
check "multi-rail: both sides exit 0" \
    bash -c "[ \"\$(cat '$out/lesson-client.rc')\" = 0 ] && [ \"\$(cat '$out/lesson-server.rc')\" = 0 ]"
check "multi-rail: the server verified every byte" \
    has_line "$out/lesson-server.out" '^server: the notice arrived on rail 1; all 1048576 bytes verified'
check "multi-rail: rail 2 is its own device (rxe1)" has_line "$out/lesson-client.out" '^client: rail 2 connected over rxe1 '
before="frame.time_epoch < $returns_from && infiniband.bth.opcode >= 6 && infiniband.bth.opcode <= 11"
lesson1=$(tshark -r "$out/wire.pcap" -Y "$before" 2>/dev/null | wc -l)
lesson2=$(tshark -r "$out/wire.rail-2.pcap" -Y "$before" 2>/dev/null | wc -l)
check "multi-rail: each rail's wire carried WRITEs (rail 1: $lesson1, rail 2: $lesson2 packets)" \
    bash -c "[ '$lesson1' -ge 512 ] && [ '$lesson2' -ge 512 ]"

part returns
r=$out/returns-client.out
check "the client completed every batch (exit $(cat "$out/returns-client.rc" 2>/dev/null))" rc_is "$out/returns-client.rc" 0
check "the server verified all 96" has_line "$out/returns-server.out" '^server: 96 batches verified here$'
check "the server renewed rail 2 at the client's request" has_line "$out/returns-server.out" '^server: rail 2 renewed'
went_down=$(record_field "$r" rail2_failures) restored=$(record_field "$r" rail2_restored)
echo "    rail 2 went down $went_down time(s) (its own link, then probes while it was still down), came back $restored time(s)"
check "rail 2 went down, came back, and is up at the end (failures $went_down, restored $restored)" \
    bash -c "[ '${went_down:-0}' -ge 1 ] && [ '${restored:-0}' -ge 1 ] && [ '$(record_field "$r" rail2_up)' = 1 ]"
r1=$(record_field "$r" rail1_bytes) r2=$(record_field "$r" rail2_bytes)
check "the bytes add up: $r1 + $r2 = 50331648, every one verified" \
    bash -c "[ $((${r1:-0} + ${r2:-0})) = 50331648 ] && [ '$(record_field "$r" verified)' = 1 ]"
window="frame.time_epoch >= $returns_from && frame.time_epoch < $failover_from"
writes='udp.dstport==4791 && ip.src==203.0.113.2 && infiniband.bth.opcode <= 11 && infiniband.bth.opcode >= 6'
# Two QPs a rail (--qps 2): the first two the server's QPs to take WRITEs on rail 2 are the
# rail's first pair; any after them are a renewal's.
tshark -r "$out/wire.rail-2.pcap" -Y "$writes && $window" -T fields -e infiniband.bth.destqp 2>/dev/null \
    >"$out/returns-rail-2-qps"
qps=$(sort -u "$out/returns-rail-2-qps" | wc -l)
fresh_writes=$(awk '!($1 in seen) { seen[$1] = ++n } seen[$1] > 2 { w++ } END { print w + 0 }' "$out/returns-rail-2-qps")
check "on rail 2, host 2 wrote to the server's first two QPs, then to fresh ones ($qps in all)" [ "$qps" -ge 4 ]
check "the fresh QPs carried slices ($fresh_writes WRITE packets)" bash -c "[ '${fresh_writes:-0}' -gt 10 ]"

part failover
c=$out/client.out
check "the client completed every batch (exit $(cat "$out/client.rc" 2>/dev/null))" rc_is "$out/client.rc" 0
check "the server verified every batch (exit $(cat "$out/server.rc" 2>/dev/null))" rc_is "$out/server.rc" 0
check "the server says so: 96 batches verified" has_line "$out/server.out" '^server: 96 batches verified here$'
check "the client's record: 96 batches, checked" \
    bash -c "[ '$(record_field "$c" batches)' = 96 ] && [ '$(record_field "$c" verified)' = 1 ]"
rail1=$(record_field "$c" rail1_bytes) rail2=$(record_field "$c" rail2_bytes)
check "both rails carried slices that landed (rail 1: $rail1 bytes, rail 2: $rail2)" \
    bash -c "[ '${rail1:-0}' -gt 0 ] && [ '${rail2:-0}' -gt 0 ]"
check "the bytes add up: $rail1 + $rail2 = 50331648" bash -c "[ $((${rail1:-0} + ${rail2:-0})) = 50331648 ]"
check "rail 2 is down at the end, rail 1 up" \
    bash -c "[ '$(record_field "$c" rail2_up)' = 0 ] && [ '$(record_field "$c" rail1_up)' = 1 ]"
check "rail 2 was tried again while its peer's link stayed down, and never came back (failures $(record_field "$c" rail2_failures))" \
    bash -c "[ '$(record_field "$c" rail2_failures)' -ge 2 ] && [ '$(record_field "$c" rail2_restored)' = 0 ]"
reposted=$(record_field "$c" reposted)
check "slices were posted again after rail 2 failed ($reposted)" bash -c "[ '${reposted:-0}' -gt 0 ]"
writes1=$("$bin/rdma-wire" "$out/wire.pcap" --count --where 'opcode_name~RDMA WRITE' 2>/dev/null || echo 0)
writes2=$("$bin/rdma-wire" "$out/wire.rail-2.pcap" --count --where 'opcode_name~RDMA WRITE' 2>/dev/null || echo 0)
check "each rail's capture holds WRITEs (rail 1: $writes1, rail 2: $writes2)" \
    bash -c "[ '$writes1' -gt 0 ] && [ '$writes2' -gt 0 ]"
# Rail 2's death: the last packet host 1 sent on it (its ACKs stop when its link goes down).
window="frame.time_epoch >= $failover_from && frame.time_epoch < $vanished_from"
last2=$(tshark -r "$out/wire.rail-2.pcap" -Y "udp.dstport==4791 && ip.src==203.0.113.1 && $window" -T fields -e frame.time_epoch 2>/dev/null | tail -n 1)
after=$(tshark -r "$out/wire.pcap" -Y "udp.dstport==4791 && frame.time_epoch > ${last2:-0} && $window" 2>/dev/null | wc -l)
check "rail 1 carried on after rail 2's last ACK ($after packets)" bash -c "[ '$after' -gt 0 ]"

part timing
# On the wire: the first slice posted again is a WRITE on rail 1 to an address (RETH va) that
# rail 2 had carried, after rail 2's last ACK; the time between them is the failover.
tshark -r "$out/wire.rail-2.pcap" -Y "infiniband.reth.va && $window" -T fields -e infiniband.reth.va 2>/dev/null |
    sort -u >"$out/rail-2-addresses"
resumed=$(tshark -r "$out/wire.pcap" -Y "infiniband.reth.va && frame.time_epoch > ${last2:-0} && $window" \
    -T fields -e frame.time_epoch -e infiniband.reth.va 2>/dev/null |
    awk -v last="${last2:-0}" 'NR == FNR { sent[$1] = 1; next } ($2 in sent) { printf "%.1f", ($1 - last) * 1000; exit }' \
        "$out/rail-2-addresses" -)
detect=$(record_field "$c" rail2_detect_ms)
echo "    rail 2 taken down $(cat "$out/killed-at-ms" 2>/dev/null) ms into the batches; the first slice sent again on rail 1 ${resumed:-never} ms after rail 2's last ACK; the engine noticed $detect ms after rail 2's last completion"
check "a slice rail 2 had carried went again on rail 1 within 2 x 268.4 ms of rail 2's last ACK (${resumed:-never} ms)" \
    awk -v d="${resumed:-99999}" 'BEGIN { exit !(d > 0 && d <= 2 * 268.435456) }'
check "the engine noticed within 2 x 268.4 ms of rail 2's last completion ($detect ms)" \
    awk -v d="${detect:-99999}" 'BEGIN { exit !(d > 0 && d <= 2 * 268.435456) }'
part vanished
v=$out/vanished-client
check "the server was killed under the batches (exit $(cat "$out/vanished-server.rc" 2>/dev/null))" rc_is "$out/vanished-server.rc" 137
check "the client ended with exit 1 ($(cat "$v.rc" 2>/dev/null)), not by its 60 s time limit" rc_is "$v.rc" 1
check "one line said why: $(head -c 150 "$v.err" 2>/dev/null)" \
    bash -c "[ \$(wc -l <'$v.err') = 1 ] && grep -q 'no rail left (rail 1: ' '$v.err'"
part many
for c in 1 2; do
    check "client $c completed its 16 batches (exit $(cat "$out/many-client-$c.rc" 2>/dev/null))" \
        rc_is "$out/many-client-$c.rc" 0
    check "client $c's record: two QPs a rail" record_has "$out/many-client-$c.json" config/qps_per_rail '^2$'
    check "client $c's record: every byte verified" record_has "$out/many-client-$c.json" result/verified '^true$'
done
window="frame.time_epoch >= ${run_start[3]:-0}"
rail1_writes='udp.dstport==4791 && ip.src==198.51.100.2 && infiniband.bth.opcode <= 11 && infiniband.bth.opcode >= 6'
tshark -r "$out/wire.pcap" -Y "$rail1_writes && $window" -T fields -e infiniband.bth.destqp -e udp.srcport \
    2>/dev/null | sort -u >"$out/many-qps"
qps=$(cut -f1 "$out/many-qps" | sort -u | wc -l) ports=$(cut -f2 "$out/many-qps" | sort -u | wc -l)
flows=$(wc -l <"$out/many-qps")
check "on the wire, the server's QPs that took WRITEs: 4, two per client ($qps)" [ "$qps" = 4 ]
# rxe's source port is a 14-bit hash of the two QP numbers (the kernel's rdma_get_udp_sport):
# fixed for each QP, so each QP's packets take one path; two QPs may hash alike.
check "each QP's WRITEs came from one UDP source port ($flows QP-port pairs for $qps QPs)" [ "$flows" = "$qps" ]
check "more than one source port among them: flows an ECMP hash can tell apart ($ports)" [ "$ports" -ge 2 ]
check "the server took both at once and verified all 32 batches (exit $(cat "$out/many-server.rc" 2>/dev/null))" \
    bash -c "[ \"\$(cat '$out/many-server.rc')\" = 0 ] && grep -q '^server: 32 batches verified here$' '$out/many-server.out' && grep -q '^record side=server clients=2 bytes=8388608 ' '$out/many-server.out'"
finish
