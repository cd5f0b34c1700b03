# Runs inside the lab's wire (lab.sh --hosts 2), on both hosts: rdma-doctor's pair checks, one
# world after another — rdma-doctor --respond on host 1, rdma-doctor --peer on host 2 — with each
# world's fault made before and mended after on the host it lives on. Outputs land in
# OUT_DIR/WORLD/ (report.txt, report.rc, responder.out…); tests/vm/wire.sh checks them.
#   tests/wire/doctor-pair.sh BUILD_BIN_DIR OUT_DIR
set -uo pipefail
bin=${1:?usage: doctor-pair.sh BUILD_BIN_DIR OUT_DIR}
out=${2:?usage: doctor-pair.sh BUILD_BIN_DIR OUT_DIR}
doctor=$bin/rdma-doctor
netdev=eth0
mtu=$(cat /sys/class/net/$netdev/mtu)

# Each world's fault, on the host it lives on: make_fault WORLD HOST, mend_fault WORLD HOST.
make_fault() {
    case "$1:$2" in
        # Host 2 alone raised to jumbo frames: its port says RDMA MTU 4096, host 1's 1024.
        mtu-mismatch:2) ip link set dev $netdev mtu 9000 ;;
        # Host 1 drops every RoCE v2 packet that comes in (UDP port 4791); TCP still passes.
        roce-blocked:1)
            modprobe nf_tables
            nft add table inet doctor_world
            nft add chain inet doctor_world input '{ type filter hook input priority 0; }'
            nft add rule inet doctor_world input udp dport 4791 counter drop ;;
    esac
}
mend_fault() {
    case "$1:$2" in
        mtu-mismatch:2) ip link set dev $netdev mtu "$mtu" ;;
        roce-blocked:1) nft list table inet doctor_world >"$out/roce-blocked/nft.txt" 2>&1
                        nft delete table inet doctor_world ;;
    esac
}

# pair_world WORLD [VARIABLE=VALUE...] [-- PROBER_ARGS...]: host 1 answers, host 2 probes with the
# environment and arguments given; each waits for the other at most 60 s.
pair_world() {
    local world=$1 dir=$out/$1 waited=0
    shift
    local environment=() arguments=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do environment+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    arguments=("$@")
    mkdir -p "$dir"
    make_fault "$world" "$RDMALAB_HOST"
    if [ "$RDMALAB_HOST" = 1 ]; then
        timeout -k 5 120 "$doctor" --respond --wait 60 >"$dir/responder.out" 2>&1
        echo $? >"$dir/responder.rc"
    else
        until grep -q '^rdma-doctor: responding' "$dir/responder.out" 2>/dev/null; do
            [ $waited -ge 600 ] && break
            sleep 0.1
            waited=$((waited + 1))
        done
        local start=$SECONDS
        timeout -k 5 120 env "${environment[@]}" "$doctor" --peer "$RDMALAB_ADDR_1" --window 0 \
            "${arguments[@]}" >"$dir/report.txt" 2>"$dir/report.err"
        echo $? >"$dir/report.rc"
        echo $((SECONDS - start)) >"$dir/seconds"
    fi
    mend_fault "$world" "$RDMALAB_HOST"
    # Both hosts leave the world together: the next fault is made only when this one is mended.
    touch "$dir/done-$RDMALAB_HOST"
    waited=0
    until [ -e "$dir/done-1" ] && [ -e "$dir/done-2" ]; do
        [ $waited -ge 1200 ] && break
        sleep 0.1
        waited=$((waited + 1))
    done
}

pair_world healthy
pair_world healthy-json -- --json
pair_world mtu-mismatch
pair_world roce-blocked
pair_world gid-index NCCL_IB_GID_INDEX=0
pair_world tclass-ecn NCCL_IB_TC=3
# Nobody answering: one line, exit 2, within the connect's grace. Host 1 starts nothing until it
# is over (whatever runs next on it must not be the one that answers).
mkdir -p "$out/no-responder"
if [ "$RDMALAB_HOST" = 2 ]; then
    timeout -k 5 60 "$doctor" --peer "$RDMALAB_ADDR_1" --window 0 >"$out/no-responder/report.txt" \
        2>"$out/no-responder/report.err"
    echo $? >"$out/no-responder/report.rc"
else
    for _ in $(seq 600); do [ -e "$out/no-responder/report.rc" ] && break; sleep 0.1; done
fi
exit 0
