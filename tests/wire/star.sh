# Runs inside the lab's wire with three hosts (a star: host 1 bridges its two links): a 64 KiB
# RDMA WRITE from host 2 to host 3, which crosses host 1's bridge. Outputs land in OUT_DIR.
#   tests/wire/star.sh BUILD_BIN_DIR OUT_DIR
set -uo pipefail
export RDMALAB_BIN=${1:?usage: star.sh BUILD_BIN_DIR OUT_DIR}
out=${2:?usage: star.sh BUILD_BIN_DIR OUT_DIR}
export RDMALAB_ADDR=$RDMALAB_ADDR_3
source "$(dirname "$0")/../../lab/pair.sh" || exit 1
case "$RDMALAB_HOST" in
    3) start_server "$out" rdma-write -s 64K
       finish_server "$out" ;;
    2) for _ in $(seq 600); do grep -q '^server: listening' "$out/server.out" 2>/dev/null && break; sleep 0.05; done
       timeout -k 5 60 "$RDMALAB_BIN/rdma-write" client "$RDMALAB_ADDR_3" -s 64K >"$out/client.out" 2>&1
       echo $? >"$out/client.rc" ;;
esac
exit 0
