#!/usr/bin/env bash
# Rails and the MTU, measured in the lab (issue 43): one boot of three hosts on two rails per
# link MTU (1500, then 9000: rxe's active MTU 1024, then 4096), no rate held anywhere, so what is
# measured is what the emulated CPUs allow. In each boot, RUNS times over:
#   rdma-bench    host 2 WRITEs to host 1 on rail 1 (bandwidth, 64 KiB and 1 MiB messages)
#   one rail      transfer-bench host 2 -> host 1 on rail 1: 32 batches of 8 x 64 KiB, checked
#   two rails     the same over both rails
#   many-to-one   hosts 2 and 3 at once into host 1 over both rails (server --clients 2)
# Writes in OUT_DIR (default bench/results/transfer/rails-and-mtu): records/ (rdma-bench's and
# transfer-bench's records, one file per run), README.md (the table, the ratios, the
# environment), table.md (the table alone, which the chapter includes) and rails-MTU.svg (transfer-bench's bandwidth against the rails, per MTU).
# Soft-RoCE in emulated guests on a 2-core machine: the shape, not a NIC's numbers.
#   bench/rails-and-mtu.sh [RUNS] [OUT_DIR]   (default 3)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=$repo/build/bin
die() { echo "rails-and-mtu: $*" >&2; exit 2; }
runs=${1:-3}
[[ $runs =~ ^[1-9]$ ]] || die "RUNS must be 1 to 9, got '$runs'"
out=${2:-$repo/bench/results/transfer/rails-and-mtu}
mkdir -p "$out" || die "cannot make OUT_DIR '$out'"
out=$(cd "$out" && pwd)
for tool in rdma-bench transfer-bench; do
    [ -x "$bin/$tool" ] || die "$bin/$tool is missing: build first (./rdmalab build)"
done
work=$(mktemp -d "$repo/build/rails-and-mtu.XXXXXX")  # the guests write here
[ -n "${RDMALAB_KEEP_OUTPUT:-}" ] || trap 'rm -rf "$work"' EXIT

cat >"$work/guest.sh" <<'GUEST'
set -uo pipefail
dir=$1 bin=$2 runs=$3
h=$RDMALAB_HOST
both=$RDMALAB_RAIL_DEV_1,$RDMALAB_RAIL_DEV_2
source "${bin%/build/bin}/lab/guest-wait.sh"  # wait_for, listening
# serve NAME CMD...: host 1 runs the server, says when it listens, and keeps its exit status.
serve() {
    local name=$1
    shift
    "$@" >"$dir/$name.server.out" 2>&1 &
    local server=$!
    listening 18515 && touch "$dir/$name.listening"
    wait $server
    echo $? >"$dir/$name.server.rc"
}
# client NAME CMD...: once the server of NAME listens, runs the client and keeps its status.
client() {
    local name=$1
    shift
    wait_for "$dir/$name.listening" 120 || { echo 1 >"$dir/$name.client-$h.rc"; return; }
    "$@" >"$dir/$name.client-$h.out" 2>&1
    echo $? >"$dir/$name.client-$h.rc"
    touch "$dir/$name.client-$h.done"
}
for ((run = 1; run <= runs; run++)); do
    for step in bench one two many; do
        name=$step-run$run
        case $h/$step in
            1/bench) serve "$name" timeout -k 2 300 "$bin/rdma-bench" server --timeout 60 ;;
            1/one) serve "$name" timeout -k 2 300 "$bin/transfer-bench" server \
                --devices "$RDMALAB_RAIL_DEV_1" --timeout 60 ;;
            1/two) serve "$name" timeout -k 2 300 "$bin/transfer-bench" server --devices "$both" --timeout 60 ;;
            1/many) serve "$name" timeout -k 2 300 "$bin/transfer-bench" server --devices "$both" \
                --clients 2 --timeout 60 ;;
            2/bench) client "$name" timeout -k 2 300 "$bin/rdma-bench" client "$RDMALAB_ADDR_1" \
                --op write -s 64K,1M --duration 3 --no-progress --json "$dir/$name.json" ;;
            2/one) client "$name" timeout -k 2 300 "$bin/transfer-bench" client "$RDMALAB_ADDR_1" \
                --devices "$RDMALAB_RAIL_DEV_1" -s 64K --batch 8 --batches 32 --check \
                --json "$dir/$name.json" ;;
            2/two | [23]/many) client "$name" timeout -k 2 300 "$bin/transfer-bench" client \
                "$RDMALAB_ADDR_1" --devices "$both" -s 64K --batch 8 --batches 32 --check \
                --json "$dir/$name-h$h.json" ;;
        esac
        # Every host moves to the next step together, once this one's server has ended.
        [ "$h" = 1 ] && touch "$dir/$name.ended"
        wait_for "$dir/$name.ended" 600 || exit 1
    done
