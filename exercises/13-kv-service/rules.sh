# Exercise 13, the capstone — a key-value server: what the checker holds it to (judge.sh). The
# roles turn round: your program is the server on host 1, and the reference clients on host 2
# (exercise-kv-clients) run the cases, some of them unannounced, and say which held.
reader_role=server
judge_rules() {
    rule_exits "your server exits 0 after SHUTDOWN: read the first line it wrote on stderr" \
        "/exercises/13-kv-service#the-contract"
    rule_case basic "PUT: RDMA READ exactly the request's length from the client's (address, rkey), then reply; GET: RDMA WRITE the value, then the reply SEND" \
        "/exercises/13-kv-service#the-contract"
    rule_case shared "one table for every client: a value PUT by one is the value another GETs" \
        "/exercises/13-kv-service#the-contract"
    rule_case concurrent "serve every connection from one loop over one CQ: never wait on one client while another's request waits" \
        "/exercises/13-kv-service#one-loop-for-every-client"
    rule_case bad-requests "check every field of a request before using it: op, key < 16, 1 ≤ length ≤ 256 (PUT), a room large enough (GET); reply bad-request and go on" \
        "/exercises/13-kv-service#the-contract"
    rule_case corrupt-put "READ the value into a staging buffer, check the checksum, and only then copy it into the table" \
        "/exercises/13-kv-service#the-contract"
    rule_case slow-client "a client that says nothing for a while must not hold the others up: poll, never block on one QP" \
        "/exercises/13-kv-service#one-loop-for-every-client"
    rule_case disconnect "a failed completion or a DISCONNECTED event ends that client only: move its QP to ERROR, let its work requests flush, then release it" \
        "/exercises/13-kv-service#when-a-client-leaves"
    rule_case shutdown "after replying to SHUTDOWN, disconnect every client (rdma_disconnect) before you release and exit" \
        "/exercises/13-kv-service#when-a-client-leaves"
    rule_no_remote_access "the clients never touch your memory: you READ and WRITE theirs. Register with LOCAL_WRITE where your NIC writes, 0 where it only reads" \
        "/memory-registration#access-flags"
    rule_released "ibv_dereg_mr every region: each client's when it goes, the table's at the end" \
        "/memory-registration#keys"
    # Values by one-sided operations: one READ per PUT that gets that far (8, and 9 when the
    # vanishing client's READ is sent before it goes), one WRITE per successful GET (11 or 12),
    # and every SEND of yours a 16-byte reply.
    local reads writes sends fat
    reads=$(count_packets 'src~\.1$' 'opcode_name=RDMA READ Request')
    writes=$(count_packets 'src~\.1$' 'opcode_name=RDMA WRITE Only')
    sends=$(count_packets 'src~\.1$' 'opcode_name~^SEND')
    fat=$((sends - $(count_packets 'src~\.1$' 'opcode_name~^SEND' 'payload_bytes=16')))
    verdict one-sided "$([ "$reads" -ge 8 ] && [ "$reads" -le 9 ] && [ "$writes" -ge 11 ] && [ "$writes" -le 12 ] && [ "$sends" -gt 0 ] && [ "$fat" = 0 ] && echo 1)" \
        "8–9 RDMA READ requests and 11–12 RDMA WRITEs from your server, every SEND a 16-byte reply" \
        "$reads READ request(s), $writes WRITE(s), $sends SEND(s) of which $fat not 16 bytes" \
        "a value travels by one READ (PUT) or one WRITE (GET) of its exact length, never inside a SEND" \
        "/operations#read"
}
