# Lab test: gpu-read where there is no GPU: host memory end to end, registered as it is and
# staged through pinned bounce buffers on rxe; the client's bounds check; one clear line for a
# missing GPU. (The staging path's device copies need a GPU: not tested here.)
source "$(dirname "$0")/lib.sh" "$@"

part host
pair_expect host gpu-read \
    '^server: the client disconnected; it read 4096 bytes of host memory without this CPU.s help \(path: host\)$' \
    '^client: verified 4096 bytes fetched with one RDMA READ, checked by the CPU in host memory \(path: host\)$' --
check "probe: dma-buf unsupported by provider rxe" has_line "$scratch/host/client.out" \
    '^client: dma-buf: unsupported by provider rxe \(ibv_reg_dmabuf_mr: EOPNOTSUPP: Operation not supported\)$'
check "probe: peer memory absent" has_line "$scratch/host/server.out" '^server: peer memory: absent \('

part staging
# The server copies its source into the bounce buffer before advertising it; the client's READ
# lands in its bounce buffer and is copied into the destination before the check.
pair_expect staging gpu-read '^server: the client disconnected; it read 4096 bytes .*\(path: staging\)$' \
    '^client: verified 4096 bytes fetched .*\(path: staging\)$' --path staging -- --path staging
check "staging: copied out of the bounce buffer after the READ" has_line "$scratch/staging/client.out" \
    '^client: staging: memcpy copied 4096 bytes from the bounce buffer into host memory$'
pair_expect staging-64KiB gpu-read '^server: the client disconnected; it read 65536 bytes .*\(path: staging\)$' \
    '^client: verified 65536 bytes fetched .*\(path: host\)$' -s 64K --path staging -- -s 64K
pair_expect staging-1-byte gpu-read '^server: the client disconnected; it read 1 bytes .*\(path: host\)$' \
    '^client: verified 1 bytes fetched .*\(path: staging\)$' -s 1 -- -s 1 --path staging

part refusals
pair_run "$scratch/too-big" gpu-read -- -s 5000
check "too-big: client exits 1" rc_is "$scratch/too-big/client.rc" 1
check "too-big: client refuses to read past the advertised buffer" \
    has_line "$scratch/too-big/client.out" "server's buffer holds 4096 bytes; cannot read 5000"

expect_failure cuda-client 1 \
    '^gpu-read: --mem cuda: (no CUDA driver \(libcuda\.so\.1 not found\)|this build has no CUDA backend|cudaGetDeviceCount failed: cudaErrorNoDevice)' \
    "$bin/gpu-read" client "$addr" --mem cuda
expect_failure rocm-server 1 '^gpu-read: --mem rocm: (hipGetDeviceCount failed|this build has no HIP backend)' \
    "$bin/gpu-read" server --mem rocm:2
expect_failure mem-empty-device 2 "--mem: 'rocm:' is not a memory kind" "$bin/gpu-read" server --mem rocm:
finish
