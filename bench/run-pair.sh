#!/usr/bin/env bash
# `./rdmalab bench ARGS`: an rdma-bench server and a client with ARGS against it, on this host
# (inside the lab, or natively where an RDMA device exists), through lab/pair.sh. The client's
# output streams; the server's goes to stderr only if it fails. The exit code is the client's,
# or the server's when only the server failed; a client that failed does not wait for its server.
#   run-pair.sh BIN_DIR [client options...]
set -uo pipefail
bin=${1:?usage: run-pair.sh BIN_DIR [client options]}
shift
: "${RDMALAB_ADDR:?run it through ./rdmalab bench (the lab sets RDMALAB_ADDR)}"
source "$(dirname "$0")/../lab/pair.sh" || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/rdma-bench-pair.XXXXXX")
server_pid=""
# On every path: the server stopped (if still running) and reaped, its log removed.
trap '[ -n "$server_pid" ] && { kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; }; rm -rf "$work"' EXIT
pair_limit_s=3600 pair_stream_client=1 pair_kill_on_failure=1 pair_commands "$work" \
    "$bin/rdma-bench" server --accept-timeout 30 -- "$bin/rdma-bench" client "$RDMALAB_ADDR" "$@"
rc=$(cat "$work/client.rc") server_rc=$(cat "$work/server.rc")
if [ "$rc" = 0 ] && [ "$server_rc" != 0 ]; then
    echo "run-pair: the rdma-bench server failed (exit code $server_rc); its output:" >&2
    cat "$work/server.out" >&2
    rc=$server_rc
fi
exit "$rc"
