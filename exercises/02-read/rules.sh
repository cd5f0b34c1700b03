# Exercise 2, RDMA READ: what the checker holds a solution to (exercises/judge/judge.sh).
peer_exercise=read   # the reference peer's part (exercises/peer/exercise-peer.cpp)
peer_size=8192       # its buffer: one READ request, 8 response packets at MTU 1024
judge_rules() {
    rule_exits "read the line your program printed on stderr: a failed completion names its status (local protection: what may the NIC do with your buffer?)" \
        "/read-and-atomics#read"
    rule_peer_verified "the peer compares your checksum with its buffer's: read all source.length bytes from the advertised address" \
        "/read-and-atomics#read"
    rule_packets read-packets 9 "RDMA READ packets (1 Request, then Response First, 6 Middle, Last)" \
        "post one IBV_WR_RDMA_READ naming the peer's buffer (wr.rdma.remote_addr, wr.rdma.rkey)" \
        "/wire#on-the-wire" 'opcode_name~^RDMA READ'
    rule_clean_wire "a NAK means the peer refused the access: check the opcode, remote_addr, rkey and length" \
        "/errors#wrong-rkey"
    rule_access "8192=LOCAL_WRITE 4=none" \
        "the READ's destination is written by your own NIC (LOCAL_WRITE); nobody else needs access to it" \
        "/memory-registration#access-flags"
    rule_released "ibv_dereg_mr every region you registered, before the connection goes" \
        "/memory-registration#keys"
    rule_completions "a failed completion names its status: the errors chapter says what each means" \
        "/errors#statuses"
}
