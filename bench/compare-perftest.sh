#!/usr/bin/env bash
# rdma-bench side by side with perftest, in one lab boot (run by `./rdmalab bench-vs-perftest`):
# four measurements with equivalent settings, repeated and interleaved, and the ratio
# rdma-bench/perftest of their medians with each tool's spread (min..max of the repetitions).
#   compare-perftest.sh BIN_DIR [--reps N] [--record FILE.md]
set -euo pipefail

bin=${1:?usage: compare-perftest.sh BIN_DIR [--reps N] [--record FILE.md]}
shift
reps=5
record=""
while [ $# -gt 0 ]; do
    case $1 in
        --reps) reps=${2:?--reps needs a number}; shift 2 ;;
        --record) record=${2:?--record needs a file}; shift 2 ;;
        *) echo "compare-perftest: unknown option $1" >&2; exit 2 ;;
    esac
done
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "compare-perftest: --reps must be a positive number" >&2; exit 2; }
: "${RDMALAB_ADDR:?run it in the lab: ./rdmalab bench-vs-perftest}"
for tool in ib_write_bw ib_send_bw ib_write_lat; do
    command -v $tool >/dev/null || { echo "compare-perftest: $tool is missing (Debian package perftest)" >&2; exit 1; }
done
[ -x "$bin/rdma-bench" ] || { echo "compare-perftest: no $bin/rdma-bench (build first)" >&2; exit 1; }

source "$(dirname "$0")/lab-pair.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/compare-perftest.XXXXXX")
trap 'lab_pair_cleanup; rm -rf "$work"' EXIT

device=rxe0
gid_index=1
if ibv_devices 2>/dev/null | awk 'NR > 2 {print $1}' | grep -qx rxe0; then :; else
    device=$(ibv_devices | awk 'NR > 2 {print $1; exit}')
    gid_index=""
fi
gid_args=()
[ -n "$gid_index" ] && gid_args=(-x "$gid_index")

# perftest TOOL ARGS... → prints the perftest result line's fields; also keeps the header.
perftest_run() {
    local tool=$1
    shift
    lab_pair "$work/pt" 120 "$tool" -d "$device" "${gid_args[@]}" -F "$@" -- \
        "$tool" -d "$device" "${gid_args[@]}" -F "$@" "$RDMALAB_ADDR" || exit 1
    awk '/#bytes/ {getline; print; exit}' "$work/pt/client.out"
}

# The perftest header line "Name : value" of the last run (e.g. "CQ Moderation").
perftest_setting() { awk -F: -v key="$1" '$1 ~ key {gsub(/[^0-9]/, "", $2); print $2; exit}' "$work/pt/client.out"; }

# bench_run FIELD ARGS...: one rdma-bench run; prints its record's FIELD (a path in the record,
# e.g. result/mops), read back with `rdma-bench records`.
bench_run() {
    local field=$1
    shift
    lab_pair "$work/rb" 120 "$bin/rdma-bench" server -d "$device" "${gid_args[@]}" --accept-timeout 20 -- \
        "$bin/rdma-bench" client "$RDMALAB_ADDR" -d "$device" "${gid_args[@]}" --no-progress --json "$work/rb.json" "$@" || exit 1
    "$bin/rdma-bench" records "$work/rb.json" --get "records/0/$field" || exit 1
}

# Each case: a name, how perftest's value is read, and how rdma-bench's is; "higher" or
# "lower" is better. perftest reports MB/s as 2^20 B/s; rdma-bench GiB/s as 2^30 B/s.
declare -A perftest_values bench_values
cases=(write64 write64k send64 writelat)
declare -A titles=(
    [write64]="RC write 64 B message rate, window 128 (Mops/s)"
    [write64k]="RC write 64 KiB bandwidth, window 128 (GiB/s)"
    [send64]="RC send 64 B message rate, window 128 (Mops/s)"
    [writelat]="RC write latency, 2 B, median (µs, half round trip)"
)
declare -A better=([write64]=higher [write64k]=higher [send64]=higher [writelat]=lower)

