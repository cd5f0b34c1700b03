#!/usr/bin/env bash
# Open MPI's remote-start agent for the lab (mpirun --mca plm_rsh_agent lab/mesh-rsh.sh): where
# a cluster uses ssh, the lab's guests have no sshd. Open MPI calls it as `AGENT HOST CMD...`;
# it hands CMD to the guest at HOST (198.51.100.I) through $RDMALAB_SHARED/rsh/I/, where that
# guest's runner (lab/mpi-hosts.sh) runs it, and returns its output and exit status, as ssh would.
set -uo pipefail
shared=${RDMALAB_SHARED:?mesh-rsh: RDMALAB_SHARED is not set (run inside the lab with --hosts)}
# Open MPI may put ssh-style options before the host (e.g. -x): skip them.
while [[ ${1:-} == -* ]]; do shift; done
host=${1:?usage: mesh-rsh.sh HOST CMD...}
shift
index=${host##*.}
[[ $index =~ ^[1-9]$ ]] || { echo "mesh-rsh: '$host' is not a lab host (198.51.100.I)" >&2; exit 255; }
inbox=$shared/rsh/$index
mkdir -p "$inbox"
id=$$-$RANDOM
printf '%s\n' "$*" >"$inbox/$id.tmp" && mv "$inbox/$id.tmp" "$inbox/$id.cmd"
# The runner writes the output as it goes and the status at the end; a runner that never
# starts it is an error after 60 s, as an unreachable ssh host would be.
waited=0
while [ ! -e "$inbox/$id.started" ]; do
    sleep 0.1
    waited=$((waited + 1))
    [ $waited -lt 600 ] || { echo "mesh-rsh: host $host never took the command (no runner?)" >&2; exit 255; }
done
tail -n +1 -f "$inbox/$id.out" --pid=$$ 2>/dev/null &
tail_pid=$!
# The command itself may run as long as the runner lives (10 minutes), and no longer.
waited=0
until [ -e "$inbox/$id.rc" ]; do
    sleep 0.1
    waited=$((waited + 1))
    [ $waited -lt 6000 ] || { kill "$tail_pid" 2>/dev/null; echo "mesh-rsh: host $host's command never ended" >&2; exit 255; }
done
sleep 0.2
kill "$tail_pid" 2>/dev/null
read -r rc <"$inbox/$id.rc"
exit "${rc:-255}"
