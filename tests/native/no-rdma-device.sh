# Native test: on a host without any RDMA device (the build machines), a lesson or rdma-bench
# says so in one line and names the way to run it: the Soft-RoCE lab (./rdmalab lab -- …).
# Usage: bash tests/native/no-rdma-device.sh BUILD_BIN_DIR
set -uo pipefail
bin=${1:?usage: $0 BUILD_BIN_DIR}
if compgen -G '/sys/class/infiniband/*' >/dev/null; then
    echo "SKIP: this host has an RDMA device"
    exit 77
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
expect_failure_limit=10
source "$(dirname "$0")/../checks.sh" || exit 1

part lessons
hint='this host has no RDMA device: run it in the Soft-RoCE lab, \./rdmalab lab -- build/bin/'
expect_failure devices 1 "^devices: ibv_get_device_list failed: .*\\($hint"'devices' "$bin/devices"
expect_failure rdma-write-server 1 "^rdma-write: rdma_create_event_channel failed: .*\\($hint"'rdma-write' \
    "$bin/rdma-write" server --accept-timeout 1
expect_failure rdma-read-client 1 "^rdma-read: .*\\($hint"'rdma-read' "$bin/rdma-read" client 127.0.0.1
expect_failure qp-state-machine 1 "\\($hint"'qp-state-machine' "$bin/qp-state-machine" server --accept-timeout 1
expect_failure rdma-bench-client 1 "^rdma-bench: .*\\($hint"'rdma-bench' "$bin/rdma-bench" client 127.0.0.1
expect_failure multicast 1 "\\($hint"'multicast' "$bin/multicast" receiver --accept-timeout 1
part doctor
# rdma-doctor: one line on stdout naming the cause (no RDMA in this kernel) and the lab, exit 1.
rc=0
"$bin/rdma-doctor" >"$scratch/doctor.out" 2>"$scratch/doctor.err" || rc=$?
echo "$rc" >"$scratch/doctor.rc"
check "rdma-doctor: exits 1 (a finding)" rc_is "$scratch/doctor.rc" 1
if [ -d /sys/class/infiniband ]; then  # RDMA in the kernel, no device: that is the finding
    check "rdma-doctor: names the missing device" has_line "$scratch/doctor.out" '^✗ devices: no RDMA device'
else
    check "rdma-doctor: one line" [ "$(wc -l <"$scratch/doctor.out")" -eq 1 ]
    check "rdma-doctor: names the kernel and the lab" has_line "$scratch/doctor.out" \
        '^✗ kernel: this kernel has no RDMA support .*\./rdmalab lab -- build/bin/rdma-doctor'
fi
check "rdma-doctor: nothing on stderr" [ ! -s "$scratch/doctor.err" ]
part doctor-options
# The pair options: bad values get one line and exit 2; a responder with no RDMA here says so.
expect_failure doctor-peer-and-respond 2 "^rdma-doctor: --peer excludes --respond" "$bin/rdma-doctor" --peer 127.0.0.1 --respond
expect_failure doctor-tclass 2 "^rdma-doctor: --tclass: Value 300 not in range" "$bin/rdma-doctor" --tclass 300
expect_failure doctor-nccl-tc 2 "^rdma-doctor: NCCL_IB_TC: 'abc' is not a number from 0 to 255" \
    env NCCL_IB_TC=abc "$bin/rdma-doctor" --peer 127.0.0.1
expect_failure doctor-nccl-gid-index 2 "^rdma-doctor: NCCL_IB_GID_INDEX: '3x'" env NCCL_IB_GID_INDEX=3x "$bin/rdma-doctor"
expect_failure doctor-respond-without-rdma 2 "^rdma-doctor: no RDMA device on this host" "$bin/rdma-doctor" --respond --wait 1
finish
