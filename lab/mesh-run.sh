#!/usr/bin/env bash
# rdma-mesh across the lab's hosts: run on every host by `rdmalab lab --hosts N`. Host 1 runs
# mpirun with one rank per host; every other host runs the runner that starts its part
# (lab/mpi-hosts.sh).
#   lab/lab.sh --hosts 4 [--rate 4:20mbit] -- lab/mesh-run.sh BUILD_BIN_DIR OUT_DIR [ARGS...]
# --then-slow I:RATE OUT2: after the run, host I's egress is held to RATE (netem, applied by
# host I's runner) and the same run again writes OUT2: a healthy run and a degraded one in one
# boot. Each run's exit status is in its folder's `status`; mesh-run then exits 0 when both
# came to a verdict (0 or 1), else with the first other status.
set -uo pipefail
usage="usage: mesh-run.sh BUILD_BIN_DIR OUT_DIR [--then-slow I:RATE OUT2] [RDMA-MESH ARGS...]"
bin=${1:?$usage}
out=${2:?$usage}
shift 2
slow_host="" slow_rate="" slow_out=""
if [ "${1:-}" = --then-slow ]; then
    [[ ${2:-} =~ ^([1-9]):([1-9][0-9]*(kbit|mbit|gbit))$ ]] && [ -n "${3:-}" ] ||
        { echo "mesh-run: --then-slow needs I:RATE (e.g. 3:2mbit) and a second output folder" >&2; exit 2; }
    slow_host=${BASH_REMATCH[1]} slow_rate=${BASH_REMATCH[2]} slow_out=$3
    shift 3
fi
here=$(cd "$(dirname "$0")" && pwd)
[ -n "${RDMALAB_SHARED:-}" ] || { echo "mesh-run: run it with rdmalab lab --hosts N" >&2; exit 2; }
source "$here/mpi-hosts.sh"
host=$RDMALAB_HOST hosts=$RDMALAB_HOSTS

if [ "$host" != 1 ]; then
    mpi_hosts_runner
    exit 0
fi

# Host 1: wait for every runner, then mpirun over the wire's addresses.
mpi_hosts_wait_runners || { mpi_hosts_done; exit 1; }
# mesh OUT: one rdma-mesh run over every host; its exit status in OUT/status.
mesh() {
    local rc=0
    mkdir -p "$1"
    mpi_hosts_mpirun "$bin/rdma-mesh" --out "$1" "${args[@]}" || rc=$?
    echo "$rc" >"$1/status"
    echo "mesh-run: rdma-mesh exit status $rc ($1)"
    return "$rc"
}
args=("$@")
rc=0
mesh "$out" || rc=$?
if [ -n "$slow_host" ]; then
    if [ "$slow_host" -gt "$hosts" ] || [ "$slow_host" = 1 ]; then
        echo "mesh-run: --then-slow names host $slow_host: it must be one of 2..$hosts (host 1 runs mpirun)" >&2
        rc2=2
    # Only RoCE v2 (UDP port 4791) is held to the rate, in a queue of its own: MPI's messages and
    # mpirun's daemons (TCP) keep the link's speed. In one queue, a bandwidth burst of the slow
    # host's (about 1000 packets) held its MPI messages for seconds, past rdma-mesh's --timeout,
    # and its pairs failed instead of measuring slow (2026-11-28).
    elif "$here/mesh-rsh.sh" "198.51.100.$slow_host" \
        "modprobe -a sch_prio cls_u32 || exit 1
         for nic in /sys/class/net/eth*; do d=\${nic##*/}; tc qdisc add dev \$d root handle 1: prio &&
             tc qdisc add dev \$d parent 1:3 handle 30: netem rate $slow_rate &&
             tc filter add dev \$d parent 1: protocol ip u32 match ip protocol 17 0xff match ip dport 4791 0xffff flowid 1:3 ||
             exit 1; done"; then
        echo "mesh-run: host $slow_host's RoCE egress held to $slow_rate"
        rc2=0
        mesh "$slow_out" || rc2=$?
    else
        echo "mesh-run: host $slow_host could not be slowed (tc failed)" >&2
        rc2=2
    fi
    if [ "$rc" -le 1 ] && [ "$rc2" -le 1 ]; then rc=0; elif [ "$rc" -le 1 ]; then rc=$rc2; fi
fi
mpi_hosts_done
exit "$rc"
