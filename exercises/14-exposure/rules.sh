# Exercise 14 — close a server's exposure: what the checker holds it to (judge.sh). Your program
# is the server on host 1; the reference clients on host 2 (exercise-slot-clients) use it as
# they should, then attack it with only what each was given, and say what happened.
reader_role=server
peer_clients=exercise-slot-clients

# attack NAME HINT LINK: the clients' case NAME held — the attack's work request completed with
# IBV_WC_REM_ACCESS_ERR and the server's memory was unchanged — and the capture holds the NAK
# (remote access error) your server sent the attacker's QP, whose number the case line names.
attack() {
    local line qpn="" naks=0 ok=""
    line=$(grep -m 1 "^peer: case $1: " "$run/peer.out" 2>/dev/null | cut -c1-220)
    [[ $line =~ qpn\ (0x[0-9a-f]+) ]] && qpn=${BASH_REMATCH[1]}
    [ -n "$qpn" ] && naks=$(count_packets 'src~\.1$' "qpn=$qpn" 'aeth.meaning=NAK remote access error')
    [[ $line == "peer: case $1: ok"* ]] && [ "$naks" -ge 1 ] && ok=1
    verdict "attack-$1" "$ok" "the attack refused: remote access error, a NAK from your server on the wire, your memory unchanged" \
        "${line:-no line for it, the clients ended first: $(peer_last)}; $naks such NAK(s)" "$2" "$3"
}

judge_rules() {
    rule_exits "your server exits 0 after SHUTDOWN: read the first line it wrote on stderr" \
        "/exercises/14-exposure#the-contract"
    rule_case own-slot "each client WRITEs its own slot at the address and rkey your accept advertised, and your CHECK sees it" \
        "/exercises/14-exposure#the-contract"
    attack neighbour-slot "register each client's slot alone (its 256 bytes): a region covering more lets its key write past the slot" \
        "/security-defences#defences"
    attack read-secret "register only what a client may touch: a region over your own state hands it to every key holder" \
        "/security-defences#defences"
    attack leaked-key "give each client its own protection domain (or a type-2 memory window bound to its QP): a key is then usable only over its owner's QP" \
        "/security-defences#defences"
    attack after-end "on END, deregister the client's region (or invalidate its window) before you reply: a key that outlives its session opens memory still" \
        "/memory-registration#keys"
    rule_case shutdown "after replying to SHUTDOWN, disconnect every client (rdma_disconnect) before you release and exit" \
        "/exercises/14-exposure#the-contract"
    # Least privilege: the clients only ever WRITE; nothing they are given may be READ.
    local length access opened="" count=0
    while IFS=$'\t' read -r length access; do
        count=$((count + 1))
        [[ $access == *REMOTE_READ* || $access == *REMOTE_ATOMIC* ]] && opened+="${opened:+, }$access on $length bytes"
    done < <(observed reg length access)
    verdict least-privilege "$([ "$count" -gt 0 ] && [ -z "$opened" ] && echo 1)" \
        "no registration a peer may READ (no REMOTE_READ, no REMOTE_ATOMIC)" \
        "${opened:-$count registration(s), none readable}" \
        "the clients only WRITE: REMOTE_WRITE (with LOCAL_WRITE) on a slot, nothing more" \
        "/memory-registration#access-flags"
    rule_released "ibv_dereg_mr every region: a slot's at END (or when its client goes), the rest when the client goes" \
        "/memory-registration#keys"
}
