#!/usr/bin/env bash
# The collectives chapter's sweep, recorded: the ring-allreduce and recursive-doubling lessons and
# MPI_Allreduce (Open MPI over TCP: its UCX transport fails on rxe) on the same lab hosts, one
# rank per host, at every size from 4 KiB to MAX by fours; every sum verified, ITERS allreduces of
# each timed, the whole sweep RUNS times over (run 1 at every size, then run 2, ...: what drifts
# during the boot spreads over every size). Prints the table, the ratio of the lessons' busbw to
# MPI's at 1 MiB and above, and the size from which the ring beats recursive doubling. Writes, in
# bench/results/collectives/:
#   sweep/ALGORITHM-SIZE-runK.json  rank 0's record of each run (rdma-bench records and plot
#                              read them)
#   allreduce-sweep.md         the table, the ratios, the crossover and the environment
#   allreduce-sweep.svg        busbw against size, a line per algorithm (the median of the
#                              runs), shaded: the slowest to the fastest allreduce of all runs
# All are Soft-RoCE (rxe) and TCP in emulated guests: the shape, not a NIC's numbers.
#   bench/allreduce-sweep.sh [--mtu 1500|9000] [--min SIZE] [--out DIR] [MAX] [ITERS] [HOSTS] [RUNS]
#       (defaults: MTU 1500, from 4K, bench/results/collectives; 64M, 5, 3, 1). --mtu 9000 gives
#       the lab's links jumbo frames (rxe's active MTU 4096); --out writes the results elsewhere.
# In the lab every host runs: bench/allreduce-sweep.sh --in-lab BIN OUT ITERS RUNS SIZE...
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

# ---- In the lab, on every host: the lessons (rank = host - 1), then MPI_Allreduce under mpirun.
if [ "${1:-}" = --in-lab ]; then
    bin=$2 out=$3 iters=$4 runs=$5
    shift 5
    rank=$((RDMALAB_HOST - 1)) hosts=$RDMALAB_ADDRS
    mkdir -p "$out"
    for ((run = 1; run <= runs; run++)); do
        for size in "$@"; do
            for lesson in ring-allreduce recursive-doubling; do
                # The ring's record is rank 0's; each rank's output is kept for when one fails.
                name=$lesson-$size-run$run-r$rank
                timeout -k 5 300 "$bin/$lesson" --rank "$rank" --hosts "$hosts" -s "$size" -n "$iters" --timeout 60 \
                    --json "$out/$name.json" >"$out/$name.out" 2>&1
                echo $? >"$out/$name.rc"
            done
        done
    done
    source "$repo/lab/mpi-hosts.sh"
    if [ "$RDMALAB_HOST" != 1 ]; then
        mpi_hosts_runner
        exit 0
    fi
    mpi_hosts_wait_runners || { mpi_hosts_done; exit 1; }
    for ((run = 1; run <= runs; run++)); do
        for size in "$@"; do
            name=mpi-allreduce-$size-run$run-r0
            mpi_hosts_mpirun "$bin/mpi-allreduce" -s "$size" -n "$iters" --json "$out/$name.json" >"$out/$name.out" 2>&1
            echo $? >"$out/$name.rc"
        done
    done
    mpi_hosts_done
    exit 0
fi

