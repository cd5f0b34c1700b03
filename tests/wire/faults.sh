# Runs inside the lab's wire (lab.sh --hosts 2 --loss 2:P% --link-down 2@T+D), on both hosts: a
# 256 KiB RDMA WRITE from host 2 to host 1 across the lossy link, then host 2 watches its own
# link go down and up again. Outputs land in OUT_DIR; tests/vm/wire.sh checks them.
#   tests/wire/faults.sh BUILD_BIN_DIR OUT_DIR
set -uo pipefail
export RDMALAB_BIN=${1:?usage: faults.sh BUILD_BIN_DIR OUT_DIR}
out=${2:?usage: faults.sh BUILD_BIN_DIR OUT_DIR}
export RDMALAB_ADDR=$RDMALAB_ADDR_1
source "$(dirname "$0")/../../lab/pair.sh" || exit 1

[ "$RDMALAB_HOST" = 2 ] && echo "faults as the command sees them: $RDMALAB_FAULTS" >"$out/faults.txt"
wire_pair "$out/lossy-write" rdma-bench -- --op write -s 4K -n 200 --warmup 5 --no-progress \
    --json "$out/lossy-write/records.json"
if [ "$RDMALAB_HOST" = 2 ]; then
    # The link's state, each time it changes, until well after the planned outage.
    last=""
    while [ $SECONDS -lt 14 ]; do
        state=$(cat /sys/class/net/eth0/operstate)
        [ "$state" = "$last" ] || echo "eth0 $state at $SECONDS s" >>"$out/link.txt"
        last=$state
        sleep 0.2
    done
fi
exit 0
