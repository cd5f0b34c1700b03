# Lab test: multicast — receivers join a group through rdma_cm, one sender sends to it; each
# receiver checks every datagram and counts its own losses (the counts must add up).
source "$(dirname "$0")/lib.sh" "$@"

part one-receiver
# One receiver, all defaults (the tour's pair form).
pair_expect mc-one multicast \
    '^server: received [0-9]+ of 100 datagrams .*every one that arrived was verified' \
    '^client: sent 100 datagrams of [0-9]+ bytes \(and 3 end marks\) to group 239.1.1.1' --
check "mc-one: received + lost = 100" counts_add_up "$scratch/mc-one/server.out" 100
check "mc-one: the join gave the multicast QPN and a Q_Key" has_line "$scratch/mc-one/server.out" \
    '^server: listening on multicast group 239.1.1.1 as a receiver: .*QPN 0xffffff, Q_Key 0x[0-9a-f]+'

part two-receivers
# Two receivers (separate processes), one sender, another group, size and count.
dir=$scratch/mc-two
mkdir -p "$dir"
pids=()
for r in 1 2; do
    timeout -k 5 60 "$bin/multicast" receiver --group 239.2.3.4 --accept-timeout 20 \
        >"$dir/receiver-$r.out" 2>&1 &
    pids+=($!)
done
for r in 1 2; do
    for _ in $(seq 200); do
        grep -q '^server: listening' "$dir/receiver-$r.out" && break
        sleep 0.05
    done
done
timeout -k 5 60 "$bin/multicast" sender "$addr" --group 239.2.3.4 -n 300 -s 256 >"$dir/sender.out" 2>&1
echo $? >"$dir/sender.rc"
for r in 1 2; do
    rc=0
    wait "${pids[$((r - 1))]}" || rc=$?
    echo $rc >"$dir/receiver-$r.rc"
done
before=$failures
check "mc-two: sender exits 0" rc_is "$dir/sender.rc" 0
check "mc-two: sender says what it sent" has_line "$dir/sender.out" \
    '^client: sent 300 datagrams of 256 bytes \(and 3 end marks\) to group 239.2.3.4'
for r in 1 2; do
    check "mc-two: receiver $r exits 0" rc_is "$dir/receiver-$r.rc" 0
    check "mc-two: receiver $r verified what arrived" has_line "$dir/receiver-$r.out" \
        '^server: received [0-9]+ of 300 datagrams .*every one that arrived was verified'
    check "mc-two: receiver $r: received + lost = 300" counts_add_up "$dir/receiver-$r.out" 300
    check "mc-two: receiver $r: the GRH area holds the IPv4 header" has_line "$dir/receiver-$r.out" \
        "byte_len 296 = 40 \(GRH area: IPv4 header $addr -> 239.2.3.4\) \+ 256 payload"
done
[ $failures -eq $before ] || { for f in "$dir"/*.out; do echo "--- $f"; cat "$f"; done; }

part refusals
# Bad input and absent peers: one line, non-zero exit.
too_big=8192
[ "$RDMALAB_IN_LAB" = vm ] && too_big=2048
expect_failure mc-too-big 1 \
    "datagram size $too_big is larger than the active MTU of .*must fit in one packet" \
    "$bin/multicast" sender "$addr" -s $too_big
expect_failure mc-not-a-group 2 "'10.1.1.1' is not a multicast address" \
    "$bin/multicast" receiver --group 10.1.1.1
expect_failure mc-size-small 2 'a datagram needs at least 16 bytes' "$bin/multicast" sender "$addr" -s 4
expect_failure mc-no-sender 1 'no datagram arrived for group 239.1.1.1 within 1.0 s' \
    "$bin/multicast" receiver --accept-timeout 1
if [ "$RDMALAB_IN_LAB" = vm ]; then  # an address no interface here has: refused locally
    expect_failure mc-not-local 1 "cannot reach group 239.1.1.1 from 198.51.100.77" \
        "$bin/multicast" sender 198.51.100.77
fi
finish
