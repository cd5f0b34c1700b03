# Exercise 9, one WRITE gathered from three buffers: what the checker holds a solution to.
peer_exercise=write   # the peer's 8 KiB buffer for remote writes; it verifies every byte
peer_size=8192
judge_rules() {
    rule_exits "read the line your program printed on stderr: EINVAL from ibv_post_send means the WR has more SGEs than the QP was created for" \
        "/immediate-and-scatter-gather#scatter-gather"
    rule_peer_verified "the peer checks all 8 KiB: header, body and trailer, back to back from the start of its buffer" \
        "/immediate-and-scatter-gather#scatter-gather"
    rule_posted gather 1 RDMA_WRITE signaled "RDMA WRITE with 3 scatter/gather entries" \
        "one WR whose sg_list holds the three pieces (num_sge = 3): the NIC gathers them" \
        "/immediate-and-scatter-gather#scatter-gather" 3
    rule_packets write-packets 8 "RDMA WRITE packets (First, 6 Middle, Last: one message)" \
        "the three pieces travel as one message" "/wire#on-the-wire" 'opcode_name~^RDMA WRITE'
    rule_psn_continuity "one message of 8 packets, numbered one after another" "/wire#roce-v2-packet"
    rule_completions "a failed completion names its status" "/errors#statuses"
    rule_access none "the NIC only reads the sources of a WRITE and a SEND: access 0" \
        "/memory-registration#access-flags"
    rule_released "ibv_dereg_mr every region you registered" "/memory-registration#keys"
}
