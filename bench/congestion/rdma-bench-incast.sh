#!/usr/bin/env bash
# Runs inside the lab's wire with three hosts and --aqm 1:RATE (the star's centre holds its ports
# to RATE, RED marking DSCP 26's queue): an incast. Host 3 receives three flows at once, one from
# host 1 and two from host 2, all crossing host 1's port to host 3; every flow is an rdma-bench
# RDMA WRITE run of DURATION seconds with traffic class 106 (DSCP 26, ECT(0)) on both sides.
# Outputs land in OUT_DIR: server-P.out, client-P.out/.rc/.json for each port P.
#   bench/congestion/rdma-bench-incast.sh BUILD_BIN_DIR OUT_DIR [DURATION]
set -uo pipefail
bin=${1:?usage: incast.sh BUILD_BIN_DIR OUT_DIR [DURATION]}
out=${2:?usage: incast.sh BUILD_BIN_DIR OUT_DIR [DURATION]}
duration=${3:-4}
ports=(18600 18601 18602)
mkdir -p "$out"
ready=$RDMALAB_SHARED/incast-servers-listening
# flow PORT: one sender, bounded; its output, status and record under OUT_DIR.
flow() {
    timeout -k 5 $((duration + 40)) "$bin/rdma-bench" client "$RDMALAB_ADDR_3" -p "$1" --tclass 106 \
        -o write -s 4K -t 8 -D "$duration" --warmup 10 --no-progress --json "$out/client-$1.json" \
        >"$out/client-$1.out" 2>&1
    echo $? >"$out/client-$1.rc"
}
case $RDMALAB_HOST in
    3)
        pids=()
        for port in "${ports[@]}"; do
            timeout -k 5 $((duration + 60)) "$bin/rdma-bench" server -p "$port" --tclass 106 \
                --accept-timeout 40 >"$out/server-$port.out" 2>&1 &
            pids+=($!)
        done
        # The senders start once every server's TCP port is listening (at most 20 s).
        for port in "${ports[@]}"; do
            for _ in $(seq 200); do [ -n "$(ss -Hltn "sport = :$port")" ] && break; sleep 0.1; done
        done
        touch "$ready"
        for i in "${!pids[@]}"; do
            wait "${pids[i]}"
            echo $? >"$out/server-${ports[i]}.rc"
        done
        ;;
    1 | 2)
        for _ in $(seq 300); do [ -e "$ready" ] && break; sleep 0.1; done
        [ -e "$ready" ] || { echo "incast: host 3's servers never said they were listening" >&2; exit 1; }
        if [ "$RDMALAB_HOST" = 1 ]; then
            flow "${ports[0]}"
        else
            flow "${ports[1]}" &
            flow "${ports[2]}"
            wait
        fi
        ;;
esac
exit 0
