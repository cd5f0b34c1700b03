#!/usr/bin/env bash
# The allreduce at the two link MTUs (issue 43): bench/allreduce-sweep.sh at MTU 1500 and at MTU
# 9000 (rxe's active MTU 1024, then 4096), the same sizes (1 MiB and up by fours, to MAX), the
# same hosts, iterations and runs, one boot each; then, per size and algorithm (the ring and
# recursive-doubling lessons, MPI_Allreduce over TCP), the busbw at each MTU and their ratio.
# Writes OUT_DIR/mtu-1500/ and OUT_DIR/mtu-9000/ (each sweep's table, figure and records) and
# OUT_DIR/allreduce-mtu.md (default OUT_DIR: bench/results/collectives/mtu).
# Soft-RoCE and TCP in emulated guests: the shape, not a NIC's numbers.
#   bench/allreduce-mtu.sh [MAX] [ITERS] [HOSTS] [RUNS] [OUT_DIR]   (defaults 4M, 5, 3, 2)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=$repo/build/bin
die() { echo "allreduce-mtu: $*" >&2; exit 2; }
max=${1:-4M} iters=${2:-5} hosts=${3:-3} runs=${4:-2}
out=${5:-$repo/bench/results/collectives/mtu}
mkdir -p "$out" || die "cannot make OUT_DIR '$out'"
out=$(cd "$out" && pwd)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
started=$SECONDS
for mtu in 1500 9000; do
    bash "$repo/bench/allreduce-sweep.sh" --mtu "$mtu" --min 1M --out "$out/mtu-$mtu" \
        "$max" "$iters" "$hosts" "$runs" >"$logs/mtu-$mtu.log" 2>&1 ||
        { tail -n 20 "$logs/mtu-$mtu.log"; die "the sweep at MTU $mtu failed (log above)"; }
done
took=$((SECONDS - started))

value() { "$bin/rdma-bench" records "$1" --raw --get "records/0/$2"; }  # FILE PATH
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
# busbw MTU ALGORITHM SIZE: the median of the runs' median busbw, MB/s.
busbw() {
    local values=() run
    for ((run = 1; run <= runs; run++)); do
        values+=("$(value "$out/mtu-$1/sweep/$2-$3-run$run.json" result/busbw_mb_s)")
    done
    median "${values[@]}"
}
sizes=$(ls "$out/mtu-1500/sweep" | sed -n 's/^ring-allreduce-\([0-9]*\)-run1\.json$/\1/p' | sort -n)
{
    echo "<!-- Written by bench/allreduce-mtu.sh $max $iters $hosts $runs; do not edit by hand. -->"
    echo "Made $(date -u +%Y-%m-%d) at commit $(git -C "$repo" describe --always --dirty) in $took s: two"
    echo "boots of \`bench/allreduce-sweep.sh --mtu M --min 1M $max $iters $hosts $runs\` ($hosts lab hosts, one rank"
    echo "each; the environment of each is in its own table, \`mtu-1500/allreduce-sweep.md\` and"
    echo "\`mtu-9000/allreduce-sweep.md\`). busbw in MB/s, the median of $runs runs' medians of $iters allreduces,"
    echo "every sum verified. MPI_Allreduce goes over TCP, where the MTU is the IP packet's."
    echo
    echo "| size per rank | algorithm | MTU 1500 | MTU 9000 | 9000 / 1500 |"
    echo "|---:|---|---:|---:|---:|"
    for size in $sizes; do
        for algorithm in ring-allreduce recursive-doubling mpi-allreduce; do
            a=$(busbw 1500 "$algorithm" "$size") b=$(busbw 9000 "$algorithm" "$size")
            printf '| %s | %s | %.3g | %.3g | %.2f |\n' "$(numfmt --to=iec "$size")" "$algorithm" "$a" "$b" \
                "$(awk -v a="$a" -v b="$b" 'BEGIN { print b / a }')"
        done
    done
} >"$out/allreduce-mtu.md"
cat "$out/allreduce-mtu.md"
