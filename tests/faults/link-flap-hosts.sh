# Runs on both hosts of the lab's wire (lab.sh --hosts 2 --link-down 1@signal+3
# --link-down 2@signal+15), for tests/faults/link-flap.sh:
#   1. rdma-write, 8 MiB from host 2 into host 1; host 1's link goes down for 3 s while it is
#      under way, then up: RC resends what was lost (rxe retries without end: retry_cnt 7 means
#      "forever" there) and the server verifies every byte.
#   2. send-recv, host 2's link goes down for 15 s while its client sends, longer than the
#      client's --timeout 6: the client gives up within it with one line, exit 1, and its
#      server (which cannot hear the DREQ either) within its own --timeout.
#   tests/faults/link-flap-hosts.sh BUILD_BIN_DIR OUT_DIR
set -uo pipefail
bin=${1:?usage: link-flap-hosts.sh BUILD_BIN_DIR OUT_DIR}
out=${2:?usage: link-flap-hosts.sh BUILD_BIN_DIR OUT_DIR}
# The lessons through stdbuf: their "connected" line must reach the file at once, not at exit.
export RDMALAB_BIN=$out/bin
if [ "$RDMALAB_HOST" = 1 ]; then
    mkdir -p "$RDMALAB_BIN"
    for lesson in rdma-write send-recv; do
        printf '#!/bin/sh\nexec stdbuf -oL %q "$@"\n' "$bin/$lesson" >"$RDMALAB_BIN/$lesson"
        chmod +x "$RDMALAB_BIN/$lesson"
    done
    touch "$out/bin.ready"
else
    for _ in $(seq 100); do [ -e "$out/bin.ready" ] && break; sleep 0.1; done
fi
export RDMALAB_ADDR=$RDMALAB_ADDR_1
source "$(dirname "$0")/../../lab/pair.sh" || exit 1

# The signal is given once the client has said it is connected (its transfer starts then).
signal_when_connected() {  # signal_when_connected CLIENT_OUT HOST
    (for _ in $(seq 600); do
         grep -q '^client: connected' "$1" 2>/dev/null && { touch "$RDMALAB_SHARED/link-down-$2"; exit; }
         sleep 0.02
     done) &
    signaller=$!
}
if [ "$RDMALAB_HOST" = 2 ]; then
    mkdir -p "$out/transient" "$out/long"
    signal_when_connected "$out/transient/client.out" 1
fi
wire_pair "$out/transient" rdma-write -s 8M --timeout 30 -- -s 8M --timeout 30
[ "$RDMALAB_HOST" = 2 ] && { wire_pair_codes "$out/transient" >"$out/transient/codes"; kill $signaller 2>/dev/null; }
if [ "$RDMALAB_HOST" = 2 ]; then
    signal_when_connected "$out/long/client.out" 2
fi
if [ "$RDMALAB_HOST" = 1 ]; then
    wire_pair "$out/long" send-recv -n 1024 -s 64K --timeout 6 --
else
    wire_pair "$out/long" send-recv -- -n 1024 -s 64K --timeout 6
fi
if [ "$RDMALAB_HOST" = 2 ]; then
    wire_pair_codes "$out/long" >"$out/long/codes"
    kill $signaller 2>/dev/null
fi
exit 0
