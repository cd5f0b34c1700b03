#!/usr/bin/env bash
# How long things take, measured on this machine and printed: the lab's boot to command
# (several runs), the tour once built, and with --fresh-clone the whole suite from a fresh clone
# of this repository's HEAD (what CI and a newcomer see; most of it compiling). --record puts
# them into results/timings.tsv (lab/results.sh), which the site's "Measured results" page shows.
#   lab/timings.sh [--boots N] [--fresh-clone] [--record]      (./rdmalab timings …)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
boots=5
fresh=0
record=0
while [ $# -gt 0 ]; do
    case "$1" in
        --boots) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "timings: --boots needs a whole number" >&2; exit 2; }; boots=$2; shift ;;
        --fresh-clone) fresh=1 ;;
        --record) record=1 ;;
        *) echo "timings: unknown argument '$1' (usage: timings.sh [--boots N] [--fresh-clone] [--record])" >&2; exit 2 ;;
    esac
    shift
done
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

today=$(date -u +%Y-%m-%d)
machine=$("$repo/lab/results.sh" machine)
# row MEASURE VALUE DETAIL COMMAND: a row of results/timings.tsv (measure, value, detail,
# machine, date, command), kept for --record.
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$machine" "$today" "$4" >>"$scratch/rows.tsv"; }

echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r), $(qemu-system-x86_64 --version | head -n 1), $(date -u +%Y-%m-%d)"

# Boot to command, as `./rdmalab lab --verbose -- true` reports it.
for ((i = 1; i <= boots; i++)); do
    "$repo/lab/lab.sh" --vm --verbose -- true 2>&1 | sed -nE 's/^lab: boot to command ([0-9.]+) s.*\((.*)\)$/\1 \2/p' >>"$scratch/boots"
done
[ "$(wc -l <"$scratch/boots")" -eq "$boots" ] || { echo "timings: a lab boot did not report its time" >&2; exit 1; }
sort -n "$scratch/boots" | awk -v n="$boots" 'NR == 1 { min = $1; accel = $2 " " $3 } { max = $1 }
    END { printf "boot to command: %.2f–%.2f s (%d runs of ./rdmalab lab --verbose -- true, %s)\n", min, max, n, accel }' |
    tee "$scratch/boot.line"
row boot "$(sed -E 's/^boot to command: ([^ ]+ s) .*/\1/' "$scratch/boot.line")" \
    "boot to command, $(sed -E 's/^[^(]*\((.*)\)$/\1/' "$scratch/boot.line")" "./rdmalab timings"

# The tour, built: the build step is a no-op, the lab boots once, every lesson runs.
"$repo/rdmalab" build >/dev/null 2>&1
start=$(date +%s%N)
"$repo/rdmalab" tour >"$scratch/tour.out" 2>&1 || { tail -n 5 "$scratch/tour.out" >&2; echo "timings: the tour failed" >&2; exit 1; }
seconds=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.0f", (b - a) / 1e9 }')
echo "tour, once built: $seconds s ($(tail -n 1 "$scratch/tour.out"))"
row tour "$seconds s" "once built, packages installed ($(tail -n 1 "$scratch/tour.out"))" "./rdmalab timings"

if [ "$fresh" = 1 ]; then
    git clone -q "$repo" "$scratch/clone"
    start=$(date +%s)
    rc=0
    (cd "$scratch/clone" && ./rdmalab test) >"$scratch/test.out" 2>&1 || rc=$?
    seconds=$(($(date +%s) - start))
    summary=$(grep -E '^rdmalab: [0-9]+ passed' "$scratch/test.out" | tail -n 1 || echo "no summary: exit $rc")
    echo "./rdmalab test from a fresh clone of $(git -C "$repo" rev-parse --short HEAD): $((seconds / 60)) min $((seconds % 60)) s, RDMALAB_GPU=${RDMALAB_GPU:-auto} ($summary)"
    [ "$rc" = 0 ] || exit 1
    row suite "$((seconds / 60)) min $((seconds % 60)) s" \
        "from a fresh clone of $(git -C "$repo" rev-parse --short HEAD), RDMALAB_GPU=${RDMALAB_GPU:-auto}: ${summary#rdmalab: }" \
        "./rdmalab timings --fresh-clone"
fi
[ "$record" = 0 ] || "$repo/lab/results.sh" rows timings "$scratch/rows.tsv"