for rep in $(seq "$reps"); do
    echo "repetition $rep of $reps…" >&2
    # Alternate which tool goes first, so drift in the guest favours neither.
    for order in first second; do
        if { [ $order = first ] && [ $((rep % 2)) = 1 ]; } || { [ $order = second ] && [ $((rep % 2)) = 0 ]; }; then
            line=$(perftest_run ib_write_bw -s 64 -t 128 -n 20000)
            perftest_values[write64]+="$(awk '{print $5}' <<<"$line") "
            q64=$(perftest_setting "CQ Moderation"); i64=$(perftest_setting "Max inline data")
            line=$(perftest_run ib_write_bw -s 65536 -t 128 -n 1000)
            perftest_values[write64k]+="$(awk '{printf "%.6f", $4 / 1024}' <<<"$line") "
            q64k=$(perftest_setting "CQ Moderation"); i64k=$(perftest_setting "Max inline data")
            line=$(perftest_run ib_send_bw -s 64 -t 128 -n 20000)
            perftest_values[send64]+="$(awk '{print $5}' <<<"$line") "
            qsend=$(perftest_setting "CQ Moderation"); isend=$(perftest_setting "Max inline data")
            line=$(perftest_run ib_write_lat -s 2 -n 1000)
            perftest_values[writelat]+="$(awk '{print $5}' <<<"$line") "
            ilat=$(perftest_setting "Max inline data")
        else
            # perftest's own settings (signal interval, inline) are read from its header and
            # repeated here, so both tools run the same configuration.
            bench_values[write64]+="$(bench_run result/mops --op write -s 64 -t 128 -n 20000 -Q "${q64:-100}" -I "${i64:-0}") "
            bench_values[write64k]+="$(bench_run result/gib_per_s --op write -s 64K -t 128 -n 1000 -Q "${q64k:-100}" -I "${i64k:-0}") "
            bench_values[send64]+="$(bench_run result/mops --op send -s 64 -t 128 -n 20000 -Q "${qsend:-100}" -I "${isend:-0}") "
            bench_values[writelat]+="$(bench_run result/latency/median_us --op write -m lat -s 2 -n 1000 -I "${ilat:-0}") "
        fi
    done
done

# median, min and max of a list of numbers
stats() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{v[NR] = $1} END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.4g %.4g %.4g", m, v[1], v[NR]}'; }

table=$(
    printf '| measurement | perftest median (min..max) | rdma-bench median (min..max) | ratio rdma-bench/perftest | goal |\n'
    printf '| --- | --- | --- | --- | --- |\n'
    for c in "${cases[@]}"; do
        read -r pm plo phi <<<"$(stats "${perftest_values[$c]}")"
        read -r bm blo bhi <<<"$(stats "${bench_values[$c]}")"
        ratio=$(awk -v b="$bm" -v p="$pm" 'BEGIN {printf "%.3f", b / p}')
        goal=$([ "${better[$c]}" = higher ] && echo "≥ 1.0" || echo "≤ 1.0")
        printf '| %s | %s (%s..%s) | %s (%s..%s) | %s | %s |\n' "${titles[$c]}" "$pm" "$plo" "$phi" "$bm" "$blo" "$bhi" "$ratio" "$goal"
    done
)
environment="$(uname -r), $device ($(ibv_devinfo -d "$device" 2>/dev/null | awk '/transport:/ {print $2; exit}') transport), $(date -u +%Y-%m-%dT%H:%MZ), ${RDMALAB_IN_LAB:+rdmalab lab ($RDMALAB_IN_LAB)}, perftest $(dpkg-query -W -f '${Version}' perftest 2>/dev/null), $reps repetitions"
echo
echo "rdma-bench vs perftest — Soft-RoCE numbers if the device is rxe; $environment"
echo "$table"
if [ -n "$record" ]; then
    { echo "Measured: $environment"; echo; echo "$table"; } >"$record"
    echo "recorded in $record"
fi
