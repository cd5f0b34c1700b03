# Exercise 1, RDMA WRITE: what the checker holds a solution to (exercises/judge/judge.sh).
peer_exercise=write   # the reference peer's part (exercises/peer/exercise-peer.cpp)
peer_size=8192        # its buffer: 8 packets at the lab's path MTU of 1024 bytes
judge_rules() {
    rule_exits "read the line your program printed on stderr: it names the step that failed" \
        "/operations#write"
    rule_peer_verified "the peer checks every byte of its buffer: write all target.length bytes, from the start of the buffer it advertised" \
        "/operations#write"
    rule_packets write-packets 8 "RDMA WRITE packets (First, 6 Middle, Last: 8 KiB at MTU 1024)" \
        "post one IBV_WR_RDMA_WRITE with wr.rdma.remote_addr and wr.rdma.rkey from the peer's advertisement" \
        "/wire#on-the-wire" 'opcode_name~^RDMA WRITE'
    rule_psn_continuity "RC numbers every packet: a gap or a repeat means a packet was lost or refused" \
        "/wire#roce-v2-packet"
    rule_clean_wire "a NAK means the peer refused the access: check remote_addr, rkey and the length" \
        "/errors#wrong-rkey"
    rule_access none "the NIC only reads the source of a WRITE or a SEND: register it with access 0" \
        "/memory-registration#access-flags"
    rule_released "ibv_dereg_mr every region you registered, before the connection goes" \
        "/memory-registration#keys"
    rule_completions "a failed completion names its status: the errors chapter says what each means" \
        "/errors#statuses"
}