# ---- On this machine: the lab boot, then the table.
args="$*"
args=${args//"$repo"\//}  # the command as run from the repository, whatever its path here
mtu=1500 min=4K results=$repo/bench/results/collectives
while [[ ${1:-} == --* ]]; do
    case $1 in
        --mtu) mtu=${2:-} ;;
        --min) min=${2:-} ;;
        --out) results=${2:-} ;;
        *) echo "allreduce-sweep: unknown option '$1' (--mtu, --min, --out)" >&2; exit 2 ;;
    esac
    [ $# -ge 2 ] || { echo "allreduce-sweep: $1 needs a value" >&2; exit 2; }
    shift 2
done
[[ $mtu == 1500 || $mtu == 9000 ]] || { echo "allreduce-sweep: --mtu must be 1500 or 9000, got '$mtu'" >&2; exit 2; }
mkdir -p "$results" && results=$(cd "$results" && pwd) ||
    { echo "allreduce-sweep: --out '$results' is not a folder this can write" >&2; exit 2; }
max=${1:-64M} iters=${2:-5} hosts=${3:-3} runs=${4:-1}
bin=$repo/build/bin
for tool in ring-allreduce recursive-doubling mpi-allreduce rdma-bench; do
    [ -x "$bin/$tool" ] || { echo "allreduce-sweep: no $bin/$tool: build first (./rdmalab build; mpi-allreduce needs libopenmpi-dev)" >&2; exit 2; }
done
max_bytes=$(numfmt --from=iec "$max" 2>/dev/null) ||
    { echo "allreduce-sweep: MAX '$max' is not a size (e.g. 16M)" >&2; exit 2; }
[ "$max_bytes" -ge 4096 ] && [ "$max_bytes" -le $((256 << 20)) ] ||
    { echo "allreduce-sweep: MAX must be from 4K to 256M, got $max" >&2; exit 2; }
[[ $iters =~ ^[1-9][0-9]?$ ]] || { echo "allreduce-sweep: ITERS must be 1..99, got '$iters'" >&2; exit 2; }
[[ $hosts =~ ^[2-4]$ ]] || { echo "allreduce-sweep: HOSTS must be 2..4, got '$hosts'" >&2; exit 2; }
[[ $runs =~ ^[1-9]$ ]] || { echo "allreduce-sweep: RUNS must be 1..9, got '$runs'" >&2; exit 2; }
min_bytes=$(numfmt --from=iec "$min" 2>/dev/null) ||
    { echo "allreduce-sweep: --min '$min' is not a size (e.g. 1M)" >&2; exit 2; }
[ "$min_bytes" -ge 4096 ] && [ "$min_bytes" -le "$max_bytes" ] ||
    { echo "allreduce-sweep: --min must be from 4K to MAX ($max), got $min" >&2; exit 2; }
sizes=()
for ((bytes = min_bytes; bytes <= max_bytes; bytes *= 4)); do sizes+=("$bytes"); done
# The commit the runs are made from, named before this script rewrites its own results.
made_at=$(git -C "$repo" describe --always --dirty)
work=$(mktemp -d "$repo/build/allreduce-sweep.XXXXXX")  # the guests write here: it is in the repository
trap 'rm -rf "$work"' EXIT
started=$SECONDS
"$repo/lab/lab.sh" --hosts "$hosts" --mtu "$mtu" --timeout 1500 -- \
    bench/allreduce-sweep.sh --in-lab "$bin" "$work/out" "$iters" "$runs" "${sizes[@]}" >"$work/lab.log" 2>&1 ||
    { tail -n 20 "$work/lab.log"; echo "allreduce-sweep: the lab run failed (log above)" >&2; exit 1; }
took=$((SECONDS - started))
# How the guests ran: the lab says so as it boots (TCG emulation where KVM cannot run them).
accel="KVM"
grep -q "TCG emulation" "$work/lab.log" && accel="TCG emulation (no KVM)"

# Every run must have ended well on every rank it had (MPI's: rank 0's mpirun).
failed=0
for rc in "$work/out"/*.rc; do
    [ "$(cat "$rc")" = 0 ] && continue
    echo "allreduce-sweep: ${rc##*/} says $(cat "$rc"); its output:" >&2
    tail -n 5 "${rc%.rc}.out" >&2
    failed=1
done
[ "$failed" = 0 ] || exit 1

