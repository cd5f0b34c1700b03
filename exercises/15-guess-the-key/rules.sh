# Exercise 15 — find the key: what the checker holds your attacker to (judge.sh). The server on
# host 1 is exercise-key-server (exercises/peer/key-server.cpp); it prints where its vault is,
# its key and what it holds, for this judge only. Your program runs on host 2 against it. The
# tries are counted on the wire: one RDMA READ request at the vault's address per try.
peer_program=exercise-key-server
# The vault's key byte drawn between 128 and 159: an attacker counting up from 0 needs 129 to 160
# tries, and one that stops at 0x7f fails every time.
peer_args="--key-byte-min 128 --key-byte-max 159"
# Up to 256 connections (a wrong attacker's), each tens of milliseconds. The limit is the guest's
# clock, which under emulation can run several times faster than the host's: generous.
reader_limit_s=600

judge_rules() {
    rule_exits "print the secret and exit 0 once a READ of the vault succeeds: read the first line your program wrote on stderr" \
        "/exercises/15-guess-the-key#the-contract"
    local line vault_va="" vault_rkey="" holds printed
    line=$(grep -m 1 '^peer: board at ' "$run/peer.out" 2>/dev/null)
    if [[ $line =~ vault\ at\ (0x[0-9a-f]+)\ rkey\ (0x[0-9a-f]+) ]]; then
        vault_va=${BASH_REMATCH[1]}
        vault_rkey=${BASH_REMATCH[2]}
    fi
    holds=$(sed -n 's/^peer: vault holds \([0-9a-f]*\)$/\1/p' "$run/peer.out" 2>/dev/null | head -n 1)
    printed=$(sed -n 's/^secret \([0-9a-f]*\)$/\1/p' "$run/reader.out" 2>/dev/null | head -n 1)
    local seen="no line \"secret HEX\""
    [ -n "$printed" ] && seen="secret ${printed:0:16}…"
    verdict secret "$([ -n "$holds" ] && [ "$printed" = "$holds" ] && echo 1)" \
        "your line \"secret HEX\" holds the vault's 64 bytes" \
        "$seen; the vault holds ${holds:0:16}…" \
        "a try succeeded only if its completion's status is IBV_WC_SUCCESS: check it before you trust the bytes" \
        "/errors#statuses"

    # Every READ request your side sent at the vault's address is a try: its key, and the
    # server's QP it went to.
    local tries=0 right_index=0 wrong_keys=0 last="" va rkey qpn
    local -A bytes=() qpns=()
    while IFS=$'\t' read -r va rkey qpn; do
        [ -n "$vault_va" ] && [ $((va)) = $((vault_va)) ] || continue
        tries=$((tries + 1))
        [ $((rkey >> 8)) = $((vault_rkey >> 8)) ] && right_index=$((right_index + 1))
        [ $((rkey)) = $((vault_rkey)) ] || wrong_keys=$((wrong_keys + 1))
        bytes[$((rkey & 0xff))]=1
        qpns[$qpn]=1
        last=$rkey
    done < <([ -s "$packets" ] && "$bin/rdma-wire" "$packets" --print reth.va,reth.rkey,qpn \
                 --where transport=RC --where 'src~\.2$' --where 'opcode_name=RDMA READ Request' 2>/dev/null)
    verdict index "$([ "$tries" -gt 0 ] && [ "$right_index" = "$tries" ] && echo 1)" \
        "every try at the vault with the vault's index (${vault_rkey:-?} >> 8)" \
        "$tries tries, $right_index with that index" \
        "the pool hands indexes out in sequence, and the vault was registered just before the board" \
        "/security#guess"
    verdict search "$([ "$tries" -gt 0 ] && [ "$tries" -le 256 ] && [ "${#bytes[@]}" = "$tries" ] && [ -n "$last" ] && [ $((last)) = $((vault_rkey)) ] && echo 1)" \
        "no key byte tried twice, and the tries end with the vault's key (${vault_rkey:-?})" \
        "$tries tries, ${#bytes[@]} distinct key bytes, the last ${last:-none}" \
        "8 random bits are 256 values: try each until one works, and stop there" \
        "/security#guess"
    local posted on_wire
    posted=$(observed send opcode | grep -cx RDMA_READ)
    on_wire=$(count_packets 'src~\.2$' 'opcode_name=RDMA READ Request')
    verdict connection-per-try "$([ "$tries" -gt 0 ] && [ "${#qpns[@]}" = "$tries" ] && [ "$posted" = "$on_wire" ] && echo 1)" \
        "each try on a connection of its own, and every READ you posted on the wire" \
        "$tries tries to ${#qpns[@]} server QP(s); $posted READ(s) posted, $on_wire on the wire" \
        "a wrong key's NAK moves both QPs to the error state: what you post on it afterwards is flushed, never sent. Connect again for the next try" \
        "/security#kill"
    local naks polled
    naks=$(count_packets 'src~\.1$' 'aeth.meaning=NAK remote access error')
    polled=$(observed wc status | grep -cx 'remote access error')
    verdict refused "$([ "$tries" -gt 0 ] && [ "$naks" = "$wrong_keys" ] && [ "$polled" = "$wrong_keys" ] && echo 1)" \
        "each wrong try refused by the server (a NAK, remote access error) and its completion polled" \
        "$wrong_keys wrong tries, $naks NAK(s), $polled remote access error completion(s) polled" \
        "wait for each try's completion before the next: its status says whether the key was right" \
        "/errors#statuses"
}
