# Lab test: ud sends datagrams to a QP named by address handle, QPN and Q_Key. The server counts
# what arrived (UD may drop some: the counts must add up, not be perfect) and checks every
# datagram; a Q_Key mismatch loses them all; a datagram larger than the path MTU is refused.
source "$(dirname "$0")/lib.sh" "$@"

part datagrams
pair_expect ud-default ud \
    '^server: received [0-9]+ of 100 datagrams .*every one that arrived was verified' \
    '^client: sent 100 datagrams of [0-9]+ bytes; the server received [0-9]+ and lost [0-9]+' --
check "ud-default: received + lost = 100, most arrived" counts_add_up "$scratch/ud-default/server.out" 100
check "ud-default: byte_len counts the 40-byte GRH area, which holds the IPv4 header" \
    has_line "$scratch/ud-default/server.out" \
    "^server: first datagram: byte_len ([0-9]+) = 40 \(GRH area: IPv4 header $addr -> $addr\) \+ [0-9]+ payload"

# Many small datagrams: the server recycles its receives; the client's size and count are used.
pair_expect ud-many ud '^server: received [0-9]+ of 1000 datagrams' \
    '^client: sent 1000 datagrams of 200 bytes; the server received [0-9]+ and lost [0-9]+' -- -n 1000 -s 200
check "ud-many: received + lost = 1000, most arrived" counts_add_up "$scratch/ud-many/server.out" 1000
check "ud-many: each receive is 40 + 200 bytes" \
    has_line "$scratch/ud-many/server.out" '^server: first datagram: byte_len 240 = 40 .* \+ 200 payload'

check "ud-many: the server answered with an address handle made from the client's datagram" \
    has_line "$scratch/ud-many/server.out" '^server: answered the client at QP 0x[0-9a-f]+ with an address handle made from its first datagram \(ibv_create_ah_from_wc\)'
check "ud-many: the client got that answer, carrying the server's count" \
    has_line "$scratch/ud-many/client.out" '^client: the server.s answer arrived from QP 0x[0-9a-f]+, addressed from our own datagram: it counted [0-9]+'
part wrong-qkey
# The wrong Q_Key: every send completes, the server's QP drops every datagram.
pair_expect ud-wrong-qkey ud '^server: received 0 of 100 datagrams \(lost 100,' \
    '^client: with the wrong Q_Key every send completed, yet the server.s QP dropped them all' -- --wrong-qkey
check "ud-wrong-qkey: the server names both Q_Keys" has_line "$scratch/ud-wrong-qkey/server.out" \
    '^server: the client sent with Q_Key 0x[0-9a-f]+, this QP.s is 0x[0-9a-f]+: the QP dropped every one'

part refusals
# Larger than the path MTU (1024 in the lab; no RoCE path exceeds 4096): both sides refuse.
too_big=8192
[ "$RDMALAB_IN_LAB" = vm ] && too_big=2048
mtu_line="message size $too_big is larger than the path MTU of [0-9]+ bytes .*must fit in one packet"
pair_run "$scratch/ud-too-big" ud -- -s $too_big
check "ud-too-big: client exits 1" rc_is "$scratch/ud-too-big/client.rc" 1
check "ud-too-big: client says it in one line" count_is 1 "$scratch/ud-too-big/client.out" '^ud: '
check "ud-too-big: client names the limit" has_line "$scratch/ud-too-big/client.out" "^ud: $mtu_line"
check "ud-too-big: server exits 1" rc_is "$scratch/ud-too-big/server.rc" 1
check "ud-too-big: server names the limit" has_line "$scratch/ud-too-big/server.out" "^ud: $mtu_line"
# A server that accepts less than the client sends refuses the plan; the client is told.
pair_run "$scratch/ud-server-limit" ud -s 512 -- -s 1000
check "ud-server-limit: server exits 1" rc_is "$scratch/ud-server-limit/server.rc" 1
check "ud-server-limit: server says why" has_line "$scratch/ud-server-limit/server.out" \
    '^ud: the client sends 1000-byte datagrams; this server accepts at most -s 512'
check "ud-server-limit: client exits 1" rc_is "$scratch/ud-server-limit/client.rc" 1
check "ud-server-limit: client is told" has_line "$scratch/ud-server-limit/client.out" \
    '^ud: the server refused 1000-byte datagrams'
[ $failures -eq 0 ] || cat "$scratch"/ud-too-big/*.out "$scratch"/ud-server-limit/*.out

expect_failure ud-size-small 2 'a datagram needs at least 16 bytes' "$bin/ud" client "$addr" -s 8
finish