done
exit 0
GUEST

started=$SECONDS
for mtu in 1500 9000; do
    mkdir -p "$work/mtu-$mtu"
    "$repo/lab/lab.sh" --hosts 3 --rails 2 --mtu "$mtu" --timeout 1500 -- \
        bash "$work/guest.sh" "$work/mtu-$mtu" "$bin" "$runs" >"$work/lab-$mtu.log" 2>&1 ||
        { tail -n 20 "$work/lab-$mtu.log"; die "the lab run at MTU $mtu failed (log above)"; }
done
took=$((SECONDS - started))
accel=KVM
grep -q "TCG emulation" "$work/lab-1500.log" && accel="TCG emulation (no KVM)"

# Every side of every run must have ended well.
failed=0
for rc in "$work"/mtu-*/*.rc; do
    [ "$(cat "$rc")" = 0 ] && continue
    echo "rails-and-mtu: ${rc#"$work"/} says $(cat "$rc"); its output:" >&2
    tail -n 5 "${rc%.rc}.out" >&2
    failed=1
done
[ "$failed" = 0 ] || exit 1

rm -rf "$out/records"
mkdir -p "$out/records"
for mtu in 1500 9000; do
    for file in "$work/mtu-$mtu"/*.json; do cp "$file" "$out/records/mtu$mtu-${file##*/}"; done
