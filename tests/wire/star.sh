# Runs inside the lab's wire with three hosts (a star: host 1 bridges its two links): a 64 KiB
# RDMA WRITE from host 2 to host 3, which crosses host 1's bridge. Outputs land in OUT_DIR.
#   tests/wire/star.sh BUILD_BIN_DIR OUT_DIR
set -uo pipefail
export RDMALAB_BIN=${1:?usage: star.sh BUILD_BIN_DIR OUT_DIR}
out=${2:?usage: star.sh BUILD_BIN_DIR OUT_DIR}
export RDMALAB_ADDR=$RDMALAB_ADDR_3
source "$(dirname "$0")/../../lab/pair.sh" || exit 1
wire_server_host=3 wire_pair "$out" rdma-write -s 64K -- -s 64K
exit 0
