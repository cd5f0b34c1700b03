# Lab test: rendezvous — the server RDMA-READs a buffer the client advertised in a SEND and answers
# FIN; the client releases its buffer only then.
source "$(dirname "$0")/lib.sh" "$@"
pair_expect rndv-default rendezvous \
    '^server: verified: rendezvous, 1048576 bytes pulled with RDMA READ$' \
    '^client: done: 1048576 bytes by rendezvous, released after FIN; the server verified every byte$' --
check "rndv-default: the buffer is released only after FIN" \
    has_line "$scratch/rndv-default/client.out" '^client: FIN: the server read and verified 1048576 bytes; only now'
pair_expect rndv-read-small rendezvous '^server: verified: rendezvous, 100 bytes pulled' \
    '^client: done: 100 bytes by rendezvous, released after FIN; the server verified' -- -s 100

# An offer larger than the server accepts: validated before any READ.
pair_run "$scratch/too-big" rendezvous -- -s 2M --timeout 2
check "too-big: server exits 1" rc_is "$scratch/too-big/server.rc" 1
check "too-big: server says why" has_line "$scratch/too-big/server.out" \
    'the client offers 2097152 bytes; this server accepts at most 1048576 \(-s\)'
check "too-big: client exits 1" rc_is "$scratch/too-big/client.rc" 1
show_on_failure "$scratch/too-big"

# The ring's options belong to credit-ring now: refused here, not ignored.
expect_failure bad-mode 2 'mode' "$bin/rendezvous" client "$addr" --mode read
finish
