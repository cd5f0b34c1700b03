#!/usr/bin/env bash
# rdma-mesh across the lab's hosts: run on every host by `rdmalab lab --hosts N`. Host 1 runs
# mpirun with one rank per host, starting the others' Open MPI daemons through
# lab/mesh-rsh.sh; every other host runs a runner that executes what mesh-rsh hands it, until
# host 1 says it is done.
#   lab/lab.sh --hosts 4 [--rate 4:20mbit] -- lab/mesh-run.sh BUILD_BIN_DIR OUT_DIR [ARGS...]
set -uo pipefail
bin=${1:?usage: mesh-run.sh BUILD_BIN_DIR OUT_DIR [RDMA-MESH ARGS...]}
out=${2:?usage: mesh-run.sh BUILD_BIN_DIR OUT_DIR [RDMA-MESH ARGS...]}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
shared=${RDMALAB_SHARED:?mesh-run: run it with rdmalab lab --hosts N}
host=${RDMALAB_HOST:?} hosts=${RDMALAB_HOSTS:?}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

if [ "$host" != 1 ]; then
    inbox=$shared/rsh/$host
    mkdir -p "$inbox"
    touch "$shared/runner-$host"
    # Run each command handed over; stop when host 1 is done (or after 10 minutes).
    for ((tick = 0; tick < 6000; tick++)); do
        [ -e "$shared/done" ] && break
        for cmd in "$inbox"/*.cmd; do
            [ -e "$cmd" ] || continue
            id=${cmd%.cmd}
            mv "$cmd" "$id.running"
            ( : >"$id.out"; touch "$id.started"
              bash -c "$(cat "$id.running")" >>"$id.out" 2>&1 </dev/null
              echo $? >"$id.rc" ) &
        done
        sleep 0.1
    done
    wait
    exit 0
fi

# Host 1: wait for every runner, then mpirun over the wire's addresses.
for ((i = 2; i <= hosts; i++)); do
    for ((t = 0; t < 600; t++)); do [ -e "$shared/runner-$i" ] && break; sleep 0.1; done
    [ -e "$shared/runner-$i" ] || { echo "mesh-run: host $i's runner never started" >&2; touch "$shared/done"; exit 1; }
done
list=""
for ((i = 1; i <= hosts; i++)); do list+=${list:+,}198.51.100.$i; done
mkdir -p "$out"
rc=0
timeout -k 5 500 mpirun --allow-run-as-root --host "$list" -np "$hosts" --map-by node \
    --mca plm_rsh_agent "$here/mesh-rsh.sh" --mca plm_rsh_no_tree_spawn 1 \
    --mca oob_tcp_if_include 198.51.100.0/24 --mca btl_tcp_if_include 198.51.100.0/24 \
    --mca btl self,tcp --mca pml ob1 \
    -x PATH \
    "$bin/rdma-mesh" --out "$out" "$@" || rc=$?
touch "$shared/done"
echo "mesh-run: rdma-mesh exit status $rc"
exit "$rc"
