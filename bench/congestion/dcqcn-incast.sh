#!/usr/bin/env bash
# Runs inside the lab's wire with three hosts and --aqm 1:RATE: the incast of rdma-bench-incast.sh, made by
# the dcqcn lesson, twice in a row — first with no reaction to the marks (the senders count the
# CNPs and ignore them, as rxe does), then with DCQCN's reaction point pacing every sender. Host 3
# receives each run on an address of its own (198.51.100.13 without, .23 with), so one capture
# tells the runs apart by destination. Every flow: 4 KiB WRITEs, eight in flight, class 106,
# DURATION seconds; one from host 1, two from host 2, all through host 1's port to host 3.
# Outputs in OUT_DIR/none and OUT_DIR/dcqcn: server-P.out/.rc, client-P.out/.rc/.tsv (timeline).
#   bench/congestion/dcqcn-incast.sh BUILD_BIN_DIR OUT_DIR [DURATION] [WINDOW]
set -uo pipefail
bin=${1:?usage: dcqcn-incast.sh BUILD_BIN_DIR OUT_DIR [DURATION] [WINDOW]}
out=${2:?usage: dcqcn-incast.sh BUILD_BIN_DIR OUT_DIR [DURATION] [WINDOW]}
duration=${3:-6}
window=${4:-8}
shared=$RDMALAB_SHARED
declare -A address=([none]=198.51.100.13 [dcqcn]=198.51.100.23)
declare -A first_port=([none]=18610 [dcqcn]=18620)

# wait_for FILE SECONDS: until FILE exists; 1 if it never does.
wait_for() {
    local tries=$(($2 * 10))
    until [ -e "$1" ]; do
        tries=$((tries - 1))
        [ $tries -gt 0 ] || return 1
        sleep 0.1
    done
}

serve() {  # serve RUN: host 3's three servers for one run, on its address for that run
    local run=$1 dir=$out/$1 pids=() port
    mkdir -p "$dir"
    for port in $(seq "${first_port[$run]}" $((first_port[$run] + 2))); do
        timeout -k 5 $((duration + 60)) "$bin/dcqcn" server -b "${address[$run]}" -p "$port" \
            --tclass 106 --accept-timeout 40 >"$dir/server-$port.out" 2>&1 &
        pids+=($!)
    done
    # The senders start once every server says it is listening (at most 20 s).
    for port in $(seq "${first_port[$run]}" $((first_port[$run] + 2))); do
        for _ in $(seq 200); do grep -q 'listening on' "$dir/server-$port.out" && break; sleep 0.1; done
    done
    touch "$shared/dcqcn-$run-listening"
    local i=0
    for port in $(seq "${first_port[$run]}" $((first_port[$run] + 2))); do
        wait "${pids[i]}"
        echo $? >"$dir/server-$port.rc"
        i=$((i + 1))
    done
}

send() {  # send RUN PORT: one sender, bounded
    local run=$1 port=$2 dir=$out/$1
    mkdir -p "$dir"
    timeout -k 5 $((duration + 40)) "$bin/dcqcn" client "${address[$run]}" -p "$port" --tclass 106 \
        -D "$duration" --window "$window" --reaction "$run" --timeline "$dir/client-$port.tsv" \
        >"$dir/client-$port.out" 2>&1
    echo $? >"$dir/client-$port.rc"
}

case $RDMALAB_HOST in
    3)
        # Two more addresses on the receiver's port, and their RoCE v2 GIDs (rxe adds one per
        # address; wait until both are in its table, at most 5 s).
        netdev=$(ip -o -4 addr show to "$RDMALAB_ADDR_3/32" | cut -d' ' -f2)
        for run in none dcqcn; do
            ip addr add "${address[$run]}/24" dev "$netdev" || { echo "dcqcn-incast: ip addr add failed" >&2; exit 1; }
        done
        for run in none dcqcn; do
            gid=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${address[$run]//./ })
            for _ in $(seq 50); do grep -qx "$gid" /sys/class/infiniband/rxe0/ports/1/gids/* 2>/dev/null && break; sleep 0.1; done
        done
        serve none
        serve dcqcn
        ;;
    1 | 2)
        for run in none dcqcn; do
            wait_for "$shared/dcqcn-$run-listening" 60 ||
                { echo "dcqcn-incast: host 3's $run servers never said they were listening" >&2; exit 1; }
            port=${first_port[$run]}
            if [ "$RDMALAB_HOST" = 1 ]; then
                send "$run" "$port"
            else
                send "$run" $((port + 1)) &
                send "$run" $((port + 2))
                wait
            fi
        done
        ;;
esac
exit 0