value() { "$bin/rdma-bench" records "$1" --raw --get "records/0/$2"; }  # FILE PATH
joined() { local out="" item; for item in "$@"; do out+=${out:+, }$item; done; echo "${out:-none measured}"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# median, smallest, largest NUMBER...: of the runs' values.
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
smallest() { printf '%s\n' "$@" | sort -g | head -n 1; }
largest() { printf '%s\n' "$@" | sort -g | tail -n 1; }
mkdir -p "$results/sweep"
rm -f "$results/sweep"/*.json
table=$work/table.md
{
    echo "| size per rank | ring busbw (MB/s) | recursive doubling | MPI_Allreduce | ring / MPI | faster of ours / MPI | faster: ring or doubling |"
    echo "|---:|---:|---:|---:|---:|---:|---|"
} >"$table"
crossover="" ring_wins_from="" ring_ratios=() best_ratios=()
for size in "${sizes[@]}"; do
    declare -A busbw=() spread=()
    ring_runs=() mpi_runs=()   # each run's median, for ring / MPI run by run
    for algorithm in ring-allreduce recursive-doubling mpi-allreduce; do
        medians=() lows=() highs=()
        for ((run = 1; run <= runs; run++)); do
            file=$work/out/$algorithm-$size-run$run-r0.json
            cp "$file" "$results/sweep/$algorithm-$size-run$run.json"
            medians+=("$(value "$file" result/busbw_mb_s)")
            lows+=("$(value "$file" result/busbw_min_mb_s)")
            highs+=("$(value "$file" result/busbw_max_mb_s)")
        done
        busbw[$algorithm]=$(median "${medians[@]}")
        case $algorithm in
            ring-allreduce) ring_runs=("${medians[@]}") ;;
            mpi-allreduce) mpi_runs=("${medians[@]}") ;;
        esac
        spread[$algorithm]="$(printf '%.3g' "$(smallest "${lows[@]}")")–$(printf '%.3g' "$(largest "${highs[@]}")")"
    done
    ring=${busbw[ring-allreduce]} doubling=${busbw[recursive-doubling]} mpi=${busbw[mpi-allreduce]}
    # Ring / MPI in each run (the same boot, minutes apart): how far the ratio itself moves.
    run_ratios=()
    for ((run = 0; run < runs; run++)); do run_ratios+=("$(ratio "${ring_runs[run]}" "${mpi_runs[run]}")"); done
    best=$(awk -v a="$ring" -v b="$doubling" 'BEGIN { print (a >= b ? a : b) }')
    faster=$(awk -v a="$ring" -v b="$doubling" 'BEGIN { print (a >= b ? "ring" : "doubling") }')
    if [ "$faster" = ring ]; then ring_wins_from=${ring_wins_from:-$size}; else ring_wins_from=""; fi
    if [ "$size" -ge $((1 << 20)) ]; then
        if [ "$runs" -gt 1 ]; then
            ring_ratios+=("$(numfmt --to=iec "$size") $(ratio "$ring" "$mpi") (runs $(smallest "${run_ratios[@]}")–$(largest "${run_ratios[@]}"))")
        else
            ring_ratios+=("$(numfmt --to=iec "$size") $(ratio "$ring" "$mpi")")
        fi
        best_ratios+=("$(numfmt --to=iec "$size") $(ratio "$best" "$mpi")")
    fi
    printf '| %s | %.3g (%s) | %.3g (%s) | %.3g (%s) | %s | %s | %s |\n' "$(numfmt --to=iec "$size")" \
        "$ring" "${spread[ring-allreduce]}" "$doubling" "${spread[recursive-doubling]}" "$mpi" \
        "${spread[mpi-allreduce]}" "$(ratio "$ring" "$mpi")" "$(ratio "$best" "$mpi")" "$faster" >>"$table"
    unset busbw spread
done
crossover=${ring_wins_from:+the ring is faster from $(numfmt --to=iec "$ring_wins_from") on (recursive doubling below)}
crossover=${crossover:-recursive doubling was faster at the largest size too: no crossover up to $max}
ring_file=$results/sweep/ring-allreduce-${sizes[0]}-run1.json
"$bin/rdma-bench" plot "$results"/sweep/*.json --y busbw --series algorithm \
    --title "Allreduce over $hosts lab hosts, MTU $mtu: busbw (Soft-RoCE and TCP in emulated guests)" \
    -o "$results/allreduce-sweep.svg" >/dev/null
{
    echo "<!-- Written by bench/allreduce-sweep.sh $args; do not edit by hand. -->"
    echo "Made $(date -u +%Y-%m-%d) at commit $made_at by \`bench/allreduce-sweep.sh $args\` in ${took} s:"
    echo "$hosts lab hosts ($(value "$ring_file" environment/kernel), Soft-RoCE \`rxe\`, links of MTU $mtu, one rank per host,"
    echo "QEMU guests under $accel; the machine: $(bash "$repo/lab/results.sh" machine)); MPI is"
    echo "$(value "$results/sweep/mpi-allreduce-${sizes[0]}-run1.json" environment/mpi) over TCP (\`--mca btl self,tcp\`)."
    if [ "$runs" -gt 1 ]; then
        echo "busbw is nccl-tests' measure (algbw × 2(n−1)/n): the median of $runs runs' medians, each run"
        echo "$iters allreduces, each verified; in brackets the slowest to the fastest allreduce of all $runs runs."
    else
        echo "busbw is nccl-tests' measure (algbw × 2(n−1)/n) at the median of $iters allreduces, each verified;"
        echo "in brackets the slowest to the fastest of them."
    fi
    echo
    cat "$table"
    echo
    echo "- The ring's busbw / MPI_Allreduce's at 1 MiB and above: $(joined "${ring_ratios[@]}")."
    echo "- The faster of the two lessons / MPI_Allreduce at 1 MiB and above: $(joined "${best_ratios[@]}")."
    echo "- Crossover: $crossover."
} >"$results/allreduce-sweep.md"
cat "$results/allreduce-sweep.md"
