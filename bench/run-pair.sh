#!/usr/bin/env bash
# `./rdmalab bench ARGS`: an rdma-bench server and a client with ARGS against it, on this host
# (inside the lab, or natively where an RDMA device exists). The client's output streams; the
# server's goes to stderr only if it fails. The exit code is the client's, or the server's when
# only the server failed.
#   run-pair.sh BIN_DIR [client options...]
set -uo pipefail
bin=${1:?usage: run-pair.sh BIN_DIR [client options]}
shift
: "${RDMALAB_ADDR:?run it through ./rdmalab bench (the lab sets RDMALAB_ADDR)}"
log=$(mktemp "${TMPDIR:-/tmp}/rdma-bench-server.XXXXXX")
server=""
# On every path: the server stopped (if still running) and reaped, its log removed. Nothing in
# here may change the exit code.
finish() {
    if [ -n "$server" ]; then
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
    fi
    rm -f "$log"
}
trap finish EXIT
timeout -k 5 3600 "$bin/rdma-bench" server --accept-timeout 30 >"$log" 2>&1 &
server=$!
for _ in $(seq 100); do
    grep -q '^server: listening' "$log" && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
done
rc=0
"$bin/rdma-bench" client "$RDMALAB_ADDR" "$@" || rc=$?
server_rc=0
if [ "$rc" -eq 0 ]; then
    wait "$server" || server_rc=$?
else
    # The client failed (perhaps before connecting): the server need not wait out its accept limit.
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
fi
server=""
if [ "$server_rc" -ne 0 ]; then
    echo "run-pair: the rdma-bench server failed (exit code $server_rc); its output:" >&2
    cat "$log" >&2
    rc=$server_rc
fi
exit "$rc"
