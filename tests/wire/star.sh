# Runs inside the lab's wire with three hosts (a star: host 1 bridges its two links): a 64 KiB
# RDMA WRITE from host 2 to host 3, which crosses host 1's bridge; then the ring allreduce with
# one rank per host (rank = host - 1), at a size that divides by neither the rank count nor the
# segment and at 1 MiB. Outputs land in OUT_DIR.
#   tests/wire/star.sh BUILD_BIN_DIR OUT_DIR
set -uo pipefail
export RDMALAB_BIN=${1:?usage: star.sh BUILD_BIN_DIR OUT_DIR}
out=${2:?usage: star.sh BUILD_BIN_DIR OUT_DIR}
export RDMALAB_ADDR=$RDMALAB_ADDR_3
source "$(dirname "$0")/../../lab/pair.sh" || exit 1
wire_server_host=3 wire_pair "$out" rdma-write -s 64K -- -s 64K

mkdir -p "$out/ring"
hosts=$RDMALAB_ADDR_1,$RDMALAB_ADDR_2,$RDMALAB_ADDR_3
rank=$((RDMALAB_HOST - 1))
timeout -k 5 120 "$RDMALAB_BIN/ring-allreduce" --rank "$rank" --hosts "$hosts" -s 1000 --segment 64 --slots 2 -n 2 \
    >"$out/ring/small-r$rank.out" 2>&1
echo $? >"$out/ring/small-r$rank.rc"
timeout -k 5 120 "$RDMALAB_BIN/ring-allreduce" --rank "$rank" --hosts "$hosts" -s 1M -n 3 \
    >"$out/ring/large-r$rank.out" 2>&1
echo $? >"$out/ring/large-r$rank.rc"
exit 0