done
get() { "$bin/rdma-bench" records "$1" --raw --get "$2"; }  # FILE PATH
mean() { printf '%s\n' "$@" | awk '{ s += $1 } END { printf "%.4f", s / NR }'; }
low() { printf '%s\n' "$@" | sort -g | head -n 1 | awk '{ printf "%.4f", $1 }'; }
high() { printf '%s\n' "$@" | sort -g | tail -n 1 | awk '{ printf "%.4f", $1 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# figure MTU WHAT: sets fig_text to "mean (low–high)" of WHAT's runs at MTU, Gbit/s, and
# mean_of[MTU/WHAT] to the mean (not in a subshell: it keeps what it sets).
declare -A mean_of=()
fig_text=""
figure() {
    local mtu=$1 what=$2 values=() run file
    for ((run = 1; run <= runs; run++)); do
        case $what in
            write-64K | write-1M)
                local n=0
                [ "$what" = write-1M ] && n=1
                file=$out/records/mtu$mtu-bench-run$run.json
                # gb_per_s: 10^9 bits per second (rdma-bench's gbps), as transfer-bench's gbit_per_s.
                values+=("$(get "$file" "records/$n/result/gb_per_s")") ;;
            one) values+=("$(get "$out/records/mtu$mtu-one-run$run.json" records/0/result/gbit_per_s)") ;;
            two) values+=("$(get "$out/records/mtu$mtu-two-run$run-h2.json" records/0/result/gbit_per_s)") ;;
            many)
                # Into host 1: both clients' bytes over the longer of their two times.
                local a=$out/records/mtu$mtu-many-run$run-h2.json b=$out/records/mtu$mtu-many-run$run-h3.json
                values+=("$(awk -v ba="$(get "$a" records/0/result/bytes)" -v bb="$(get "$b" records/0/result/bytes)" \
                    -v sa="$(get "$a" records/0/result/seconds)" -v sb="$(get "$b" records/0/result/seconds)" \
                    'BEGIN { printf "%.4f", (ba + bb) * 8 / (sa > sb ? sa : sb) / 1e9 }')") ;;
        esac
    done
    mean_of[$mtu/$what]=$(mean "${values[@]}")
    fig_text="${mean_of[$mtu/$what]} ($(low "${values[@]}")–$(high "${values[@]}"))"
}
table=$work/table.md
{
    echo "| Gbit/s, mean of $runs (lowest–highest) | MTU 1500 (rxe: 1024) | MTU 9000 (rxe: 4096) | 9000 / 1500 |"
    echo "|---|---:|---:|---:|"
    for what in write-64K write-1M one two many; do
        case $what in
            write-64K) label="rdma-bench WRITE, 64 KiB messages, rail 1" ;;
            write-1M) label="rdma-bench WRITE, 1 MiB messages, rail 1" ;;
            one) label="transfer-bench, one rail" ;;
            two) label="transfer-bench, two rails" ;;
            many) label="transfer-bench, hosts 2 and 3 into host 1, two rails" ;;
        esac
        figure 1500 "$what"
        a=$fig_text
        figure 9000 "$what"
        b=$fig_text
        echo "| $label | $a | $b | $(ratio "${mean_of[9000/$what]}" "${mean_of[1500/$what]}") |"
    done
} >"$table"
for mtu in 1500 9000; do
    "$bin/rdma-bench" plot "$out"/records/mtu$mtu-one-run*.json "$out"/records/mtu$mtu-two-run*-h2.json \
        --y gbit --x rails --series op \
        --title "transfer-bench: one rail and two, MTU $mtu (Soft-RoCE in emulated guests, no rate)" \
        -o "$out/rails-$mtu.svg" >/dev/null || echo "rails-and-mtu: the figure for MTU $mtu was not drawn" >&2
done
first=$out/records/mtu1500-one-run1.json
{
    echo "<!-- Written by bench/rails-and-mtu.sh $runs; do not edit by hand. -->"
    echo "# Rails and the MTU, measured"
    echo
    echo "Soft-RoCE (rxe) in three QEMU guests ($accel) on one machine ($(bash "$repo/lab/results.sh" machine)),"
    echo "two rails per host, no rate held: what the emulated CPUs allow, not what a NIC does. Made"
    echo "$(date -u +%Y-%m-%d) at commit $(git -C "$repo" describe --always --dirty) by \`bench/rails-and-mtu.sh $runs\` in $took s;"
    echo "guest kernel $(get "$first" records/0/environment/kernel). Every transfer-bench byte verified (\`--check\`)."
    echo
    cat "$table"
    echo
    echo "- Two rails / one rail: MTU 1500 $(ratio "${mean_of[1500/two]}" "${mean_of[1500/one]}"), MTU 9000 $(ratio "${mean_of[9000/two]}" "${mean_of[9000/one]}")."
    echo "- Two initiators into one target / one initiator, two rails: MTU 1500 $(ratio "${mean_of[1500/many]}" "${mean_of[1500/two]}"), MTU 9000 $(ratio "${mean_of[9000/many]}" "${mean_of[9000/two]}")."
    echo "- The records: \`records/\` (\`rdma-bench records FILE --get records/0/result/gbit_per_s\`); the figures: \`rails-1500.svg\`, \`rails-9000.svg\`."
} >"$out/README.md"
# The table alone, with a line that says what it is, for the chapter (docs/kv-cache.md).
{
    echo "Soft-RoCE in three emulated guests (TCG), no rate held; recorded $(date -u +%Y-%m-%d) by \`bench/rails-and-mtu.sh $runs\`."
    echo
    cat "$table"
} >"$out/table.md"
cat "$out/README.md"
