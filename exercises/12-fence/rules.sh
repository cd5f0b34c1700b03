# Exercise 12, a fenced SEND after a READ: what the checker holds a solution to (judge.sh).
peer_exercise=fence   # the peer's 8-byte word to read, and a receive for the echo
peer_size=8
judge_rules() {
    rule_exits "read the line your program printed on stderr" "/read-and-atomics#fence"
    rule_peer_verified "the peer expects its own word back: the SEND must carry what the READ fetched" \
        "/read-and-atomics#fence"
    rule_fenced fence SEND "IBV_SEND_FENCE on the SEND: it waits until every READ and atomic before it has completed" \
        "/read-and-atomics#fence"
    rule_packets read-packets 2 "RDMA READ packets (Request, Response Only)" \
        "one 8-byte READ: one request, one response" "/wire#on-the-wire" 'opcode_name~^RDMA READ'
    rule_completions "a local protection error on the READ means your buffer may not be written by the NIC" \
        "/errors#statuses"
    rule_access "8=LOCAL_WRITE" "the buffer is written by your NIC (the READ) and read by it (the SEND): LOCAL_WRITE only" \
        "/memory-registration#access-flags"
    rule_released "ibv_dereg_mr every region you registered" "/memory-registration#keys"
}
