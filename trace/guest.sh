#!/usr/bin/env bash
# One lab host's part of `./rdmalab trace` (run by lab.sh --hosts 2 on every host): a packet
# capture on this guest's eth0 — inside the guest, so its timestamps and the program's --trace
# events come from the same CLOCK_REALTIME — around the lesson's server (host 1) or client
# (host 2), each with --trace. Leaves DIR/hostN.pcap, DIR/hostN.events.jsonl and, from
# lab/pair.sh's wire_pair, DIR/run/{server,client}.{out,rc}.
#   trace/guest.sh [--any-interface] [--signal-on HOST TEXT] BIN_DIR DIR LESSON [SERVER_ARGS...] -- [CLIENT_ARGS...]
# --any-interface: capture on "any", which outlives eth0 going down (a capture on eth0 ends
# with it). --signal-on HOST TEXT: on the client's host, create $RDMALAB_SHARED/link-down-HOST
# (the lab's link-down signal) once the client's output has a line containing TEXT.
set -uo pipefail
interface=eth0
signal_host="" signal_text=""
while [ $# -gt 0 ]; do
    case "$1" in
        --any-interface) interface=any; shift ;;
        --signal-on) signal_host=${2:?} signal_text=${3:?}; shift 3 ;;
        *) break ;;
    esac
done
export RDMALAB_BIN=${1:?usage: guest.sh [--any-interface] [--signal-on HOST TEXT] BIN_DIR DIR LESSON [SERVER_ARGS...] -- [CLIENT_ARGS...]}
dir=${2:?} lesson=${3:?}
shift 3
source "$(dirname "$0")/../lab/pair.sh" || exit 1
source "$(dirname "$0")/capture.sh" || exit 1
host=${RDMALAB_HOST:?guest.sh runs on the wire: lab.sh --hosts 2}
start_capture "$interface" "$dir/host$host.pcap" || exit 1

split_args "$@"
signaller=""
if [ -n "$signal_host" ] && [ "$host" = 2 ]; then
    # Bounded by the client's own limit (pair.sh's 90 s); ends early if the client does.
    (
        for _ in $(seq 1800); do
            if grep -qF -- "$signal_text" "$dir/run/client.out" 2>/dev/null; then
                touch "$RDMALAB_SHARED/link-down-$signal_host"
                exit 0
            fi
            [ -s "$dir/run/client.rc" ] && exit 0
            sleep 0.05
        done
    ) &
    signaller=$!
fi
wire_pair "$dir/run" "$lesson" "${server_args[@]}" --trace "$dir/host1.events.jsonl" -- \
    "${client_args[@]}" --trace "$dir/host2.events.jsonl"
[ -z "$signaller" ] || wait "$signaller"
stop_capture
if [ "$host" = 1 ]; then exit "$(cat "$dir/run/server.rc" 2>/dev/null || echo 1)"; fi
exit "$(cat "$dir/run/client.rc" 2>/dev/null || echo 1)"
