# Open MPI across the lab's hosts, for scripts that every host runs under
# `rdmalab lab --hosts N` (lab/mesh-run.sh, bench/allreduce-sweep.sh); sourced. Host 1 runs
# mpirun, which starts the other hosts' Open MPI daemons through lab/mesh-rsh.sh; every other
# host runs a runner that executes what mesh-rsh hands it until host 1 says it is done.
#   mpi_hosts_runner          hosts 2..N: run what mesh-rsh hands over, until host 1 is done
#                             (or 10 minutes have passed)
#   mpi_hosts_wait_runners    host 1: wait for every other host's runner; 1 (naming the host)
#                             if one never starts
#   mpi_hosts_mpirun ARGS...  host 1: mpirun, one rank per host over the wire's addresses, TCP
#                             between the ranks (Open MPI's UCX fails on rxe: softroce-lab notes),
#                             killed after RDMALAB_MPIRUN_TIMEOUT seconds (500)
#   mpi_hosts_done            host 1: the runners may stop
mpi_hosts_lab=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mpi_hosts_shared=${RDMALAB_SHARED:?mpi-hosts: run it with rdmalab lab --hosts N}
mpi_hosts_host=${RDMALAB_HOST:?} mpi_hosts_count=${RDMALAB_HOSTS:?}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

mpi_hosts_runner() {
    local inbox=$mpi_hosts_shared/rsh/$mpi_hosts_host tick cmd id
    mkdir -p "$inbox"
    touch "$mpi_hosts_shared/runner-$mpi_hosts_host"
    for ((tick = 0; tick < 6000; tick++)); do
        [ -e "$mpi_hosts_shared/done" ] && break
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
}

mpi_hosts_wait_runners() {
    local i t
    for ((i = 2; i <= mpi_hosts_count; i++)); do
        for ((t = 0; t < 600; t++)); do [ -e "$mpi_hosts_shared/runner-$i" ] && break; sleep 0.1; done
        [ -e "$mpi_hosts_shared/runner-$i" ] || { echo "mpi-hosts: host $i's runner never started" >&2; return 1; }
    done
}

mpi_hosts_mpirun() {
    local list="" i
    for ((i = 1; i <= mpi_hosts_count; i++)); do list+=${list:+,}198.51.100.$i; done
    # SIGPIPE ignored (inherited through exec): one mpirun of eighteen in a sweep died of it (exit
    # 141, no message) after every rank had verified its sums and written its record — most likely
    # a write at teardown to a daemon's socket or the agent's pipe already closed (not traced
    # further). Ignored, such a write is an EPIPE error instead; a rank that fails still makes
    # mpirun fail.
    (
        trap '' PIPE
        exec timeout -k 5 "${RDMALAB_MPIRUN_TIMEOUT:-500}" mpirun --allow-run-as-root --host "$list" -np "$mpi_hosts_count" --map-by node \
            --mca plm_rsh_agent "$mpi_hosts_lab/mesh-rsh.sh" --mca plm_rsh_no_tree_spawn 1 \
            --mca oob_tcp_if_include 198.51.100.0/24 --mca btl_tcp_if_include 198.51.100.0/24 \
            --mca btl self,tcp --mca pml ob1 \
            -x PATH \
            "$@"
    )
}

mpi_hosts_done() { touch "$mpi_hosts_shared/done"; }
