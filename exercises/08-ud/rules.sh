# Exercise 8, UD datagrams: what the checker holds a solution to (judge.sh).
peer_exercise=ud   # the peer's UD QP: waits for your datagram, answers with one of its own
peer_size=64
judge_rules() {
    rule_exits "read the line your program printed on stderr" "/unreliable-transports#ud-bring-up"
    rule_peer_verified "your datagram must reach the peer's QPN with its Q_Key, and you must find its answer behind the 40-byte GRH" \
        "/unreliable-transports#ud-bring-up"
    rule_completions "a receive too small for the GRH and the payload completes with a length error" \
        "/errors#statuses"
    rule_packets ud-datagrams 2 "UD SEND packets (yours and the peer's answer)" \
        "one IBV_WR_SEND with wr.wr.ud.ah, remote_qpn and remote_qkey" "/wire#on-the-wire" \
        'transport=UD' 'opcode_name=SEND Only'
    rule_access "104=LOCAL_WRITE 64=none" \
        "the receive buffer (40 + 64 bytes) is written by your NIC; the datagram's source only read" \
        "/memory-registration#access-flags"
    rule_released "ibv_dereg_mr every region you registered" "/memory-registration#keys"
}
