# Runs on both hosts of the lab's wire, one phase per lab boot, for tests/faults/link-flap.sh:
#   transient (lab.sh --hosts 2 --link-down 1@signal+3): rdma-write, 8 MiB from host 2 into host 1;
#      host 1's link goes down for 3 s while it is under way, then up: RC resends what was lost
#      (rxe retries without end: retry_cnt 7 means "forever" there) and the server verifies
#      every byte.
#   long (lab.sh --hosts 2 --link-down 2@signal+15): send-recv, host 2's link goes down for 15 s
#      while its client sends, longer than the client's --timeout 6: the client gives up within
#      it with one line, exit 1, and its server (which cannot hear the DREQ either) within its own
#      --timeout.
# Each phase has a lab of its own: after host 1's link had gone down and up under a connection,
# a new listener there was refused every connection (REJ "invalid service ID", rxe on Debian's
# 6.1 kernel), so a phase after it would test that instead.
#   tests/faults/link-flap-hosts.sh BUILD_BIN_DIR OUT_DIR transient|long
set -uo pipefail
usage="usage: link-flap-hosts.sh BUILD_BIN_DIR OUT_DIR transient|long"
bin=${1:?$usage}
out=${2:?$usage}
phase=${3:?$usage}
# The lessons through stdbuf: their "connected" line must reach the file at once, not at exit.
export RDMALAB_BIN=$out/bin
if [ "$RDMALAB_HOST" = 1 ]; then
    mkdir -p "$RDMALAB_BIN" "$out/$phase"
    for lesson in rdma-write send-recv; do
        printf '#!/bin/sh\nexec stdbuf -oL %q "$@"\n' "$bin/$lesson" >"$RDMALAB_BIN/$lesson"
        chmod +x "$RDMALAB_BIN/$lesson"
    done
    touch "$out/$phase.ready"
else
    for _ in $(seq 100); do [ -e "$out/$phase.ready" ] && break; sleep 0.1; done
fi
export RDMALAB_ADDR=$RDMALAB_ADDR_1
source "$(dirname "$0")/../../lab/pair.sh" || exit 1

# What each host's RoCE stack looks like after the phase, for the report when a check fails: the
# port's state, its GIDs, addresses, routes, neighbours and the kernel's last words.
diagnose() {
    {
        echo "== host $RDMALAB_HOST after the $phase phase, guest uptime $(cut -d' ' -f1 /proc/uptime) s"
        echo "port: $(cat /sys/class/infiniband/rxe0/ports/1/state 2>&1)"
        for gid in /sys/class/infiniband/rxe0/ports/1/gids/*; do
            value=$(cat "$gid" 2>/dev/null)
            [ -n "$value" ] && [ "$value" != 0000:0000:0000:0000:0000:0000:0000:0000 ] &&
                echo "gid ${gid##*/}: $value $(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/${gid##*/} 2>/dev/null)"
        done
        ip -br addr; ip route; ip neigh
        dmesg 2>&1 | tail -n 15
    } >"$out/diag-host$RDMALAB_HOST-$phase.txt" 2>&1
}

# The signal is given once the client has said it is connected (its transfer starts then).
signaller=""
if [ "$RDMALAB_HOST" = 2 ]; then
    down_host=1
    [ "$phase" = long ] && down_host=2
    (for _ in $(seq 600); do
         grep -q '^client: connected' "$out/$phase/client.out" 2>/dev/null &&
             { touch "$RDMALAB_SHARED/link-down-$down_host"; exit; }
         sleep 0.02
     done) &
    signaller=$!
fi
case $phase in
    transient) wire_pair "$out/$phase" rdma-write -s 8M --timeout 30 -- -s 8M --timeout 30 ;;
    long)
        if [ "$RDMALAB_HOST" = 1 ]; then
            wire_pair "$out/$phase" send-recv -n 1024 -s 64K --timeout 6 --
        else
            wire_pair "$out/$phase" send-recv -- -n 1024 -s 64K --timeout 6
        fi ;;
    *) echo "$usage" >&2; exit 2 ;;
esac
if [ "$RDMALAB_HOST" = 2 ]; then
    wire_pair_codes "$out/$phase" >"$out/$phase/codes"
    kill "$signaller" 2>/dev/null
fi
diagnose
exit 0
