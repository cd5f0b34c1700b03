# Exercise 10, inline SENDs: what the checker holds a solution to (judge.sh).
peer_exercise=inbox   # the peer posts 8 receives of 32 bytes and checks each message
peer_size=256         # (unused by this part of the peer)
judge_rules() {
    rule_exits "read the line your program printed on stderr: EINVAL from ibv_post_send means the QP has no room for inline data that large" \
        "/performance#inline"
    rule_peer_verified "the peer checks each message as it was when you posted it" "/performance#inline"
    rule_posted inline-sends 8 SEND any "SENDs posted inline" \
        "IBV_SEND_INLINE in send_flags: the bytes are copied into the WR" "/performance#inline" any inline
    rule_no_registration "inline data is never read by the NIC from your buffer: it needs no registration" \
        "/memory-registration#access-flags"
    rule_completions "a local protection error means the NIC tried to read a buffer it may not: was the SEND inline?" \
        "/errors#statuses"
    rule_packets send-packets 8 "SEND packets of 32 bytes" "one SEND Only per message" \
        "/wire#on-the-wire" 'opcode_name=SEND Only' 'payload_bytes=32'
}
