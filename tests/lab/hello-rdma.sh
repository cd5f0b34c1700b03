# Lab test: hello-rdma, the self-contained program (libibverbs and librdmacm only), writes its
# greeting into the server's memory and the server finds it there; bad input and a server that
# nobody reaches get one line and a non-zero exit.
source "$(dirname "$0")/lib.sh" "$@"
part hello
pair_expect hello hello-rdma '^server: found "Hello from the client, placed by RDMA WRITE" \(43 bytes\)' \
    '^client: wrote 43 bytes into the server' --
check "hello: the server saw the client leave" \
    has_line "$scratch/hello/server.out" '^server: verified the greeting; the client disconnected'
check "hello: the client learned the server's buffer from rdma_cm's private data" \
    has_line "$scratch/hello/client.out" "^client: connected; the server's buffer: address 0x[0-9a-f]+, rkey 0x[0-9a-f]+, 64 bytes"
part bad-input
expect_failure hello-no-role 2 'server or client' "$bin/hello-rdma"
expect_failure hello-not-an-address 2 "'banana' is not an IPv4 address" "$bin/hello-rdma" client banana
expect_failure hello-bad-port 2 'port is a number' "$bin/hello-rdma" server -p 70000
expect_failure hello-unknown-option 2 'unknown option --frobnicate' "$bin/hello-rdma" server --frobnicate 1
part no-peer
expect_failure hello-nobody-there 1 'got RDMA_CM_EVENT_REJECTED \(is a server listening there\?\)' "$bin/hello-rdma" client "$addr" -p 18998
expect_failure hello-nobody-comes 1 'no client within 1 s' "$bin/hello-rdma" server --accept-timeout 1
finish
