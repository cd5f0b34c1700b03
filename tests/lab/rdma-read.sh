# Lab test: rdma-read fetches the server's buffer, verified by the client, at several sizes.
source "$(dirname "$0")/lib.sh" "$@"
pair_expect read-default rdma-read '^server: the client disconnected' \
    '^client: verified 4096 bytes fetched with one RDMA READ' --
pair_expect read-1-byte rdma-read '^server: the client disconnected' '^client: verified 1 bytes fetched' \
    -s 1 -- -s 1
pair_expect read-64KiB rdma-read '^server: the client disconnected' '^client: verified 65536 bytes fetched' \
    -s 64K -- -s 64K
pair_run "$scratch/too-big" rdma-read -- -s 5000
check "too-big: client exits 1" rc_is "$scratch/too-big/client.rc" 1
check "too-big: client refuses to read past the advertised buffer" \
    has_line "$scratch/too-big/client.out" "server's buffer holds 4096 bytes; cannot read 5000"
finish
