# Exercise 4, RDMA WRITE WITH IMMEDIATE: what the checker holds a solution to (judge.sh).
peer_exercise=write-imm   # the peer's receive completes with the immediate; it checks both
peer_size=8192
judge_rules() {
    rule_exits "read the line your program printed on stderr" "/immediate-and-scatter-gather#write-imm"
    rule_peer_verified "the peer reads the immediate with ntohl and expects the byte count: put it in network byte order (htonl)" \
        "/immediate-and-scatter-gather#write-imm"
    rule_packets imm-packets 1 "packet carrying an immediate (RDMA WRITE Last with Immediate)" \
        "the opcode is IBV_WR_RDMA_WRITE_WITH_IMM and wr.imm_data holds the value" \
        "/wire#on-the-wire" 'opcode_name~with Immediate'
    rule_packets no-send 0 "SEND packets from your side (the WRITE is the notification)" \
        "no separate message: the immediate consumes the receive the peer posted" \
        "/immediate-and-scatter-gather#write-imm" 'opcode_name~^SEND' 'src~\.2$'
    rule_clean_wire "a NAK means the peer refused the access: check remote_addr, rkey and the length" \
        "/errors#wrong-rkey"
    rule_access none "the NIC only reads the source of a WRITE: register it with access 0" \
        "/memory-registration#access-flags"
    rule_released "ibv_dereg_mr every region you registered" "/memory-registration#keys"
    rule_completions "a failed completion names its status: the errors chapter says what each means" \
        "/errors#statuses"
}
