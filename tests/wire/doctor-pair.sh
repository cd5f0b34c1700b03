# Runs inside the lab's wire (lab.sh --hosts 2), on both hosts: rdma-doctor's pair checks, one
# world after another — rdma-doctor --respond on host 1, rdma-doctor --peer on host 2 — with each
# world's fault made before and mended after on the host it lives on. Then the worlds where the
# IP layer between them is broken and no responder can be reached at all (no RDMA fault): the
# doctor must name the layer. Outputs land in OUT_DIR/WORLD/ (report.txt, report.rc,
# responder.out…); tests/vm/wire.sh checks them.
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
        roce-blocked:1) drop_in 'udp dport 4791' ;;
        # The IP layer broken, RDMA untouched. Host 2's route to host 1 is of type prohibit.
        route-prohibit:2) ip route add prohibit "$RDMALAB_ADDR_1/32" ;;
        # Host 2 sends host 1's frames to a link address nobody has, by a static entry.
        static-neighbour:2) ip neigh replace "$RDMALAB_ADDR_1" lladdr 02:00:00:00:00:99 \
                                dev $netdev nud permanent ;;
        # Host 1 answers no ARP (arp_ignore 8); host 2 forgets what it had learnt, so it asks.
        arp-ignored:1) cat /proc/sys/net/ipv4/conf/$netdev/arp_ignore >"$out/arp-ignored/was"
                       echo 8 >/proc/sys/net/ipv4/conf/$netdev/arp_ignore ;;
        arp-ignored:2) ip neigh flush dev $netdev to "$RDMALAB_ADDR_1" ;;
        # Host 1 drops TCP to the pair's port (ICMP and ARP still answered).
        port-filtered:1) drop_in 'tcp dport 18516' ;;
    esac
}
# drop_in MATCH: host 1's firewall drops what comes in matching MATCH, counting it.
drop_in() {
    modprobe nf_tables
    nft add table inet doctor_world
    nft add chain inet doctor_world input '{ type filter hook input priority 0; }'
    nft add rule inet doctor_world input $1 counter drop
}
mend_fault() {
    case "$1:$2" in
        mtu-mismatch:2) ip link set dev $netdev mtu "$mtu" ;;
        roce-blocked:1|port-filtered:1) nft list table inet doctor_world >"$out/$1/nft.txt" 2>&1
                                         nft delete table inet doctor_world ;;
        route-prohibit:2) ip route del prohibit "$RDMALAB_ADDR_1/32" ;;
        static-neighbour:2) ip neigh del "$RDMALAB_ADDR_1" dev $netdev ;;
        arp-ignored:1) cat "$out/arp-ignored/was" >/proc/sys/net/ipv4/conf/$netdev/arp_ignore ;;
        arp-ignored:2) ip neigh flush dev $netdev to "$RDMALAB_ADDR_1" ;;
    esac
}

# both_reach DIR NAME: this host marks NAME-HOST in DIR and waits (at most 120 s) for the other's.
both_reach() {
    local waited=0
    touch "$1/$2-$RDMALAB_HOST"
    until [ -e "$1/$2-1" ] && [ -e "$1/$2-2" ]; do
        [ $waited -ge 1200 ] && break
        sleep 0.1
        waited=$((waited + 1))
    done
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
    both_reach "$dir" done
}

pair_world healthy
pair_world healthy-json -- --json
pair_world mtu-mismatch
pair_world roce-blocked
pair_world gid-index NCCL_IB_GID_INDEX=0
pair_world tclass-ecn NCCL_IB_TC=3
# unreachable_world WORLD: no responder anywhere; with the world's fault made on both hosts, host
# 2 probes host 1 (its TCP wait 3 s) and writes its report as JSON; then both mend it.
unreachable_world() {
    local world=$1 dir=$out/$1
    mkdir -p "$dir"
    make_fault "$world" "$RDMALAB_HOST"
    both_reach "$dir" made
    if [ "$RDMALAB_HOST" = 2 ]; then
        local start=$SECONDS
        timeout -k 5 60 "$doctor" --peer "$RDMALAB_ADDR_1" --window 0 --connect-wait 3 --json \
            >"$dir/report.json" 2>"$dir/report.err"
        echo $? >"$dir/report.rc"
        echo $((SECONDS - start)) >"$dir/seconds"
    fi
    both_reach "$dir" probed
    mend_fault "$world" "$RDMALAB_HOST"
    both_reach "$dir" mended
}

unreachable_world no-responder
unreachable_world route-prohibit
unreachable_world static-neighbour
unreachable_world arp-ignored
unreachable_world port-filtered
exit 0
