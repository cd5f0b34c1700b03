# Lab test: uc moves verified data over an Unreliable Connected QP, shows the RC-only attributes
# refused, SENDs that "succeed" while no receive exists and are dropped, and RDMA READ failing.
source "$(dirname "$0")/lib.sh" "$@"

lesson=uc

part default
pair_expect default $lesson \
    '^server: verified over UC: WRITE and SEND delivered intact; 4 of 4 SENDs without a receive silently dropped' \
    '^client: verified UC: WRITE and SEND delivered; 4 SENDs completed successfully but were dropped; READ not available' --
out=$scratch/default
for side in server client; do
    check "default: $side: RTR with RC's attributes is refused" has_line "$out/$side.out" \
        "^$side: INIT -> RTR with RC's extra attributes \(IBV_QP_MAX_DEST_RD_ATOMIC \| IBV_QP_MIN_RNR_TIMER\) on this UC QP: ibv_modify_qp refused: Invalid argument; the QP is INIT"
    check "default: $side: RTS with RC's attributes is refused" has_line "$out/$side.out" \
        "^$side: RTR -> RTS with RC's extra attributes \(IBV_QP_TIMEOUT \| IBV_QP_RETRY_CNT \| IBV_QP_RNR_RETRY \| IBV_QP_MAX_QP_RD_ATOMIC\) .*refused"
    check "default: $side: UC's RTR mask" has_line "$out/$side.out" \
        "^$side: INIT -> RTR: ibv_modify_qp\(IBV_QP_STATE \| IBV_QP_AV \| IBV_QP_PATH_MTU \| IBV_QP_DEST_QPN \| IBV_QP_RQ_PSN\)$"
    check "default: $side: UC's RTS mask" has_line "$out/$side.out" \
        "^$side: RTR -> RTS: ibv_modify_qp\(IBV_QP_STATE \| IBV_QP_SQ_PSN\)$"
    check "default: $side: ibv_query_qp confirms RTS" has_line "$out/$side.out" "^$side: +ibv_query_qp: qp_state RTS"
done
check "default: server verified part 1" has_line "$out/server.out" \
    '^server: part 1: verified 4096 bytes placed by RDMA WRITE and 4096 bytes received by SEND over UC'
check "default: every unreceivable SEND completed with success" \
    count_is 4 "$out/client.out" '^client:   SEND [0-9] with no receive posted: completion success$'
check "default: the server received none of them" has_line "$out/server.out" \
    '^server: part 2: of 4 SENDs sent while no receive was posted, 0 arrived; 4 were dropped'
check "default: RDMA READ on UC fails" has_line "$out/client.out" \
    '^client: part 3: RDMA READ on UC: (its completion is IBV_WC_[A-Z_]+_ERR|ibv_post_send refused it).*; the QP is now'

part 64k-8
pair_expect 64K-8 $lesson '^server: verified over UC: .*8 of 8 SENDs without a receive silently dropped' \
    '^client: verified UC: .*8 SENDs completed successfully' -s 64K -n 8 -- -s 64K -n 8
check "64K-8: 65536 bytes verified" has_line "$scratch/64K-8/server.out" 'verified 65536 bytes placed by RDMA WRITE'

part refusals
pair_run "$scratch/count-mismatch" $lesson -n 4 -- -n 2
check "count-mismatch: server exits 1" rc_is "$scratch/count-mismatch/server.rc" 1
check "count-mismatch: server says why" has_line "$scratch/count-mismatch/server.out" \
    'the client says it sent 2 messages, expected 4 \(use the same -n on both sides\)'
check "count-mismatch: client exits 1" rc_is "$scratch/count-mismatch/client.rc" 1

expect_failure count-zero 2 'iters' "$bin/$lesson" server -n 0
expect_failure count-too-large 2 'iters' "$bin/$lesson" client "$addr" -n 65
finish
