# Runs inside the lab's wire (lab.sh --hosts 2 --loss 2:P% --link-down 2@signal+D), on both
# hosts: rdma-bench WRITEs from host 2 to host 1 across the lossy link (rdma-doctor watching host 1's
# counters), the loss-and-retransmission
# lesson (RC and UD under the same loss), then host 2 gives the signal and watches its own link go
# down and up again. Outputs land in OUT_DIR; tests/vm/wire.sh checks them.
#   tests/wire/faults.sh BUILD_BIN_DIR OUT_DIR
set -uo pipefail
export RDMALAB_BIN=${1:?usage: faults.sh BUILD_BIN_DIR OUT_DIR}
out=${2:?usage: faults.sh BUILD_BIN_DIR OUT_DIR}
export RDMALAB_ADDR=$RDMALAB_ADDR_1
source "$(dirname "$0")/../../lab/pair.sh" || exit 1

[ "$RDMALAB_HOST" = 2 ] && echo "faults as the command sees them: $RDMALAB_FAULTS" >"$out/faults.txt"
# rdma-doctor on host 1 (the side that receives the WRITEs) watches its counters through the lossy
# WRITEs, until a SIGINT ends the watch: the lossy-link world (tests/lab/doctor.sh has the others).
if [ "$RDMALAB_HOST" = 1 ]; then
    "$RDMALAB_BIN/rdma-doctor" --window 600 >"$out/doctor.txt" 2>&1 &
    doctor=$!
    sleep 2  # it has read the counters' starting values
fi
wire_pair "$out/lossy-write" rdma-bench -- --op write -s 4K -n 200 --warmup 5 --no-progress \
    --json "$out/lossy-write/records.json"
if [ "$RDMALAB_HOST" = 1 ]; then
    kill -INT "$doctor"
    wait "$doctor"
    echo $? >"$out/doctor.rc"
fi
wire_pair "$out/loss" loss-and-retransmission --
if [ "$RDMALAB_HOST" = 2 ]; then
    # The signal takes the link down (for D seconds); its state each time it changes, until it
    # has come back up (or 15 s).
    touch "$RDMALAB_SHARED/link-down-2"
    last="" went_down=0 start=$SECONDS
    while [ $((SECONDS - start)) -lt 15 ]; do
        state=$(cat /sys/class/net/eth0/operstate)
        [ "$state" = "$last" ] || echo "eth0 $state at $((SECONDS - start)) s" >>"$out/link.txt"
        last=$state
        [ "$state" = down ] && went_down=1
        if [ "$went_down" = 1 ] && [ "$state" = up ]; then break; fi
        sleep 0.2
    done
fi
exit 0
