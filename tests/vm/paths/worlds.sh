# Runs on the three hosts of `lab.sh --hosts 3` for tests/vm/paths.sh: the two-path fabric
# (lab/paths.sh; path A 1 ms, path B 3 ms, 20 Mbit/s each), then one world after another:
#   ecmp-qps    rdma-bench, 16 QPs each writing 20 messages of 1 KiB (one packet each) from host
#               2 to host 3, each QP's path chosen by ECMP
#   spray-qp    rdma-bench, one QP writing 200 such messages, every packet sprayed over both
#               paths (host 1 switches first); its record in spray-qp/bench.json
#   unordered-spray  unordered-delivery (the reliable unordered layer over UD), 8 transfers of
#               128 KiB, still sprayed
# QPs connected by hand (rdma-bench's TCP exchange): rdma_cm on host 3 refuses a connection
# request that arrives on one interface (a path's VLAN) when its reply would leave by another.
# Host 3 keeps its rxe counters before and after each world (stats-WORLD-before/after.txt).
# Outputs in OUT_DIR: setup-N.rc, WORLD/{server,client}.{out,rc}.
#   tests/vm/paths/worlds.sh BUILD_BIN_DIR OUT_DIR
set -uo pipefail
bin=${1:?usage: worlds.sh BUILD_BIN_DIR OUT_DIR}
out=${2:?usage: worlds.sh BUILD_BIN_DIR OUT_DIR}
repo=$(cd "$(dirname "$0")/../../.." && pwd)
h=$RDMALAB_HOST
source "$repo/lab/guest-wait.sh"  # wait_for, listening

bash "$repo/lab/paths.sh" setup --rate 20mbit,20mbit --delay 1,3 >"$out/setup-$h.out" 2>&1
echo $? >"$out/setup-$h.rc"

for world in ecmp-qps spray-qp unordered-spray; do
    dir=$out/$world
    mkdir -p "$dir"
    case $h in
        1)
            [ $world = spray-qp ] && bash "$repo/lab/paths.sh" mode spray >"$dir/mode.out" 2>&1
            touch "$dir/mode-set" ;;
        3)
            wait_for "$dir/mode-set"
            rdma statistic show link rxe0/1 >"$dir/stats-before.txt" 2>&1
            if [ $world = unordered-spray ]; then
                timeout -k 2 120 "$bin/unordered-delivery" server -n 8 -s 128K --timeout 60 \
                    >"$dir/server.out" 2>&1 &
            else
                timeout -k 2 120 "$bin/rdma-bench" server --timeout 60 >"$dir/server.out" 2>&1 &
            fi
            listening 18515
            touch "$dir/listening"
            wait $!
            echo $? >"$dir/server.rc"
            rdma statistic show link rxe0/1 >"$dir/stats-after.txt" 2>&1 ;;
        2)
            wait_for "$dir/listening" 90
            qps=16 iters=20
            [ $world = spray-qp ] && qps=1 iters=200
            if [ $world = unordered-spray ]; then
                timeout -k 2 120 "$bin/unordered-delivery" client 198.51.100.3 -n 8 -s 128K \
                    --timeout 60 >"$dir/client.out" 2>&1
            else
                timeout -k 2 120 "$bin/rdma-bench" client 198.51.100.3 -q $qps -s 1K -n $iters \
                    --timeout 60 --json "$dir/bench.json" >"$dir/client.out" 2>&1
            fi
            echo $? >"$dir/client.rc" ;;
    esac
    touch "$dir/left-$h"
    for n in 1 2 3; do wait_for "$dir/left-$n" 200; done
done
exit 0
