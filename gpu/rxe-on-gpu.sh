#!/usr/bin/env bash
# On a GPU machine with no RDMA NIC (a lent H100, a workstation): does its kernel have Soft-RoCE?
# If it does, bring up one rxe device on a veth interface and run the GPU lessons against a real
# verbs device: gpu-write and gpu-read on every rung of the registration ladder (auto, dma-buf,
# peer memory, staging, each asked for by --path), and the proxy lesson with its CUDA producer.
# A rung the device refuses is a finding, written down with the refusal, not a failure of this
# script. Everything it adds (the rxe link, the interface, modules it loaded stay) is removed on
# every path.
#   gpu/rxe-on-gpu.sh [--bundle DIR] [--mem cuda:0] [--out FILE]     as root, on the GPU machine
# DIR is a gpu/device-bundle.sh folder (default build-device): its run script, the lessons, the
# rxe provider and iproute2's rdma tool. The address is 192.0.2.1/24 (TEST-NET-1, documentation
# only) on one end of a veth pair made for it: rxe sends a packet for its own address back to itself, so
# nothing leaves the machine.
# Exit status: 0 when the survey ran to its end (whatever the device refused: the report says),
# or the kernel has no Soft-RoCE; 1 when the device could not be brought up; 2 bad arguments.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: gpu/rxe-on-gpu.sh [--bundle DIR] [--mem cuda[:N]] [--out FILE]"
bundle=$repo/build-device
mem=cuda:0
out=/dev/stdout
while [ $# -gt 0 ]; do
    case $1 in
        --bundle) [ $# -ge 2 ] || { echo "rxe-on-gpu: --bundle needs a folder ($usage)" >&2; exit 2; }; bundle=$2; shift 2 ;;
        --mem) [ $# -ge 2 ] || { echo "rxe-on-gpu: --mem needs a value ($usage)" >&2; exit 2; }; mem=$2; shift 2 ;;
        --out) [ $# -ge 2 ] || { echo "rxe-on-gpu: --out needs a file ($usage)" >&2; exit 2; }; out=$2; shift 2 ;;
        -h|--help) echo "$usage"; exit 0 ;;
        *) echo "rxe-on-gpu: unknown argument '$1' ($usage)" >&2; exit 2 ;;
    esac
