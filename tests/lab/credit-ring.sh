# Lab test: credit-ring — a ring written with RDMA WRITE is consumed in order while credits flow
# back; a producer that ignores them is caught.
source "$(dirname "$0")/lib.sh" "$@"
pair_expect ring-default credit-ring '^server: verified: ring, 64 messages in content and order$' \
    '^client: done: 64 ring messages through 8 slots, consumed in order \([0-9]+ writes waited for credits\); the server verified every byte$' --
# A slow consumer and a 2-slot ring: the producer must wait for credits, and still nothing breaks.
pair_expect ring-credits credit-ring '^server: verified: ring, 200 messages in content and order' \
    '^client: done: 200 ring messages through 2 slots, consumed in order \([1-9][0-9]* writes waited for credits\)' \
    --slots 2 --consume-delay-us 500 -- -n 200

# A producer that ignores credits overwrites a slot the server has not consumed: caught.
pair_run "$scratch/no-credits" credit-ring --consume-delay-us 2000 -- --ignore-credits --timeout 2
check "no-credits: server exits 1" rc_is "$scratch/no-credits/server.rc" 1
check "no-credits: server detects the overwritten slot" has_line "$scratch/no-credits/server.out" \
    '^server: ring check FAILED: slot [0-9]+ holds message [0-9]+ while message [0-9]+ was due: the producer overwrote'
check "no-credits: client exits 1" rc_is "$scratch/no-credits/client.rc" 1
show_on_failure "$scratch/no-credits"

expect_failure no-slots 2 'slots' "$bin/credit-ring" server --slots 0
expect_failure no-messages 2 'iters' "$bin/credit-ring" client "$addr" -n 0
finish
