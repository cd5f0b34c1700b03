#!/usr/bin/env bash
# One lab host's part of `./rdmalab trace --ranks N` (run by lab.sh --hosts N on every host): a
# packet capture on this guest's eth0 around one rank of a collective lesson — rank = host − 1,
# the ranks' addresses the lab's hosts in order — run with --trace. Leaves DIR/hostN.pcap,
# DIR/hostN.events.jsonl and DIR/run/rank-R.out and .rc.
#   trace/guest-ranks.sh BIN_DIR DIR LESSON [ARGS...]
set -uo pipefail
bin=${1:?usage: guest-ranks.sh BIN_DIR DIR LESSON [ARGS...]}
dir=${2:?} lesson=${3:?}
shift 3
source "$(dirname "$0")/capture.sh" || exit 1
host=${RDMALAB_HOST:?guest-ranks.sh runs on the wire: lab.sh --hosts N}
rank=$((host - 1)) hosts=$RDMALAB_ADDRS
mkdir -p "$dir/run"
# The star's centre (host 1 of three or four) has its address on the bridge of its ports: its
# own packets pass there once, the others' it only forwards (a capture on one port would miss
# the other links, one on "any" would see each of its own packets twice).
interface=eth0
[ -e /sys/class/net/br0 ] && interface=br0
start_capture "$interface" "$dir/host$host.pcap" || exit 1
# Each rank waits for its neighbours by its own --timeout; `timeout` is the backstop.
timeout -k 5 90 "$bin/$lesson" --rank "$rank" --hosts "$hosts" "$@" \
    --trace "$dir/host$host.events.jsonl" >"$dir/run/rank-$rank.out" 2>&1
rc=$?
echo "$rc" >"$dir/run/rank-$rank.rc"
stop_capture
exit "$rc"
