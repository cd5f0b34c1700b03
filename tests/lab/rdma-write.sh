# Lab test: rdma-write moves data into the server's buffer, verified there, at several sizes.
source "$(dirname "$0")/lib.sh" "$@"
pair_expect write-default rdma-write '^server: verified 4096 bytes placed by the client' \
    '^client: wrote 4096 bytes' --
pair_expect write-1-byte rdma-write '^server: verified 1 bytes placed' '^client: wrote 1 bytes' \
    -s 1 -- -s 1
pair_expect write-1MiB rdma-write '^server: verified 1048576 bytes placed' '^client: wrote 1048576 bytes' \
    -s 1M -- -s 1M
# A smaller write into a larger buffer: the rest of the buffer must stay untouched.
pair_expect write-partial rdma-write '^server: verified 100 bytes placed' '^client: wrote 100 bytes' \
    -s 8K -- -s 100
# The client must refuse to write past the buffer the server advertised.
pair_run "$scratch/too-big" rdma-write --timeout 3 -- -s 8K
check "too-big: client exits 1" rc_is "$scratch/too-big/client.rc" 1
check "too-big: client refuses to write past the advertised buffer" \
    has_line "$scratch/too-big/client.out" "server's buffer holds 4096 bytes; cannot write 8192"
finish
