# Runs on the two hosts of `lab.sh --hosts 2 --rails 2` for tests/vm/transfer.sh: host 1 serves
# transfer-bench (the target), host 2 writes batches over both rails and, at a seeded moment
# between DELAY_MS_LOW and DELAY_MS_HIGH after its client started, takes its rail 2 down (the
# lab's --link-down 2.2@signal). Outputs in OUT_DIR: server.{out,rc}, client.{out,rc},
# killed-at-ms (when the signal was given, from the client's start).
#   tests/vm/transfer/hosts.sh BUILD_BIN_DIR OUT_DIR SEED
set -uo pipefail
bin=${1:?usage: hosts.sh BUILD_BIN_DIR OUT_DIR SEED}
out=${2:?usage: hosts.sh BUILD_BIN_DIR OUT_DIR SEED}
seed=${3:?usage: hosts.sh BUILD_BIN_DIR OUT_DIR SEED}
devices=$RDMALAB_RAIL_DEV_1,$RDMALAB_RAIL_DEV_2
case $RDMALAB_HOST in
    1)
        timeout -k 2 150 "$bin/transfer-bench" server --devices "$devices" --timeout 60 \
            >"$out/server.out" 2>&1
        echo $? >"$out/server.rc" ;;
    2)
        # 48 batches of 8 blocks of 64 KiB (24 MiB) at 40 Mbit/s per rail: several seconds.
        timeout -k 2 150 "$bin/transfer-bench" client "$RDMALAB_ADDR_1" --devices "$devices" \
            -s 64K --batch 8 --batches 48 --check --retry 3 --ack-timeout 14 --timeout 60 \
            >"$out/client.out" 2>&1 &
        client=$!
        delay_ms=$(awk -v s="$seed" 'BEGIN { srand(s); printf "%d", 1500 + rand() * 1500 }')
        started=$(date +%s%N)
        sleep "$(awk -v ms="$delay_ms" 'BEGIN { printf "%.3f", ms / 1000 }')"
        touch "$RDMALAB_SHARED/link-down-2.2"
        echo $((($(date +%s%N) - started) / 1000000)) >"$out/killed-at-ms"
        wait $client
        echo $? >"$out/client.rc" ;;
esac
exit 0
