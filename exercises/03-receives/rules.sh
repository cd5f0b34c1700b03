# Exercise 3, receives posted in time: what the checker holds a solution to (judge.sh).
peer_exercise=receives   # the peer SENDs 4 messages of 64 bytes as soon as it is connected
peer_size=256            # (unused by this part of the peer)
judge_rules() {
    rule_exits "read the line your program printed on stderr: a failed receive names its status" \
        "/operations#send-recv"
    rule_peer_verified "the peer waits for your count of verified messages: all 4, each in its own 64-byte slot" \
        "/operations#send-recv"
    rule_packets no-rnr-nak 0 "RNR NAKs (receiver not ready)" \
        "the peer sends the moment the connection is up: your receives must already be posted when you call exercise::connect" \
        "/errors#rnr" 'aeth.meaning~RNR'
    rule_packets send-packets 5 "SEND packets (the peer's 4 messages and your count)" \
        "each message is one SEND of 64 bytes; your count is one more" \
        "/wire#on-the-wire" 'opcode_name~^SEND'
    rule_access "256=LOCAL_WRITE 4=none" \
        "a receive buffer is written by your own NIC (LOCAL_WRITE) and by nobody else" \
        "/memory-registration#access-flags"
    rule_released "ibv_dereg_mr every region you registered, before the connection goes" \
        "/memory-registration#keys"
    rule_completions "a failed completion names its status: the errors chapter says what each means" \
        "/errors#statuses"
}
