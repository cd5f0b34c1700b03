# Lab test: proxy — a host thread as the producer ("device"), a CPU proxy thread turning its ring
# of requests into RDMA WRITEs and returning completions through a second ring; the server
# checks every byte of every request; the client's latency breakdown, each leg a median and a
# p99; the ring alone (no-nic); a client asking for more than the server holds; bad input.
# (The CUDA producer needs a GPU: gpu/device-bundle.sh proxy, then proxy no-nic --mem cuda.)
source "$(dirname "$0")/lib.sh" "$@"
leg=' +-?[0-9]+\.[0-9]{2} +-?[0-9]+\.[0-9]{2}$'

part breakdown
pair_expect one proxy \
    '^server: verified 200 requests of 4096 bytes \(819200 bytes, a pattern per request, every byte\) placed by the client.s proxy with RDMA WRITE; checked by the CPU in host memory$' \
    '^client: 200 requests of 4096 bytes produced by a host thread \(standing in for a GPU kernel\), each turned into an RDMA WRITE by the proxy thread and its completion returned through the ring \(path: host\)$' \
    -n 200 -- -n 200
out=$scratch/one/client.out
check "the producer and the rings are named" has_line "$out" \
    '^client: producer: a host thread .*; rings: 16 request \+ 16 completion slots in [0-9]+ bytes of host memory; 200 requests of 4096 bytes, 1 in flight$'
check "breakdown: a header for 200 requests" has_line "$out" '^client:   latency per request, 200 requests +median +p99  \(µs\)$'
for name in 'producer enqueue → proxy sees the doorbell' 'proxy sees it → ibv_post_send returned' \
    'posted → completion polled \(the WRITE\)' 'completion polled → completion ring written' \
    'completion ring written → producer sees it' "total: the producer's round trip"; do
    check "breakdown: $name" has_line "$out" "^client:   $name$leg"
done
check "breakdown: the legs are in time order (no negative median or p99)" count_is 0 "$out" '^client:   .* -[0-9]'
check "the rate" has_line "$out" '^client: 200 requests in [0-9.]+ ms by the producer.s clock: [0-9]+ requests/s$'
check "Soft-RoCE numbers are labelled" has_line "$out" '^client: rxe[0-9]* is Soft-RoCE: these are Soft-RoCE numbers'

part in-flight
# Eight in flight, 100-byte requests: the 16-slot rings wrap many times, still in order.
pair_expect in-flight proxy '^server: verified 300 requests of 100 bytes \(30000 bytes' \
    '^client: 300 requests of 100 bytes produced by a host thread' -n 300 -s 100 -- -n 300 -s 100 --in-flight 8
check "in-flight: 8 in flight" has_line "$scratch/in-flight/client.out" '; 300 requests of 100 bytes, 8 in flight$'
part staging
# The staging path: the proxy copies each request into the bounce buffer before its WRITE.
pair_expect staging proxy '^server: verified 50 requests of 4096 bytes' \
    '^client: 50 requests of 4096 bytes .*\(path: staging\)$' -n 50 -- -n 50 --path staging

part no-nic
# The ring alone: no NIC, no server, an honest label, the producer's bytes checked.
"$bin/proxy" no-nic -n 2000 -s 64 --in-flight 4 >"$scratch/no-nic.out" 2>&1
echo $? >"$scratch/no-nic.rc"
check "no-nic: exits 0" rc_is "$scratch/no-nic.rc" 0
check "no-nic: says what it measures" has_line "$scratch/no-nic.out" \
    '^no-nic: no NIC and no verbs: the proxy completes each request as soon as it sees it; what is measured is the ring alone'
for name in 'producer enqueue → proxy sees the doorbell' 'proxy sees it → completion ring written' \
    'completion ring written → producer sees it' "total: the producer's round trip"; do
    check "no-nic: $name" has_line "$scratch/no-nic.out" "^no-nic:   $name$leg"
done
check "no-nic: the rate" has_line "$scratch/no-nic.out" '^no-nic: 2000 requests in [0-9.]+ ms by the producer.s clock: [0-9]+ requests/s$'
check "no-nic: no WRITE leg" count_is 0 "$scratch/no-nic.out" 'ibv_post_send|WRITE'
check "no-nic: the producer's bytes verified" has_line "$scratch/no-nic.out" \
    '^no-nic: verified 2000 requests of 64 bytes where the producer wrote them, in host memory, checked by the CPU$'
[ $failures -eq 0 ] || cat "$scratch/no-nic.out"

part refusals
# A client that would write more than the server holds is refused before any WRITE.
pair_run "$scratch/too-many" proxy -n 10 --timeout 2 -- -n 20 --timeout 2
check "too-many: client exits 1" rc_is "$scratch/too-many/client.rc" 1
check "too-many: client says why" has_line "$scratch/too-many/client.out" \
    "the server's buffer holds 40960 bytes; cannot write 81920"
show_on_failure "$scratch/too-many"

expect_failure in-flight-0 2 '^proxy: --in-flight' "$bin/proxy" client "$addr" --in-flight 0
expect_failure in-flight-17 2 '^proxy: --in-flight' "$bin/proxy" no-nic --in-flight 17
expect_failure too-much 2 '^proxy: -n 1000 requests of -s 2097152 bytes is more than' "$bin/proxy" no-nic -n 1000 -s 2M
expect_failure rocm 1 '^proxy: --mem rocm: the proxy lesson has no HIP producer' "$bin/proxy" no-nic --mem rocm
expect_failure cuda 1 '^proxy: --mem cuda: (no CUDA driver \(libcuda\.so\.1 not found\)|this build has no CUDA backend|cudaGetDeviceCount failed: cudaErrorNoDevice)' \
    "$bin/proxy" no-nic --mem cuda
finish
