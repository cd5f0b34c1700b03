# Lab test: post-api — a WRITE and a SEND WITH IMMEDIATE built with ibv_wr_* and posted by one
# ibv_wr_complete; the server reads its completion with ibv_start_poll and the ibv_wc_read_*
# accessors and verifies the data; the client sees both completions, in order; the provider's
# answer on completion timestamps is stated.
source "$(dirname "$0")/lib.sh" "$@"
pair_expect post-api post-api '^server: verified 4096 bytes written with ibv_wr_rdma_write' \
    '^client: wrote 4096 bytes and sent the immediate, two WRs posted by one ibv_wr_complete' --
check "post-api: the server read the immediate with the accessors" has_line "$scratch/post-api/server.out" \
    '^server: read with ibv_wc_read_\*: wr_id 7, opcode RECV, byte_len 0, IBV_WC_WITH_IMM, immediate 4096'
check "post-api: the WRITE completed, then the SEND" has_line "$scratch/post-api/client.out" \
    '^client: completion wr_id 2: SEND'
check "post-api: says whether the CQ gives completion timestamps" has_line "$scratch/post-api/client.out" \
    '^client: (the CQ reports completion timestamps|rxe0 gives no completion timestamps \(ibv_create_cq_ex: )'
pair_expect post-api-small post-api '^server: verified 1 bytes written' '^client: wrote 1 bytes' -s 1 -- -s 1
finish
