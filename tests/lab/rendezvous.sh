# Lab test: rendezvous — the server RDMA-READs a buffer the client advertised in a SEND and answers
# FIN; then a ring written with RDMA WRITE is consumed in order while credits flow back.
source "$(dirname "$0")/lib.sh" "$@"
pair_expect rndv-default rendezvous \
    '^server: verified: rendezvous, 1048576 bytes pulled with RDMA READ; ring, 64 messages in content and order' \
    '^client: done: 1048576 bytes by rendezvous, released after FIN; 64 ring messages through 8 slots' --
check "rndv-default: the buffer is released only after FIN" \
    has_line "$scratch/rndv-default/client.out" '^client: FIN: the server read and verified 1048576 bytes; only now'
pair_expect rndv-read-small rendezvous '^server: verified: rendezvous, 100 bytes pulled' \
    '^client: done: 100 bytes by rendezvous, released after FIN; the server verified' -- --mode read -s 100
# A slow consumer and a 2-slot ring: the producer must wait for credits, and still nothing breaks.
pair_expect ring-credits rendezvous '^server: verified: ring, 200 messages in content and order' \
    '^client: done: 200 ring messages through 2 slots, consumed in order \([1-9][0-9]* writes waited for credits\)' \
    --slots 2 --consume-delay-us 500 -- --mode ring -n 200

# A producer that ignores credits overwrites a slot the server has not consumed: caught.
pair_run "$scratch/no-credits" rendezvous --consume-delay-us 2000 -- --mode ring --ignore-credits --timeout 2
check "no-credits: server exits 1" rc_is "$scratch/no-credits/server.rc" 1
check "no-credits: server detects the overwritten slot" has_line "$scratch/no-credits/server.out" \
    '^server: ring check FAILED: slot [0-9]+ holds message [0-9]+ while message [0-9]+ was due: the producer overwrote'
check "no-credits: client exits 1" rc_is "$scratch/no-credits/client.rc" 1
show_on_failure "$scratch/no-credits"
# An offer larger than the server accepts: validated before any READ.
pair_run "$scratch/too-big" rendezvous -- -s 2M --timeout 2
check "too-big: server exits 1" rc_is "$scratch/too-big/server.rc" 1
check "too-big: server says why" has_line "$scratch/too-big/server.out" \
    'the client offers 2097152 bytes; this server accepts at most 1048576 \(-s\)'
check "too-big: client exits 1" rc_is "$scratch/too-big/client.rc" 1
show_on_failure "$scratch/too-big"

expect_failure bad-mode 2 'mode' "$bin/rendezvous" client "$addr" --mode write
expect_failure no-slots 2 'slots' "$bin/rendezvous" server --slots 0
expect_failure no-messages 2 'iters' "$bin/rendezvous" client "$addr" -n 0
finish
