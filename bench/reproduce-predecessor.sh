#!/usr/bin/env bash
# The predecessor project's two experiments, measured honestly with rdma-bench (run by
# `./rdmalab bench-predecessor`, in the lab or on real hardware):
#   1. RC write vs send, windows 64 and 512, 32 B..1 MiB;
#   2. RC vs UD send, windows 4 and 64, 32 B..the path MTU — counted at the RECEIVER (the only
#      honest rate for UD, which may drop), and never beyond the MTU: a UD message is one packet.
# Writes the records to OUT_DIR/{write-send-64,write-send-512,rc-ud-4,rc-ud-64}.json and the SVG
# figures drawn from them.
#   reproduce-predecessor.sh BIN_DIR OUT_DIR [--duration SEC]
set -euo pipefail

source "$(dirname "$0")/lab-pair.sh"
sweep_script_start predecessor 0.5 "$@"

# run NAME CLIENT_ARGS...: one rdma-bench run, its records in OUT_DIR/NAME.json.
run() {
    local name=$1
    shift
    echo "measuring $name…" >&2
    lab_pair "$work/$name" 1800 "$bin/rdma-bench" server --accept-timeout 30 -- \
        "$bin/rdma-bench" client "$RDMALAB_ADDR" --no-progress --json "$out/$name.json" \
        -D "$duration" --warmup 10 "$@"
    cat "$work/$name/client.out"
}

# Both windows with one signaled WR per quarter window, so the window refills while it drains.
run write-send-64 --op write,send -t 64 -Q 16 -s 32..1M
run write-send-512 --op write,send -t 512 -Q 128 -s 32..1M
mtu=$("$bin/rdma-bench" records "$out/write-send-64.json" --get records/0/environment/path_mtu)
run rc-ud-4 --op send -c RC,UD -t 4 -Q 1 -s "32..$mtu"
run rc-ud-64 --op send -c RC,UD -t 64 -Q 16 -s "32..$mtu"

plot() { "$bin/rdma-bench" plot "$@" >&2; }
plot "$out/write-send-64.json" "$out/write-send-512.json" -o "$out/write-vs-send.svg" --y gib --series op,window \
    --title "RC write vs send, windows 64 and 512 — throughput"
plot "$out/write-send-64.json" "$out/write-send-512.json" -o "$out/write-vs-send-mops.svg" --y mops --series op,window \
    --title "RC write vs send, windows 64 and 512 — message rate"
plot "$out/rc-ud-4.json" "$out/rc-ud-64.json" -o "$out/rc-vs-ud.svg" --y recv-gib --series transport,window \
    --title "RC vs UD send, up to the path MTU — received throughput"
plot "$out/rc-ud-4.json" "$out/rc-ud-64.json" -o "$out/rc-vs-ud-mops.svg" --y recv-mops --series transport,window \
    --title "RC vs UD send, up to the path MTU — received message rate"
echo "wrote $out: the records (*.json) and the figures (*.svg)"
