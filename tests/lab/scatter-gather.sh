# Lab test: scatter-gather — a SEND gathered from 3 buffers arrives scattered across 2 receive
# buffers split elsewhere, a WRITE gathered from 3 lands contiguous (both verified by the server),
# and a WR with one SGE more than the QP allows is refused at ibv_post_send.
source "$(dirname "$0")/lib.sh" "$@"
pair_expect sg-default scatter-gather \
    '^server: the RDMA WRITE gathered from 3 buffers landed as 4120 contiguous bytes; verified' \
    '^client: scatter-gather shown: one SEND and one WRITE from 3 buffers each' --
check "sg-default: the SEND arrived split at the receiver's own boundary" \
    has_line "$scratch/sg-default/server.out" \
    '^server: the SEND of 4120 bytes arrived scattered: bytes 0\.\.1372 in the first buffer, 1373\.\.4119 in the second; verified'
check "sg-default: one SGE too many is refused" has_line "$scratch/sg-default/client.out" \
    '^client: a SEND with [0-9]+ SGEs on this QP \(max_send_sge [0-9]+\): ibv_post_send refused it: '
check "sg-default: the device limits are read" has_line "$scratch/sg-default/client.out" \
    '^client: rxe0 allows up to [0-9]+ SGEs per send or receive WR'
# A shorter message into the same receive: the first buffer, then part of the second (the rest of
# it checked untouched); the WRITE leaves the end of its target untouched too.
pair_expect sg-short scatter-gather '^server: the RDMA WRITE gathered from 3 buffers landed as 2024 contiguous bytes' \
    '^client: scatter-gather shown' -- -s 2000
check "sg-short: split at the same place" has_line "$scratch/sg-short/server.out" \
    '^server: the SEND of 2024 bytes arrived scattered: bytes 0\.\.1372 in the first buffer, 1373\.\.2023 in the second'
finish
