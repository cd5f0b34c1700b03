# Lab test: cm-simple — a round trip through rdma_cm's simplified API (rdma_getaddrinfo,
# rdma_create_ep, rdma_reg_msgs, rdma_post_send/recv, rdma_get_send/recv_comp), verified on both
# sides; its blocking calls are bounded (no server, no client, no host) and answered in one line.
source "$(dirname "$0")/lib.sh" "$@"
pair_expect cm-simple cm-simple '^server: received and verified 4096 bytes \(rdma_post_recv, rdma_get_recv_comp\)' \
    '^client: sent 4096 bytes and got them back, verified, with the simplified API alone' --
pair_expect cm-simple-1M cm-simple '^server: received and verified 1048576 bytes' \
    '^client: sent 1048576 bytes and got them back' -s 1M -- -s 1M
expect_failure cm-simple-no-server 1 '^cm-simple: rdma_connect failed: Connection refused' \
    "$bin/cm-simple" client "$addr" -p 18997
expect_failure cm-simple-no-client 1 '^cm-simple: no client within 1 s' \
    "$bin/cm-simple" server -p 18996 --accept-timeout 1
expect_failure cm-simple-no-host 1 '^cm-simple: rdma_create_ep failed: ' \
    "$bin/cm-simple" client 198.51.100.77 --timeout 3
expect_failure cm-simple-device 1 '^cm-simple: -d and --gid-index are not used here' \
    "$bin/cm-simple" client "$addr" -d rxe0
finish
