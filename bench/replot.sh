#!/usr/bin/env bash
# Re-draws every figure in bench/results from the records already there, with the arguments the
# scripts that measured them use (bench/optimizations.sh, bench/reproduce-predecessor.sh,
# bench/wire-loss.sh): after a change to the plot code, no measurement is repeated. Also draws
# the predecessor sweep's two runs together (bench/results/predecessor/both-runs/), so their
# spread shows as a band.
#   bench/replot.sh [RDMA_BENCH]   (default: build/bin/rdma-bench; build it first)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${1:-$repo_root/build/bin/rdma-bench}"
[[ -x "$bin" ]] || { echo "bench/replot.sh: $bin is missing: cmake --build build --target rdma-bench" >&2; exit 1; }
results="$repo_root/bench/results"
plot() { "$bin" plot "$@" >&2; }

# bench/optimizations.sh: three rounds per figure.
optimizations() {
    local name=$1 y=$2 series=$3 title=$4
    plot "$results/optimizations/$name"/*.json -o "$results/optimizations/$name.svg" --y "$y" \
        --series "$series" --title "$title (median of 3 rounds)"
}
optimizations inline mops inline "Inline data: RC write, message rate with -I 0 and -I 256 (inline up to 256 B)"
optimizations post-list mops post_list "Doorbell batching: RC write, post lists of 1 and 16 WRs"
optimizations signaling mops signal_every "Selective signaling: RC write, every WR vs 1 in 16 signaled"
optimizations qps mops qps "Several QPs: RC write from 1 and 4 QPs (window 64 each)"
optimizations srq-shared-cq recv-mops srq,shared_cq "SRQ and shared CQ: RC send from 4 QPs, received rate"

# bench/reproduce-predecessor.sh: the first run and its repeat, each on its own.
for run in "$results/predecessor" "$results/predecessor/repeat"; do
    plot "$run/write-send-64.json" "$run/write-send-512.json" -o "$run/write-vs-send.svg" --y gib \
        --series op,window --title "RC write vs send, windows 64 and 512 — throughput"
    plot "$run/write-send-64.json" "$run/write-send-512.json" -o "$run/write-vs-send-mops.svg" \
        --y mops --series op,window --title "RC write vs send, windows 64 and 512 — message rate"
    plot "$run/rc-ud-4.json" "$run/rc-ud-64.json" -o "$run/rc-vs-ud.svg" --y recv-gib \
        --series transport,window --title "RC vs UD send, up to the path MTU — received throughput"
    plot "$run/rc-ud-4.json" "$run/rc-ud-64.json" -o "$run/rc-vs-ud-mops.svg" --y recv-mops \
        --series transport,window --title "RC vs UD send, up to the path MTU — received message rate"
done
# Both runs in one figure: the line between them, the band from one to the other.
both="$results/predecessor/both-runs"
mkdir -p "$both"
write_send=("$results"/predecessor/write-send-{64,512}.json "$results"/predecessor/repeat/write-send-{64,512}.json)
plot "${write_send[@]}" -o "$both/write-vs-send.svg" --y gib --series op,window \
    --title "RC write vs send, both runs — throughput (line: their mean)"
plot "${write_send[@]}" -o "$both/write-vs-send-mops.svg" --y mops --series op,window \
    --title "RC write vs send, both runs — message rate (line: their mean)"

# bench/wire-loss.sh: one record file per loss rate.
plot "$results"/wire/rc-loss-{0,0.1,1,5,10}.json --series environment.lab_faults --y gib \
    -o "$results/wire/rc-write-goodput-vs-loss.svg" \
    --title "RC WRITE goodput under loss (go-back-N), rdma-bench across the lab's wire"
echo "bench/replot.sh: figures re-drawn from the records in bench/results"
