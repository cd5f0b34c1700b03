# Lab test: gpu-write where there is no GPU. Host memory end to end, registered as it is and
# through the staging path (the pinned bounce buffer through rxe, copies around the transfer);
# the registration ladder's probes against rxe; one clear line for a missing GPU, exit 1; bad
# --mem/--path values, exit 2. (The staging path's device copies need a GPU: not tested here.)
source "$(dirname "$0")/lib.sh" "$@"

part host
pair_expect host gpu-write \
    '^server: verified 4096 bytes placed by the client.s RDMA WRITE, checked by the CPU in host memory \(path: host\)$' \
    '^client: wrote 4096 bytes from host memory into the server.s memory with one RDMA WRITE \(path: host\)$' \
    --mem host -- --mem host
out=$scratch/host
# The ladder's rungs, probed against the real provider: rxe has no ibv_reg_dmabuf_mr (libibverbs
# answers EOPNOTSUPP for a provider that does not implement it), and no peer-memory module.
check "probe: dma-buf unsupported by provider rxe (server)" has_line "$out/server.out" \
    '^server: dma-buf: unsupported by provider rxe \(ibv_reg_dmabuf_mr: EOPNOTSUPP: Operation not supported\)$'
check "probe: dma-buf unsupported by provider rxe (client)" has_line "$out/client.out" \
    '^client: dma-buf: unsupported by provider rxe \(ibv_reg_dmabuf_mr: EOPNOTSUPP'
check "probe: peer memory absent" has_line "$out/server.out" \
    '^server: peer memory: absent \(no nvidia_peermem or nv_peer_mem module, no amdkfd peer client, no /sys/kernel/mm/memory_peers\)'
check "host memory is registered as it is" has_line "$out/server.out" \
    '^server: path: host memory, registered as it is with ibv_reg_mr \(4096 bytes\)$'
check "the NIC's writes into host memory need no flush" has_line "$out/server.out" \
    '^server: host memory: the CPU sees the NIC.s writes'

part staging
# Staging on both sides: the client copies its source into its bounce buffer before the WRITE,
# the WRITE lands in the server's bounce buffer, the server copies it into the target.
pair_expect staging gpu-write '^server: verified 4096 bytes placed .*\(path: staging\)$' \
    '^client: wrote 4096 bytes from host memory .*\(path: staging\)$' --path staging -- --path staging
check "staging: the server registers a pinned bounce buffer" has_line "$scratch/staging/server.out" \
    '^server: path: staging: 4096 bytes of pinned host memory \(.*\) registered with ibv_reg_mr; memcpy moves the data between it and host memory around every transfer \(asked for with --path staging\)$'
check "staging: the client too" has_line "$scratch/staging/client.out" '^client: path: staging: 4096 bytes of pinned host memory'
check "staging: the bytes are copied out of the bounce buffer after the write" has_line "$scratch/staging/server.out" \
    '^server: staging: memcpy copied 4096 bytes from the bounce buffer into host memory$'
# A smaller write through a staged 8 KiB buffer: only what was written is copied, the rest stays zero.
pair_expect staging-partial gpu-write '^server: verified 100 bytes placed .*\(path: staging\)$' \
    '^client: wrote 100 bytes .*\(path: staging\)$' -s 8K --path staging -- -s 100 --path staging
# One side staged, the other not, 1 MiB.
pair_expect staging-1MiB gpu-write '^server: verified 1048576 bytes placed .*\(path: staging\)$' \
    '^client: wrote 1048576 bytes .*\(path: host\)$' -s 1M --path staging -- -s 1M

part no-gpu
# No GPU here: one line naming what is missing, exit 1, before the server listens.
cuda_missing='^gpu-write: --mem cuda: (no CUDA driver \(libcuda\.so\.1 not found\)|this build has no CUDA backend|cudaGetDeviceCount failed: cudaErrorNoDevice)'
expect_failure cuda-server 1 "$cuda_missing" "$bin/gpu-write" server --mem cuda
expect_failure cuda-client 1 "$cuda_missing" "$bin/gpu-write" client "$addr" --mem cuda:1
expect_failure rocm-server 1 '^gpu-write: --mem rocm: (hipGetDeviceCount failed: hipErrorNoDevice|this build has no HIP backend)' \
    "$bin/gpu-write" server --mem rocm

part bad-values
# Bad values: one line, exit 2.
expect_failure mem-unknown 2 "^gpu-write: --mem: 'gpu' is not a memory kind \(host, cuda\[:N\], rocm\[:N\]\)" \
    "$bin/gpu-write" server --mem gpu
expect_failure mem-bad-device 2 "--mem: 'cuda:x' is not a memory kind" "$bin/gpu-write" client "$addr" --mem cuda:x
expect_failure mem-host-device 2 "--mem: 'host:0' is not a memory kind" "$bin/gpu-write" server --mem host:0
expect_failure path-unknown 2 "--path: 'bounce' is not a registration path" "$bin/gpu-write" server --path bounce
expect_failure path-needs-gpu 2 "--path: 'dma-buf' needs GPU memory" "$bin/gpu-write" client "$addr" --path dma-buf
finish
