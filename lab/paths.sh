#!/usr/bin/env bash
# The lab's two-path fabric (docs/lab.md#two-paths), inside the guests of `rdmalab lab --hosts 3`:
# host 1 stops bridging and routes; host 2 (the sender) reaches host 3 (the receiver) through it
# over two parallel paths, A and B: VLANs 10 and 20 on host 1's link to host 3, each with its own
# rate, delay and queue on host 1's way out. Which path a packet to host 3 takes:
#   ecmp   the kernel's multipath route, hashing each packet's addresses, protocol and ports
#          (net.ipv4.fib_multipath_hash_policy=1): a RoCE v2 QP's UDP source port, which rxe
#          derives from the QP number, picks its path for the QP's whole life
#   spray  every RoCE v2 packet to the other path than the one before (nftables: a mark from
#          `numgen inc mod 2`, a routing table per mark)
# Host 3's own packets (ACKs, NAKs, READ responses) go back untagged on its link, one way.
#   lab/paths.sh setup [--mode ecmp|spray] [--rate RATE_A,RATE_B] [--delay MS_A,MS_B]
#       every host runs it (each does its part, then waits for the others, 90 s at most);
#       defaults: ecmp, 50mbit,50mbit, 1,1
#   lab/paths.sh mode ecmp|spray     host 1 only: switch, best with no traffic under way
# Addresses: host 2 198.51.100.2 and host 3 198.51.100.3 as always, each routed to the other
# through 198.51.100.1; the paths' ends 198.51.100.201/.202 (A) and .205/.206 (B). Host 3 holds
# its address on each path's VLAN device too: rxe takes a packet that arrives on a VLAN device
# for the rxe device of the VLAN's real device, but checks its destination against the GIDs of
# the device it arrived on.
set -uo pipefail
die() {
    echo "lab/paths.sh: $*" >&2
    exit 2
}
[ "${RDMALAB_HOSTS:-}" = 3 ] || die "runs inside the guests of rdmalab lab --hosts 3 (RDMALAB_HOSTS is '${RDMALAB_HOSTS:-}')"
host=${RDMALAB_HOST:?}
shared=${RDMALAB_SHARED:?}

# nic_with_mac MAC: the interface that has it (host 1 has one per link, named in PCI order).
nic_with_mac() {
    local nic
    for nic in /sys/class/net/eth*; do
        [ "$(cat "$nic/address")" = "$1" ] && echo "${nic##*/}" && return 0
    done
    return 1
}

# set_mode ecmp|spray (host 1): the policy rules and the nftables table that spraying needs.
set_mode() {
    nft delete table ip lab_spray 2>/dev/null
    ip rule del fwmark 1 table 101 2>/dev/null
    ip rule del fwmark 2 table 102 2>/dev/null
    [ "$1" = ecmp ] && return 0
    ip rule add fwmark 1 table 101 && ip rule add fwmark 2 table 102 &&
        nft add table ip lab_spray &&
        nft add chain ip lab_spray prerouting '{ type filter hook prerouting priority -150; }' &&
        nft add rule ip lab_spray prerouting ip daddr 198.51.100.3 udp dport 4791 \
            meta mark set numgen inc mod 2 offset 1
}

router() {
    local to_2 to_3
    to_2=$(nic_with_mac 52:54:00:5e:01:02) && to_3=$(nic_with_mac 52:54:00:5e:01:03) ||
        die "host 1 has no link to host 2 or 3"
    # The router needs no RDMA device; its bridge goes, each link gets its own routes.
    rdma link delete rxe0 2>/dev/null
    ip link set "$to_2" nomaster && ip link set "$to_3" nomaster && ip link del br0 &&
        ip addr add 198.51.100.1/32 dev "$to_2" && ip addr add 198.51.100.1/32 dev "$to_3" &&
        ip route add 198.51.100.2/32 dev "$to_2" &&
        ip link add link "$to_3" name pathA type vlan id 10 &&
        ip link add link "$to_3" name pathB type vlan id 20 &&
        ip addr add 198.51.100.201/30 dev pathA && ip addr add 198.51.100.205/30 dev pathB &&
        ip link set pathA up && ip link set pathB up || return 1
    sysctl -qw net.ipv4.ip_forward=1 net.ipv4.fib_multipath_hash_policy=1 || return 1
    ip route add 198.51.100.3/32 nexthop via 198.51.100.202 dev pathA \
        nexthop via 198.51.100.206 dev pathB &&
        ip route add 198.51.100.3/32 via 198.51.100.202 dev pathA table 101 &&
        ip route add 198.51.100.3/32 via 198.51.100.206 dev pathB table 102 || return 1
    tc qdisc add dev pathA root netem rate "${rate%,*}" delay "${delay%,*}ms" limit 1000 &&
        tc qdisc add dev pathB root netem rate "${rate#*,}" delay "${delay#*,}ms" limit 1000 &&
        set_mode "$mode"
}

endpoint() {
    if [ "$host" = 3 ]; then
        ip link add link eth0 name pathA type vlan id 10 &&
            ip link add link eth0 name pathB type vlan id 20 &&
            ip addr add 198.51.100.202/30 dev pathA && ip addr add 198.51.100.206/30 dev pathB &&
            ip addr add 198.51.100.3/32 dev pathA && ip addr add 198.51.100.3/32 dev pathB &&
            ip link set pathA up && ip link set pathB up || return 1
    fi
    ip route add "198.51.100.$((5 - host))/32" via 198.51.100.1 dev eth0
}

command=${1:-}
shift || true
mode=ecmp rate=50mbit,50mbit delay=1,1
case $command in
    setup)
        while [ $# -gt 0 ]; do
            case $1 in
                --mode) mode=${2:-} ;;
                --rate) rate=${2:-} ;;
                --delay) delay=${2:-} ;;
                *) die "unknown option '$1' (setup [--mode ecmp|spray] [--rate A,B] [--delay A,B])" ;;
            esac
            [ $# -ge 2 ] || die "$1 needs a value"
            shift 2
        done
        [[ $mode =~ ^(ecmp|spray)$ ]] || die "--mode must be ecmp or spray, got '$mode'"
        [[ $rate =~ ^[0-9]+[kmg]?bit,[0-9]+[kmg]?bit$ ]] ||
            die "--rate must be two rates, path A's and B's (e.g. 50mbit,20mbit), got '$rate'"
        [[ $delay =~ ^[0-9]+(\.[0-9]+)?,[0-9]+(\.[0-9]+)?$ ]] ||
            die "--delay must be two delays in ms, path A's and B's (e.g. 1,3), got '$delay'"
        modprobe -a 8021q nf_tables nft_numgen || die "modprobe 8021q nf_tables nft_numgen failed"
        sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
        if [ "$host" = 1 ]; then router; else endpoint; fi || die "host $host: setting up its part failed"
        touch "$shared/paths-ready-$host"
        for ((tick = 0; tick < 900; tick++)); do
            [ -e "$shared/paths-ready-1" ] && [ -e "$shared/paths-ready-2" ] &&
                [ -e "$shared/paths-ready-3" ] && exit 0
            sleep 0.1
        done
        die "host $host: the other hosts did not set up their parts within 90 s" ;;
    mode)
        [ "$host" = 1 ] || die "mode: only on host 1, the router"
        [[ ${1:-} =~ ^(ecmp|spray)$ ]] || die "mode must be ecmp or spray, got '${1:-}'"
        set_mode "$1" || die "switching to $1 failed" ;;
    *) die "usage: lab/paths.sh setup [--mode ecmp|spray] [--rate A,B] [--delay A,B] | mode ecmp|spray" ;;
esac