done
[ -x "$bundle/run" ] || { echo "rxe-on-gpu: no $bundle/run (make it here with gpu/device-bundle.sh)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "rxe-on-gpu: run as root (it loads modules and adds a link)" >&2; exit 2; }
run=$bundle/run
exec >"$out" 2>&1

interface=rdmalab0
address=192.0.2.1
device=rxe_gpu0
work=$(mktemp -d)
server_pid=
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    "$run" rdma link delete "$device" 2>/dev/null
    ip link delete "$interface" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

echo "# Soft-RoCE on a GPU machine (gpu/rxe-on-gpu.sh): $(date -u +%Y-%m-%dT%H:%M:%SZ), kernel $(uname -r), $(uname -n)"
command -v nvidia-smi >/dev/null &&
    nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader | sed 's/^/# GPU: /'
grep -m1 'model name' /proc/cpuinfo | sed 's/^model name\s*: /# CPU: /'

# --- Does the kernel have it? Every place that could say, then a try to load it. ---------------
echo "## the kernel's RDMA"
# The config says what is built in (=y: no /sys/module entry unless it has parameters) or a module
# (=m); Soft-RoCE (RDMA_RXE) is the one this needs, soft iWARP (RDMA_SIW) the other software device.
config_names='^(# )?CONFIG_(INFINIBAND|INFINIBAND_USER_ACCESS|RDMA_RXE|RDMA_SIW|MLX5_INFINIBAND)[ =]'
config_lines=
if [ -r /proc/config.gz ]; then
    config_lines=$(zcat /proc/config.gz | grep -E "$config_names" || true)
elif [ -r "/boot/config-$(uname -r)" ]; then
    config_lines=$(grep -E "$config_names" "/boot/config-$(uname -r)" || true)
fi
echo "${config_lines:-no kernel config to read (neither /proc/config.gz nor /boot/config-$(uname -r))}" | sed 's/^/kernel config: /'
devices=$(ls /sys/class/infiniband 2>/dev/null | tr '\n' ' ')
echo "RDMA devices: ${devices:-none}"
if [ ! -d /sys/module/rdma_rxe ] && ! grep -q "^CONFIG_RDMA_RXE=y" <<<"$config_lines" && command -v modprobe >/dev/null; then
    for module in ib_uverbs rdma_ucm rdma_rxe; do
        modprobe "$module" 2>&1 | sed "s/^/modprobe $module: /"
    done
fi
rxe_built_in=false
grep -q "^CONFIG_RDMA_RXE=y" <<<"$config_lines" && rxe_built_in=true
if [ ! -d /sys/module/rdma_rxe ] && ! $rxe_built_in; then
    echo "result: this kernel has no Soft-RoCE (no rdma_rxe built in or loadable), so no verbs device can be made here; nothing was run"
    exit 0
fi
echo "rdma_rxe: present"

# --- One rxe device on a veth interface. ---------------------------------------------------------
echo "## bring-up"
ip link add "$interface" type veth peer name "${interface}p" && ip addr add "$address/24" dev "$interface" &&
    ip link set "${interface}p" up && ip link set "$interface" up ||
    { echo "result: ip link add $interface type veth failed"; exit 1; }
"$run" rdma link add "$device" type rxe netdev "$interface" ||
    { echo "result: rdma link add $device type rxe netdev $interface failed"; exit 1; }
"$run" rdma link show
ls /dev/infiniband 2>&1 | sed 's/^/\/dev\/infiniband: /'

# One server/client pair: the server's output until it listens, then the client's, both kept.
incomplete=0
pair() {  # NAME TIMEOUT PROGRAM SERVER_ARGS... -- CLIENT_ARGS...
    local name=$1 limit=$2 program=$3
    shift 3
    local server_args=() client_args=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do server_args+=("$1"); shift; done
    shift
    client_args=("$@")
    echo "## $name"
    echo "\$ $program server ${server_args[*]}  &  $program client $address ${client_args[*]}"
    timeout "$limit" "$run" "$program" server "${server_args[@]}" >"$work/server" 2>&1 &
    server_pid=$!
    local waited=0
    until grep -q 'listening on' "$work/server" 2>/dev/null; do
        if ! kill -0 "$server_pid" 2>/dev/null || [ $waited -ge 100 ]; then break; fi
        sleep 0.1
        waited=$((waited + 1))
    done
    local client_status="not started (the server was not listening)"
    : >"$work/client"
    if grep -q "listening on" "$work/server"; then
        timeout "$limit" "$run" "$program" client "$address" "${client_args[@]}" >"$work/client" 2>&1
        client_status=$?
    fi
    wait "$server_pid"
    local server_status=$?
    server_pid=
    sed 's/^/  /' "$work/server"
    sed 's/^/  /' "$work/client"
    echo "exit: server $server_status, client $client_status"
    if [ $server_status = 0 ] && [ "$client_status" = 0 ]; then
        echo "verdict: ran and verified"
    else
        # A rung the device refuses ends in one line naming the verb that refused (above): a
        # finding about this machine, counted, not hidden.
        echo "verdict: did not complete"
        incomplete=$((incomplete + 1))
    fi
}

for path in auto dma-buf peer staging; do
    pair "gpu-write, --path $path" 30 gpu-write --mem "$mem" --path "$path" -s 1M -- --mem "$mem" --path "$path" -s 1M
    pair "gpu-read, --path $path" 30 gpu-read --mem "$mem" --path "$path" -s 1M -- --mem "$mem" --path "$path" -s 1M
done
pair "proxy, a CUDA kernel producing (4 KiB requests, 4 in flight)" 60 proxy -n 2000 -s 4096 -- \
    -n 2000 -s 4096 --in-flight 4 --mem "$mem"
echo "result: $incomplete of 9 runs did not complete (each says why above)"
