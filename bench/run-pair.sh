#!/usr/bin/env bash
# `./rdmalab bench ARGS`: an rdma-bench server and a client with ARGS against it, on this host
# (inside the lab, or natively where an RDMA device exists). The client's output streams; the
# server's goes to stderr only if it fails.
#   run-pair.sh BIN_DIR [client options...]
set -euo pipefail
bin=${1:?usage: run-pair.sh BIN_DIR [client options]}
shift
: "${RDMALAB_ADDR:?run it through ./rdmalab bench (the lab sets RDMALAB_ADDR)}"
log=$(mktemp "${TMPDIR:-/tmp}/rdma-bench-server.XXXXXX")
timeout -k 5 3600 "$bin/rdma-bench" server --accept-timeout 30 >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 100); do
    grep -q '^server: listening' "$log" && break
    kill -0 $server 2>/dev/null || break
    sleep 0.1
done
rc=0
"$bin/rdma-bench" client "$RDMALAB_ADDR" "$@" || rc=$?
server_rc=0
wait $server || server_rc=$?
[ $server_rc -eq 0 ] || [ $rc -ne 0 ] || { cat "$log" >&2; rc=$server_rc; }
exit $rc
