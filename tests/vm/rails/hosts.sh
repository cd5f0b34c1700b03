# Runs on the two hosts of `lab.sh --hosts 2 --rails 2 --mtu 9000` for tests/vm/rails.sh:
#   facts      each host's devices (ibv_devinfo), rxe links, queues and rail variables
#   both       rdma-bench on each rail at once, host 2 writing to host 1: rail 1 on rxe0 to
#              $RDMALAB_ADDR_1_1, rail 2 on rxe1 to $RDMALAB_ADDR_1_2 (16 KiB messages)
#   rail2-down both rails writing (4 s, 6 s); once rail 2's QP is under way host 2 takes its
#              rail 2 down ($RDMALAB_SHARED/link-down-2.2, the lab's signal; up again 2 s later):
#              rail 2's QP fails, rail 1's must carry on to its end
# Every wait is bounded. Outputs in OUT_DIR: facts-N/*, WORLD/{rail1,rail2}-{server,client}.*.
#   tests/vm/rails/hosts.sh BUILD_BIN_DIR OUT_DIR
set -uo pipefail
bin=${1:?usage: hosts.sh BUILD_BIN_DIR OUT_DIR}
out=${2:?usage: hosts.sh BUILD_BIN_DIR OUT_DIR}
h=$RDMALAB_HOST
source "$(dirname "$0")/../../../lab/guest-wait.sh"  # wait_for, listening

# serve RAIL DIR [OPTION...]: rdma-bench's server on that rail's device (port 18515 + 10 (R-1)).
serve() {
    local dev=RDMALAB_RAIL_DEV_$1 rail=$1 dir=$2
    shift 2
    local how=("$@")
    [ $# -gt 0 ] || how=(--timeout 30)
    timeout -k 2 90 "$bin/rdma-bench" server -d "${!dev}" -p $((18505 + 10 * rail)) "${how[@]}" \
        >"$dir/rail$rail-server.out" 2>&1
    echo $? >"$dir/rail$rail-server.rc"
}
# write RAIL DIR [OPTION...]: rdma-bench's client on that rail's device, to host 1's address on
# it: 16 KiB messages (4 packets at path MTU 4096), 10 to warm up, then as OPTIONS say (50).
write() {
    local dev=RDMALAB_RAIL_DEV_$1 peer=RDMALAB_ADDR_1_$1 rail=$1 dir=$2
    shift 2
    local how=("$@")
    [ $# -gt 0 ] || how=(-n 50 --timeout 30)
    timeout -k 2 90 "$bin/rdma-bench" client "${!peer}" -d "${!dev}" -p $((18505 + 10 * rail)) \
        -s 16K --warmup 10 "${how[@]}" --json "$dir/rail$rail.json" >"$dir/rail$rail-client.out" 2>&1
    echo $? >"$dir/rail$rail-client.rc"
}

facts=$out/facts-$h
mkdir -p "$facts" "$out/both" "$out/rail2-down"
ibv_devinfo >"$facts/devinfo.txt" 2>&1
rdma link show >"$facts/links.txt" 2>&1
tc qdisc show >"$facts/qdisc.txt" 2>&1
env | grep '^RDMALAB_' | sort >"$facts/env.txt"

# ---- both rails at once
dir=$out/both
if [ "$h" = 1 ]; then
    serve 1 "$dir" &
    serve 2 "$dir" &
    listening 18515 18525 && touch "$dir/listening"
    wait
else
    wait_for "$dir/listening" 60
    write 1 "$dir" &
    write 2 "$dir" &
    wait
fi
touch "$dir/left-$h"
wait_for "$dir/left-$((3 - h))" 120

# ---- both rails writing (4 s and 6 s); host 2's rail 2 goes down under its QP: rail 1 carries on
dir=$out/rail2-down
state() { cat "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null || echo none; }
# sent DEV: packets the device sent, read without starting a process (two clients polling their
# CQs share this guest's one vCPU with the loop below).
sent() { local n=0; read -r n <"/sys/class/infiniband/$1/ports/1/hw_counters/sent_pkts"; echo "$n"; }
if [ "$h" = 1 ]; then
    serve 1 "$dir" &
    # Rail 2's server waits for the end of a phase its client will not finish: until the client's
    # goodbye crosses once the link is back, at most 1 + 6 s (--max-phase, plus the phase's 6 s).
    serve 2 "$dir" --timeout 5 --max-phase 1 &
    listening 18515 18525 && touch "$dir/listening"
    wait
else
    wait_for "$dir/listening" 60
    start=$(sent rxe1)
    # Completions by events (-e), not by polling: the clients leave this guest's vCPU to the watch.
    # Rail 2's run is the longer: the link goes down well inside it even on a loaded machine
    # (normally 1-2 s in), and rail 1's goes on after that.
    write 1 "$dir" -D 4 -e --timeout 30 &
    write 2 "$dir" -D 6 -e --timeout 5 &
    # The signal once rail 2's QP is under way (past its warm-up's 40 packets), within 30 s.
    for ((tick = 0; tick < 300; tick++)); do
        now=$(sent rxe1)
        [ $((now - start)) -ge 100 ] && break
        sleep 0.1
    done
    echo "$(($(sent rxe1) - start))" >"$dir/rail2-sent-at-signal"
    touch "$RDMALAB_SHARED/link-down-2.2"
    # The lab's waiter polls for the signal every 50 ms; rxe follows its netdev's state.
    for ((tick = 0; tick < 100; tick++)); do
        [ "$(cat /sys/class/net/r2eth0/operstate)" = down ] && [ "$(state rxe1)" != "4: ACTIVE" ] && break
        sleep 0.1
    done
    { echo "r2eth0 $(cat /sys/class/net/r2eth0/operstate)"; echo "eth0 $(cat /sys/class/net/eth0/operstate)"
      echo "rxe0 $(state rxe0)"; echo "rxe1 $(state rxe1)"; } >"$dir/down.txt"
    wait
    # The lab brings rail 2 back 2 s after it went down (--link-down 2.2@signal+2): within 20 s.
    for ((tick = 0; tick < 200; tick++)); do [ "$(state rxe1)" = "4: ACTIVE" ] && break; sleep 0.1; done
    { echo "r2eth0 $(cat /sys/class/net/r2eth0/operstate)"; echo "rxe0 $(state rxe0)"; echo "rxe1 $(state rxe1)"; } >"$dir/after.txt"
fi
exit 0
