# Runs inside the lab's wire (lab.sh --hosts 2), on both hosts: each lesson's server on host 1,
# its client on host 2, one after another; outputs and exit codes land in OUT_DIR (a folder in
# the repository, which both hosts and the host machine see), then rdma-doctor's pair worlds
# (doctor-pair.sh). tests/vm/wire.sh checks them.
#   tests/wire/lessons-across.sh BUILD_BIN_DIR OUT_DIR
set -uo pipefail
export RDMALAB_BIN=${1:?usage: lessons-across.sh BUILD_BIN_DIR OUT_DIR}
out=${2:?usage: lessons-across.sh BUILD_BIN_DIR OUT_DIR}
export RDMALAB_ADDR=$RDMALAB_ADDR_1   # pair.sh's default target: the server's host
source "$(dirname "$0")/../../lab/pair.sh" || exit 1

wire_pair "$out/rdma-write" rdma-write -s 64K -- -s 64K
wire_pair "$out/rdma-read" rdma-read -s 64K -- -s 64K
wire_pair "$out/send-recv" send-recv -n 4 -- -n 4
wire_pair "$out/write-imm" write-imm --
wire_pair "$out/atomics" atomics --clients 1 --
wire_pair "$out/ud" ud --
wire_pair "$out/qp-state-machine" qp-state-machine --
wire_pair "$out/on-the-wire" on-the-wire --
wire_pair "$out/rdma-bench" rdma-bench -- --op write,read,send,write-imm,fetch-add,cmp-swap -s 4K -n 50 \
    --warmup 5 --no-progress --json "$out/rdma-bench/records.json"
# A traffic class (DSCP 26 with ECT(0): 106): set by the client of an rdma_cm connection (the
# server's QP takes it from the connect request), and by both sides of a hand-made QP.
wire_pair "$out/rdma-write-tclass" rdma-write -s 16K -- -s 16K --tclass 106
wire_pair "$out/qp-state-machine-tclass" qp-state-machine --tclass 106 -- --tclass 106
# Last, on the same boot (its faults are mended as it goes): rdma-doctor's pair worlds.
bash "$(dirname "$0")/doctor-pair.sh" "$RDMALAB_BIN" "$out/doctor-pair"
exit 0
