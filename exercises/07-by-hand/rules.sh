# Exercise 7, an RC QP connected by hand: what the checker holds a solution to (judge.sh).
peer_exercise=by-hand   # the peer swaps records over TCP, takes its QP to RTS, says ready
peer_size=8192
judge_rules() {
    rule_exits "read the line your program printed on stderr: ibv_modify_qp names the transition that failed (EINVAL: an attribute missing from the mask, or one the state does not take)" \
        "/connecting-by-hand#manual"
    rule_transitions "three ibv_modify_qp calls: INIT (state, pkey_index, port, access), RTR (state, AV, path_mtu, dest_qpn, rq_psn, max_dest_rd_atomic, min_rnr_timer), RTS (state, sq_psn, timeout, retry_cnt, rnr_retry, max_rd_atomic)" \
        "/queue-pairs"
    rule_qp_access none "this QP only sends: grant the peer nothing (qp_access_flags = 0)" \
        "/memory-registration#access-flags"
    rule_peer_verified "the peer checks all 8 KiB after your done message" "/connecting-by-hand#manual"
    rule_packets write-packets 8 "RDMA WRITE packets (First, 6 Middle, Last)" \
        "packets go out only once the QP is in RTS, to the QPN and GID you gave it at RTR" \
        "/wire#on-the-wire" 'opcode_name~^RDMA WRITE'
    rule_psn_continuity "your first packet carries the sq_psn you set at RTS, and the peer expects it as rq_psn: a mismatch makes every packet a repeat" \
        "/wire#roce-v2-packet"
    rule_clean_wire "packets sent again with no answer: RTR's dest_qp_num, rq_psn or the GID does not match the peer's record" \
        "/loss#loss-and-retransmission"
    rule_completions "a failed completion names its status (retry exceeded: nobody answered)" "/errors#statuses"
    rule_access none "the NIC only reads the sources of a WRITE and a SEND: access 0" \
        "/memory-registration#access-flags"
    rule_released "ibv_dereg_mr every region you registered" "/memory-registration#keys"
}
