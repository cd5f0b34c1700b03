# Runs on the two hosts of `lab.sh --hosts 2 --rails 2` for tests/vm/transfer.sh, the multi-rail
# lesson over the two rails (lesson-{server,client}.{out,rc}), then three runs in turn. First the
# rail comes back (two QPs on each rail, --qps 2): host 2 takes its own rail 2 down 1 s into the
# batches (the lab's
# --link-down 2.2@signal+2 brings it back 2 s later), and the client, retrying the rail after
# 0.5 s, then every 1 s (the guest's 2 s have lasted 4.4 under emulation), renews it: returns-{server,client}.{out,rc}. (Its own link's death fails its
# work requests at once, so its QPs wait 268 ms for an ACK, not 67: the emulated hosts, with both
# rails busy, have left an ACK 60 ms apart, and spurious resends behind a rate-limited queue snowball.)
# Then host 1 serves
# transfer-bench (the target), host 2 writes batches over both rails and, at a seeded moment 0.3
# to 1.0 s after its batches started, takes host 1's rail 2 down (the lab's --link-down
# 1.2@signal): host 2's own link stays up, so its QP on rail 2 sends into silence until its
# retries run out, as when a path dies beyond the NIC.
# Outputs in OUT_DIR: server.{out,rc}, client.{out,rc}, killed-at-ms (when the signal was
# given, from the batches' start). Then the peer vanishes: a second run on rail 1 alone, whose
# server host 1 kills (SIGKILL) once the batches are under way: vanished-{server,client}.{out,rc}.
# Last, many-to-one: a server for two clients at once, both on host 2, over rail 1, each with two
# QPs on it: many-server.{out,rc}, many-client-{1,2}.{out,rc,json}.
#   tests/vm/transfer/hosts.sh BUILD_BIN_DIR OUT_DIR SEED
set -uo pipefail
bin=${1:?usage: hosts.sh BUILD_BIN_DIR OUT_DIR SEED}
out=${2:?usage: hosts.sh BUILD_BIN_DIR OUT_DIR SEED}
seed=${3:?usage: hosts.sh BUILD_BIN_DIR OUT_DIR SEED}
devices=$RDMALAB_RAIL_DEV_1,$RDMALAB_RAIL_DEV_2
source "$(dirname "$0")/../../../lab/guest-wait.sh"  # wait_for, wait_for_line
case $RDMALAB_HOST in
    1)
        timeout -k 2 60 "$bin/multi-rail" server --timeout 30 >"$out/lesson-server.out" 2>&1 &
        lesson=$!
        wait_for_line "$out/lesson-server.out" '^server: listening' 30 $lesson
        touch "$RDMALAB_SHARED/lesson-listening"
        wait $lesson
        echo $? >"$out/lesson-server.rc"
        timeout -k 2 150 "$bin/transfer-bench" server --devices "$devices" --timeout 60 \
            >"$out/returns-server.out" 2>&1
        echo $? >"$out/returns-server.rc"
        touch "$RDMALAB_SHARED/failover-server"
        timeout -k 2 150 "$bin/transfer-bench" server --devices "$devices" --timeout 60 \
            >"$out/server.out" 2>&1
        echo $? >"$out/server.rc"
        "$bin/transfer-bench" server --devices "$RDMALAB_RAIL_DEV_1" --timeout 60 \
            >"$out/vanished-server.out" 2>&1 &
        server=$!
        touch "$RDMALAB_SHARED/second-server"
        wait_for "$RDMALAB_SHARED/second-batches" 60
        sleep 0.3
        kill -KILL $server
        wait $server
        echo $? >"$out/vanished-server.rc"
        timeout -k 2 120 "$bin/transfer-bench" server --clients 2 --devices "$RDMALAB_RAIL_DEV_1" \
            --timeout 60 >"$out/many-server.out" 2>&1
        echo $? >"$out/many-server.rc" ;;
    2)
        wait_for "$RDMALAB_SHARED/lesson-listening" 30
        timeout -k 2 60 "$bin/multi-rail" client "$RDMALAB_ADDR_1" --rail2 "$RDMALAB_ADDR_1_2" \
            --timeout 30 >"$out/lesson-client.out" 2>&1
        echo $? >"$out/lesson-client.rc"
        timeout -k 2 150 "$bin/transfer-bench" client "$RDMALAB_ADDR_1" --devices "$devices" \
            -s 64K --batch 8 --batches 96 --check --retry 3 --ack-timeout 16 --rail-retry 500 \
            --rail-retry-max 1000 --qps 2 \
            --timeout 60 >"$out/returns-client.out" 2>&1 &
        client=$!
        wait_for_line "$out/returns-client.out" 'the batches start' 60 $client
        sleep 1
        touch "$RDMALAB_SHARED/link-down-2.2"
        wait $client
        echo $? >"$out/returns-client.rc"
        wait_for "$RDMALAB_SHARED/failover-server" 60
        # 96 batches of 8 blocks of 64 KiB (48 MiB) at 40 Mbit/s per rail: several seconds.
        timeout -k 2 150 "$bin/transfer-bench" client "$RDMALAB_ADDR_1" --devices "$devices" \
            -s 64K --batch 8 --batches 96 --check --retry 3 --ack-timeout 14 --rail-retry 1000 \
            --timeout 60 >"$out/client.out" 2>&1 &
        client=$!
        # The moment counts from the batches' start (the client's set-up takes seconds here).
        wait_for_line "$out/client.out" 'the batches start' 60 $client
        delay_ms=$(awk -v s="$seed" 'BEGIN { srand(s); printf "%d", 300 + rand() * 700 }')
        started=$(date +%s%N)
        sleep "$(awk -v ms="$delay_ms" 'BEGIN { printf "%.3f", ms / 1000 }')"
        touch "$RDMALAB_SHARED/link-down-1.2"
        echo $((($(date +%s%N) - started) / 1000000)) >"$out/killed-at-ms"
        wait $client
        echo $? >"$out/client.rc"
        wait_for "$RDMALAB_SHARED/second-server" 60
        timeout -k 2 60 "$bin/transfer-bench" client "$RDMALAB_ADDR_1" --devices "$RDMALAB_RAIL_DEV_1" \
            -s 64K --batch 8 --batches 96 --check --retry 3 --ack-timeout 14 --timeout 30 \
            >"$out/vanished-client.out" 2>"$out/vanished-client.err" &
        client=$!
        wait_for_line "$out/vanished-client.out" 'the batches start' 60 $client
        touch "$RDMALAB_SHARED/second-batches"
        wait $client
        echo $? >"$out/vanished-client.rc"
        # Many-to-one: two initiators at once into the one target, on rail 1 (rail 2 stays down),
        # each with two QPs on the rail (--qps 2); 268 ms per ACK wait, as in the returns run:
        # four QPs share one rate-held queue.
        many=()
        for c in 1 2; do
            timeout -k 2 120 "$bin/transfer-bench" client "$RDMALAB_ADDR_1" \
                --devices "$RDMALAB_RAIL_DEV_1" -s 64K --batch 4 --batches 16 --check --qps 2 \
                --ack-timeout 16 --timeout 60 --json "$out/many-client-$c.json" \
                >"$out/many-client-$c.out" 2>&1 &
            many+=($!)
        done
        wait "${many[0]}"; echo $? >"$out/many-client-1.rc"
        wait "${many[1]}"; echo $? >"$out/many-client-2.rc" ;;
esac
exit 0
