#!/usr/bin/env bash
# One lab host's part of `./rdmalab trace` (run by lab.sh --hosts 2 on every host): a packet
# capture on this guest's eth0 — inside the guest, so its timestamps and the program's --trace
# events come from the same CLOCK_REALTIME — around the lesson's server (host 1) or client
# (host 2), each with --trace. Leaves DIR/hostN.pcap, DIR/hostN.events.jsonl and, from
# lab/pair.sh's wire_pair, DIR/run/{server,client}.{out,rc}.
#   trace/guest.sh BIN_DIR DIR LESSON [SERVER_ARGS...] -- [CLIENT_ARGS...]
set -uo pipefail
export RDMALAB_BIN=${1:?usage: guest.sh BIN_DIR DIR LESSON [SERVER_ARGS...] -- [CLIENT_ARGS...]}
dir=${2:?} lesson=${3:?}
shift 3
source "$(dirname "$0")/../lab/pair.sh" || exit 1
host=${RDMALAB_HOST:?guest.sh runs on the wire: lab.sh --hosts 2}
pcap=$dir/host$host.pcap

# RoCE v2 only (UDP 4791: the data path and rdma_cm's own messages to QP 1); pcap format.
dumpcap -q -i eth0 -f 'udp port 4791' -P -w "$pcap" 2>"$dir/host$host.dumpcap.err" &
capture=$!
# dumpcap writes the file's header once it is capturing: no packet before that is missed.
for _ in $(seq 100); do [ -s "$pcap" ] && break; sleep 0.05; done
if [ ! -s "$pcap" ]; then
    echo "trace: host $host: dumpcap did not start: $(head -n 1 "$dir/host$host.dumpcap.err")" >&2
    kill "$capture" 2>/dev/null
    exit 1
fi

split_args "$@"
wire_pair "$dir/run" "$lesson" "${server_args[@]}" --trace "$dir/host1.events.jsonl" -- \
    "${client_args[@]}" --trace "$dir/host2.events.jsonl"
sleep 0.5  # the last ACK and rdma_cm's disconnect messages
kill -INT "$capture" 2>/dev/null
wait "$capture" 2>/dev/null
if [ "$host" = 1 ]; then exit "$(cat "$dir/run/server.rc" 2>/dev/null || echo 1)"; fi
exit "$(cat "$dir/run/client.rc" 2>/dev/null || echo 1)"
