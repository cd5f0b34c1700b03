# Lab test: async-events — an event thread reads and acknowledges the device's asynchronous
# events: the SRQ limit (fires once fewer receives remain than armed), a QP on an SRQ moved to
# ERROR (the provider's answer stated), and the port going down and up while this test takes the
# lab's link down for a second. The link and its GID table are checked restored before the next
# test.
source "$(dirname "$0")/lib.sh" "$@"
out=$scratch/async-events.out
netdev=$(rdma link show | sed -n 's/.* netdev \([^ ]*\).*/\1/p' | head -n 1)
"$bin/devices" >"$scratch/devices-before.out" 2>&1
timeout -k 5 60 "$bin/async-events" --port-events 20 >"$out" 2>&1 &
pid=$!
for _ in $(seq 200); do has_line "$out" '^async-events: waiting up to' && break; sleep 0.05; done
check "the link to toggle is known ($netdev)" [ -n "$netdev" ]
ip link set "$netdev" down && sleep 1 && ip link set "$netdev" up
wait $pid
echo $? >"$scratch/rc"
check "exits 0" rc_is "$scratch/rc" 0
check "the SRQ limit event, read by the thread" has_line "$out" '^async-events: event SRQ limit reached \(on an SRQ\) — post more receives'
check "the limit came after 13 SENDs left 3" has_line "$out" '^async-events: 13 SENDs left 3 receives posted'
check "the QP in ERROR on the SRQ: event or the provider's silence stated" \
    has_line "$out" '^async-events: (the QP in ERROR on the SRQ reported IBV_EVENT_QP_LAST_WQE_REACHED|rxe0 sent no IBV_EVENT_QP_LAST_WQE_REACHED)'
check "port error seen" has_line "$out" '^async-events: event port error \(port 1\)'
check "port active seen" has_line "$out" '^async-events: event port active \(port 1\)'
check "every event acknowledged" has_line "$out" '^async-events: [0-9]+ events read and acknowledged'
[ $failures -eq 0 ] || cat "$out"
# The next tests need the port ACTIVE with the same GIDs.
for _ in $(seq 100); do
    "$bin/devices" >"$scratch/devices-after.out" 2>&1
    cmp -s "$scratch/devices-before.out" "$scratch/devices-after.out" && break
    sleep 0.1
done
check "the port and its GID table are as before" cmp -s "$scratch/devices-before.out" "$scratch/devices-after.out"
finish
