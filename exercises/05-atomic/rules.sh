# Exercise 5, FETCH AND ADD on a remote counter: what the checker holds a solution to (judge.sh).
peer_exercise=atomic   # the peer's 8-byte counter, zero, open to atomics only
peer_size=8
judge_rules() {
    rule_exits "read the line your program printed on stderr: a failed atomic names its status" \
        "/read-and-atomics#atomics"
    rule_peer_verified "the peer expects the counter at 10 and your word that all 10 old values were 0 to 9" \
        "/read-and-atomics#atomics"
    rule_packets fetch-add-packets 10 "FetchAdd requests" \
        "IBV_WR_ATOMIC_FETCH_AND_ADD, with wr.wr.atomic.compare_add = 1 (the amount to add)" \
        "/wire#on-the-wire" 'opcode_name=FetchAdd'
    rule_packets atomic-acks 10 "ATOMIC Acknowledge packets (each carries an old value back)" \
        "each atomic is answered by one ATOMIC Acknowledge" "/wire#on-the-wire" 'opcode_name=ATOMIC Acknowledge'
    rule_clean_wire "a NAK means the peer refused the atomic: remote_addr must be the counter's (8-byte aligned), rkey its rkey" \
        "/read-and-atomics#atomics"
    rule_access "8=LOCAL_WRITE 4=none" \
        "the old value is written into your buffer by your own NIC: LOCAL_WRITE, and nothing remote" \
        "/memory-registration#access-flags"
    rule_released "ibv_dereg_mr every region you registered" "/memory-registration#keys"
    rule_completions "a failed completion names its status: the errors chapter says what each means" \
        "/errors#statuses"
}
