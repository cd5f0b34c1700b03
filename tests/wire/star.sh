# Runs inside the lab's wire with three hosts (a star: host 1 bridges its two links): a 64 KiB
# RDMA WRITE from host 2 to host 3, which crosses host 1's bridge; then the ring allreduce with
# one rank per host (rank = host - 1), at a size that divides by neither the rank count nor the
# segment, at 1 MiB, and at 1 MiB again with host 3's egress held to SLOW_RATE (netem): every
# step of a ring waits for its slowest link. Outputs land in OUT_DIR.
#   tests/wire/star.sh BUILD_BIN_DIR OUT_DIR [SLOW_RATE]
set -uo pipefail
export RDMALAB_BIN=${1:?usage: star.sh BUILD_BIN_DIR OUT_DIR [SLOW_RATE]}
out=${2:?usage: star.sh BUILD_BIN_DIR OUT_DIR [SLOW_RATE]}
slow_rate=${3:-4mbit}
export RDMALAB_ADDR=$RDMALAB_ADDR_3
source "$(dirname "$0")/../../lab/pair.sh" || exit 1
wire_server_host=3 wire_pair "$out" rdma-write -s 64K -- -s 64K

mkdir -p "$out/ring"
hosts=$RDMALAB_ADDRS
rank=$((RDMALAB_HOST - 1))
# ring NAME ARGS...: this host's rank; its output in ring/NAME-rRANK.out, its status in .rc.
ring() {
    local name=$1
    shift
    timeout -k 5 120 "$RDMALAB_BIN/ring-allreduce" --rank "$rank" --hosts "$hosts" "$@" >"$out/ring/$name-r$rank.out" 2>&1
    echo $? >"$out/ring/$name-r$rank.rc"
}
ring small -s 1000 --segment 64 --slots 2 -n 2
ring large -s 1M -n 3
# The others wait for rank 2 (their connect is patient) while host 3 slows its egress.
[ "$RDMALAB_HOST" = 3 ] && tc qdisc add dev eth0 root netem rate "$slow_rate" && echo "$slow_rate" >"$out/ring/slow-rate"
ring slow -s 1M -n 3
[ "$RDMALAB_HOST" = 3 ] && tc qdisc del dev eth0 root
exit 0
