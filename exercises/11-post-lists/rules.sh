# Exercise 11, post lists: what the checker holds a solution to (judge.sh).
peer_exercise=write   # the peer's 16 KiB buffer for remote writes; it verifies every byte
peer_size=16384
judge_rules() {
    rule_exits "read the line your program printed on stderr: ENOMEM from ibv_post_send means the list did not fit in the send queue" \
        "/performance#doorbell-batching"
    rule_peer_verified "the peer checks all 16 KiB: WRITE i of 256 bytes at offset i * 256" \
        "/performance#doorbell-batching"
    rule_post_calls post-lists 4 16 "ibv_post_send calls of 16 WRs each" \
        "chain kList WRs through wr.next and post the first: one call, one doorbell, per list" \
        "/performance#doorbell-batching"
    rule_posted list-signaling 4 RDMA_WRITE signaled "signaled WRITEs (the last of each list)" \
        "only the last WR of a list needs IBV_SEND_SIGNALED: its completion says the list is done" \
        "/signaling#selective-signaling"
    rule_psn_continuity "64 WRITEs, one packet each, numbered one after another" "/wire#roce-v2-packet"
    rule_completions "a failed completion names its status" "/errors#statuses"
    rule_packets write-packets 64 "RDMA WRITE Only packets" "64 WRITEs of 256 bytes, one packet each" \
        "/wire#on-the-wire" 'opcode_name=RDMA WRITE Only'
    rule_access none "the NIC only reads the sources of a WRITE and a SEND: access 0" \
        "/memory-registration#access-flags"
    rule_released "ibv_dereg_mr every region you registered" "/memory-registration#keys"
}
