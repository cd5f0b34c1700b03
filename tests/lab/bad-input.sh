# Lab test: bad input and absent peers give one clear line and a non-zero exit, quickly.
source "$(dirname "$0")/lib.sh" "$@"

part absent-peers
# No server listening at the lab's address: rdma_cm rejects the connection.
start=$(date +%s)
expect_failure absent-server 1 'connection rejected by .* is a server running there' \
    "$bin/rdma-write" client "$addr" -p 18999
# Quickly: a rejection, or rdma_cm's own 2 s resolve timeout, not an outer guard's (10 s, scaled
# by RDMALAB_TIME_SCALE where everything runs slower: ASan).
check "absent-server: fails within 10 s" [ $(($(date +%s) - start)) -lt $((10 * ${RDMALAB_TIME_SCALE:-1})) ]

# An address inside the lab's subnet where no host exists. Only inside the guest, which has no
# network path out: on a real host this would send ARP requests onto a real network.
if [ "$RDMALAB_IN_LAB" = vm ]; then
    start=$(date +%s)
    expect_failure unreachable 1 'cannot resolve .* to an RDMA device' "$bin/rdma-read" client 198.51.100.2
    check "unreachable: fails within 10 s" [ $(($(date +%s) - start)) -lt $((10 * ${RDMALAB_TIME_SCALE:-1})) ]
fi

part unknown-device
expect_failure unknown-device-client 1 "no RDMA device named 'nosuch'" "$bin/send-recv" client "$addr" -d nosuch
expect_failure unknown-device-server 1 "no RDMA device named 'nosuch'" "$bin/rdma-write" server -d nosuch
part bad-sizes
expect_failure size-zero 2 "--size: '0' is not a size" "$bin/rdma-write" client "$addr" -s 0
expect_failure size-garbage 2 "--size: 'lots' is not a size" "$bin/rdma-read" server -s lots
part bad-arguments
expect_failure no-address 2 'address is required' "$bin/rdma-write" client
expect_failure name-not-address 2 "'banana' is not a numeric" "$bin/rdma-write" client banana
expect_failure bad-port 2 'port' "$bin/send-recv" server -p 0
expect_failure no-role 2 'subcommand' "$bin/rdma-read"
expect_failure unknown-option 2 'run with --help' "$bin/rdma-read" server --frobnicate
part bad-counts
expect_failure bad-count 2 'iters' "$bin/send-recv" server -n 0
expect_failure loss-too-much 2 '-n 1024 x -s 1048576 is more than 67108864 bytes' \
    "$bin/loss-and-retransmission" client "$addr" -n 1024 -s 1M

part size-too-large
# Larger than the device allows: checked against the port's max message size, on both sides.
expect_failure size-too-large 1 'size 68719476736 is larger than rxe[0-9]+ allows' \
    "$bin/rdma-write" client "$addr" -s 64G
pair_run "$scratch/big-server" rdma-write -s 64G --
check "size-too-large: the server refuses" rc_is "$scratch/big-server/server.rc" 1
check "size-too-large: the server says why" has_line "$scratch/big-server/server.out" 'is larger than rxe[0-9]+ allows'
check "size-too-large: its client is turned away" rc_is "$scratch/big-server/client.rc" 1
check "size-too-large: and told so" has_line "$scratch/big-server/client.out" 'connection rejected|ESTABLISHED'
[ $failures -eq 0 ] || cat "$scratch"/big-server/*.out

part busy-port
# A server already on the port: the second one cannot bind.
timeout 30 "$bin/rdma-read" server -p 18600 --accept-timeout 5 >"$scratch/first.out" 2>&1 &
first=$!
# Wait until it has bound (its "listening" line), not a fixed time: under ASan in the emulated
# guest its start-up can take longer than any short sleep.
for _ in $(seq 200); do
    grep -q 'listening' "$scratch/first.out" 2>/dev/null && break
    sleep 0.1
done
expect_failure busy-port 1 'rdma_bind_addr.*failed: .*is another server running on this port' \
    "$bin/rdma-write" server -p 18600
kill $first 2>/dev/null
wait $first 2>/dev/null

part accept-timeout
# A server nobody connects to gives up by itself.
expect_failure accept-timeout 1 'CONNECT_REQUEST.*no rdma_cm event within 1.0 s' \
    "$bin/send-recv" server --accept-timeout 1
finish
