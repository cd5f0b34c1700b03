# Lab test: rdma-read fetches the server's buffer, verified by the client, at several sizes; a
# fenced SEND relays what a READ fetched.
source "$(dirname "$0")/lib.sh" "$@"
pair_expect read-default rdma-read '^server: the client disconnected' \
    '^client: verified 4096 bytes fetched with one RDMA READ' --
# The fence: a READ and a SEND of what it fetched, posted together. The fenced SEND must carry
# the READ's bytes (the server exits 1 otherwise); the unfenced one's luck is reported either way.
out=$scratch/read-default
check "fence: the fenced SEND carried the bytes the READ fetched" has_line "$out/server.out" \
    '^server: \[fence\] SEND 2, IBV_SEND_FENCE: the 4096 bytes the READ fetched, verified'
check "fence: what the unfenced SEND carried is reported" has_line "$out/server.out" \
    '^server: \[fence\] SEND 1, no fence: (STALE \(byte [0-9]+ of 4096 differs\)|the fetched bytes this time)'
check "fence: the client posted both pairs" has_line "$out/client.out" \
    '^client: \[fence\] READ \+ SEND of what it fetched, posted together, IBV_SEND_FENCE on the SEND: both completed'
pair_expect read-1-byte rdma-read '^server: the client disconnected' '^client: verified 1 bytes fetched' \
    -s 1 -- -s 1
pair_expect read-64KiB rdma-read '^server: the client disconnected' '^client: verified 65536 bytes fetched' \
    -s 64K -- -s 64K
pair_run "$scratch/too-big" rdma-read -- -s 5000
check "too-big: client exits 1" rc_is "$scratch/too-big/client.rc" 1
check "too-big: client refuses to read past the advertised buffer" \
    has_line "$scratch/too-big/client.out" "server's buffer holds 4096 bytes; cannot read 5000"
finish
