# Lab test: srq serves several concurrent clients from one shared receive queue, verifies every
# message per connection (by QP number), and refills on IBV_EVENT_SRQ_LIMIT_REACHED.
source "$(dirname "$0")/lib.sh" "$@"

show() { for f in "$1"/*.out; do echo "--- $f"; cat "$f"; done; }

part default
dir=$scratch/default
group_run "$dir" srq 3 --
check "default: server exits 0" rc_is "$dir/server.rc" 0
for k in 1 2 3; do
    check "default: client $k exits 0" rc_is "$dir/client$k.rc" 0
    check "default: server verified client $k's 20 messages, by QP number" \
        has_line "$dir/server.out" "^server: client $k \(QP 0x[0-9a-f]+\): 20 messages, every one verified"
    check "default: some client is number $k and was told all 20 were verified" \
        grep -qE "^client: client $k of 3: sent 20 messages; the server verified all 20" "$dir"/client*.out
done
check "default: one SRQ served 60 messages" \
    has_line "$dir/server.out" '^server: verified 60 messages from 3 clients through one SRQ of [0-9]+ receives'
# Soft-RoCE in the lab delivers the limit event; if a kernel did not, the server says so.
check "default: the SRQ limit event arrived and triggered refills" \
    has_line "$dir/server.out" '^server: IBV_EVENT_SRQ_LIMIT_REACHED: fewer than [0-9]+ receives were left .*; refilled [0-9]+ with one ibv_post_srq_recv'
check "default: no report of a missing limit event" \
    bash -c "! grep -q 'did not deliver IBV_EVENT_SRQ_LIMIT_REACHED' '$dir/server.out'"
[ $failures -eq 0 ] || show "$dir"

part small-srq
# Two clients, larger messages, a smaller SRQ: more refills.
dir=$scratch/small-srq
before=$failures
group_run "$dir" srq 2 --clients 2 --srq-depth 8 -s 1K -- -n 30 -s 1K
check "small-srq: server exits 0" rc_is "$dir/server.rc" 0
check "small-srq: clients exit 0" bash -c "[ \$(cat '$dir/client1.rc')\$(cat '$dir/client2.rc') = 00 ]"
check "small-srq: 60 messages through one SRQ" \
    has_line "$dir/server.out" '^server: verified 60 messages from 2 clients through one SRQ of [0-9]+ receives; [2-9][0-9]* refills'
[ $failures -eq $before ] || show "$dir"

part missing-client
# A client missing: the server gives up accepting, the client waiting for "go" gives up too (or
# hears the server go first: RDMA_CM_EVENT_DISCONNECTED).
dir=$scratch/missing-client
before=$failures
group_run "$dir" srq 1 --clients 2 --accept-timeout 2 -- --timeout 3
check "missing-client: server exits 1" rc_is "$dir/server.rc" 1
check "missing-client: server says it waited for a connection" \
    has_line "$dir/server.out" '^srq: waiting for RDMA_CM_EVENT_CONNECT_REQUEST.*no rdma_cm event within 2.0 s'
check "missing-client: client exits 1" rc_is "$dir/client1.rc" 1
check "missing-client: client says what it waited for" \
    has_line "$dir/client1.out" "^srq: the server's go \(are all clients connected\?\): (no completion within 3.0 s|the peer disconnected \(RDMA_CM_EVENT_DISCONNECTED\) before it completed)$"
[ $failures -eq $before ] || show "$dir"

part refusals
# Messages larger than the server's receive buffers are refused before they are sent.
dir=$scratch/too-big
before=$failures
group_run "$dir" srq 1 --clients 1 --timeout 3 -- -s 1K
check "too-big: client exits 1" rc_is "$dir/client1.rc" 1
check "too-big: client says why" \
    has_line "$dir/client1.out" "^srq: the server's receive buffers hold 256 bytes; cannot send 1024"
check "too-big: server exits 1" rc_is "$dir/server.rc" 1
[ $failures -eq $before ] || show "$dir"

expect_failure no-clients 2 'clients' "$bin/srq" server --clients 0
expect_failure size-below-header 2 "'4' is too small: every message starts with an 8-byte header" \
    "$bin/srq" client "$addr" -s 4
finish
