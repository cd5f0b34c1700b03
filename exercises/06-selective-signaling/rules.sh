# Exercise 6, selective signaling: what the checker holds a solution to (judge.sh).
peer_exercise=write   # the peer's buffer for remote writes; it verifies every byte
peer_size=16384       # 64 WRITEs of 256 bytes: one RDMA WRITE Only packet each
judge_rules() {
    rule_exits "read the line your program printed on stderr: \"no completion within 5 s\" means you waited for a completion no outstanding WR will make" \
        "/signaling#selective-signaling"
    rule_peer_verified "the peer checks all 16 KiB: 64 WRITEs of 256 bytes, WRITE i at offset i * 256" \
        "/signaling#selective-signaling"
    rule_posted selective-signaling 16 RDMA_WRITE signaled "signaled RDMA WRITEs (one in 4)" \
        "set IBV_SEND_SIGNALED on every 4th WRITE only: the others make no completion" \
        "/signaling#selective-signaling"
    rule_posted unsignaled-writes 48 RDMA_WRITE unsignaled "unsignaled RDMA WRITEs" \
        "the other 3 of every 4 WRITEs go without IBV_SEND_SIGNALED" "/signaling#selective-signaling"
    rule_completions "a failed completion names its status" "/errors#statuses"
    rule_packets write-packets 64 "RDMA WRITE Only packets (256 bytes each)" \
        "64 WRITEs of 256 bytes, each fits one packet" "/wire#on-the-wire" 'opcode_name=RDMA WRITE Only'
    rule_access none "the NIC only reads the source of a WRITE: register it with access 0" \
        "/memory-registration#access-flags"
    rule_released "ibv_dereg_mr every region you registered" "/memory-registration#keys"
}
