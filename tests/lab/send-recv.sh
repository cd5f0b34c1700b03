# Lab test: send-recv delivers each message whole, in its own receive, in order.
source "$(dirname "$0")/lib.sh" "$@"
pair_expect sendrecv-default send-recv '^server: verified 8 messages' \
    '^client: sent 8 messages of 4 sizes; the server received and verified all of them' --
check "message boundaries: 1365-byte message in receive 1" \
    has_line "$scratch/sendrecv-default/server.out" '^server: message 1: 1365 bytes in receive 1, content verified'
check "message boundaries: 1-byte message in receive 2" \
    has_line "$scratch/sendrecv-default/server.out" '^server: message 2: 1 bytes in receive 2, content verified'
pair_expect sendrecv-one-byte send-recv '^server: verified 1 messages' '^client: sent 1 messages' \
    -s 1 -n 1 -- -s 1 -n 1
pair_expect sendrecv-many send-recv '^server: verified 64 messages' '^client: sent 64 messages' \
    -s 64K -n 64 -- -s 64K -n 64
finish
