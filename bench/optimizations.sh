#!/usr/bin/env bash
# The optimizations the Performance chapter explains, each measured on its own with rdma-bench:
# inline data, doorbell batching (post lists), selective signaling, several QPs, and a shared
# receive queue with a shared CQ. Each at 64 B, 256 B and 1 KiB with the knob off and on; the lab
# drifts by tens of percent between phases of a run, so the knob's values run back to back at
# each size, the whole round is repeated, and the figure draws each point's median. Records
# (OUT_DIR/NAME/*.json) and figures (OUT_DIR/NAME.svg); run by `./rdmalab bench-optimizations`.
#   optimizations.sh BIN_DIR OUT_DIR [--duration SEC]
set -euo pipefail

source "$(dirname "$0")/lab-pair.sh"
sweep_script_start optimizations 0.3 "$@"
rounds=3

# measure NAME Y_MEASURE SERIES TITLE CLIENT_ARGS...: the rounds, their records and the figure.
measure() {
    local name=$1 y=$2 series=$3 title=$4 round size
    shift 4
    mkdir -p "$out/$name"
    rm -f "$out/$name"/*.json
    for round in $(seq "$rounds"); do
        echo "measuring $name, round $round of $rounds…" >&2
        for size in 64 256 1K; do
            lab_pair "$work/$name" 900 "$bin/rdma-bench" server --accept-timeout 30 -- \
                "$bin/rdma-bench" client "$RDMALAB_ADDR" --no-progress --json "$out/$name/round$round-$size.json" \
                -D "$duration" --warmup 20 -s "$size" "$@"
            cat "$work/$name/client.out"
        done
    done
    "$bin/rdma-bench" plot "$out/$name"/*.json -o "$out/$name.svg" --y "$y" --series "$series" \
        --title "$title (median of $rounds rounds)" >&2
}

# Each knob is swept with the others fixed; the window is 64 WRs per QP throughout.
measure inline mops inline "Inline data: RC write, message rate with -I 0 and -I 256 (inline up to 256 B)" \
    --op write -t 64 -Q 16 -I 0,256
measure post-list mops post_list "Doorbell batching: RC write, post lists of 1 and 16 WRs" \
    --op write -t 64 -Q 16 -l 1,16
measure signaling mops signal_every "Selective signaling: RC write, every WR vs 1 in 16 signaled" \
    --op write -t 64 -Q 1,16
measure qps mops qps "Several QPs: RC write from 1 and 4 QPs (window 64 each)" \
    --op write -t 64 -Q 16 -q 1,4
measure srq-shared-cq recv-mops srq,shared_cq "SRQ and shared CQ: RC send from 4 QPs, received rate" \
    --op send -t 64 -Q 16 -q 4 --srq off,on --shared-cq off,on
echo "wrote $out: the records (*.json) and the figures (*.svg)"
