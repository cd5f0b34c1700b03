# Sourced by every lab test: skip outside the lab, a scratch folder, the assertion helpers
# (tests/checks.sh) and the lab-only ones below.
# Usage in a test: source lib.sh "$@"  (the first argument is the folder of the binaries).
set -uo pipefail
if [ -z "${RDMALAB_IN_LAB:-}" ]; then
    echo "SKIP: needs an RDMA device: run it through the lab (./rdmalab lab -- ctest -L lab)"
    exit 77
fi
RDMALAB_BIN=${1:?usage: $0 BUILD_BIN_DIR}
export RDMALAB_BIN
bin=$RDMALAB_BIN
addr=${RDMALAB_ADDR:?the lab sets RDMALAB_ADDR}
source "$(dirname "${BASH_SOURCE[0]}")/../../lab/pair.sh" || exit 1

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../checks.sh" || exit 1

# counts_add_up FILE SENT: the "received R of SENT datagrams (lost L, ..." line has R + L = SENT
# and R at least half of SENT (UD may drop; Soft-RoCE under emulation drops a few at most).
counts_add_up() {
    local line pattern="^server: received ([0-9]+) of $2 datagrams \\(lost ([0-9]+),"
    while IFS= read -r line || [ -n "$line" ]; do
        [[ $line =~ $pattern ]] || continue
        local received=${BASH_REMATCH[1]} lost=${BASH_REMATCH[2]}
        ((received + lost == $2 && 2 * received >= $2))
        return
    done <"$1"
    return 1
}

show_on_failure() {  # show_on_failure DIR: print the outputs of a pair when something failed
    [ $failures -eq 0 ] && return
    for f in "$1"/*.out; do echo "--- $f"; cat "$f"; done
}

# pair_expect NAME LESSON SERVER_REGEX CLIENT_REGEX [SERVER_ARGS...] -- [CLIENT_ARGS...]
# Both sides exit 0 and print the lines that say the data was verified.
pair_expect() {
    local name=$1 lesson=$2 server_line=$3 client_line=$4
    shift 4
    local dir=$scratch/$name before=$failures
    pair_run "$dir" "$lesson" "$@"
    check "$name: client exits 0" rc_is "$dir/client.rc" 0
    check "$name: server exits 0" rc_is "$dir/server.rc" 0
    check "$name: server says: $server_line" has_line "$dir/server.out" "$server_line"
    check "$name: client says: $client_line" has_line "$dir/client.out" "$client_line"
    [ $failures -eq $before ] || { for f in "$dir"/*.out; do echo "--- $f"; cat "$f"; done; }
}

# rdma-bench runs (tests/lab/rdma-bench*.sh).
# bench NAME [SERVER_ARGS...] -- [CLIENT_ARGS...]: one run, its records in $scratch/NAME/r.json.
bench() {
    local name=$1
    shift
    local dir=$scratch/$name
    split_args "$@"
    pair_run "$dir" rdma-bench "${server_args[@]}" -- --no-progress --json "$dir/r.json" --csv "$dir/r.csv" \
        --warmup 10 "${client_args[@]}"
}
# bench_ok NAME RECORDS [SERVER_ARGS...] -- [CLIENT_ARGS...]: both sides exit 0, RECORDS records.
bench_ok() {
    local name=$1 records=$2 before=$failures
    shift 2
    bench "$name" "$@"
    local dir=$scratch/$name
    check "$name: client exits 0" rc_is "$dir/client.rc" 0
    check "$name: server exits 0" rc_is "$dir/server.rc" 0
    check "$name: $records records in the JSON" records_count_is "$records" "$dir/r.json"
    check "$name: $records rows in the CSV (and a header)" count_is $((records + 1)) "$dir/r.csv" '.'
    check "$name: every record names the device, provider and kernel" \
        records_match "$records" "$dir/r.json" environment/provider '^rxe \(Soft-RoCE\)$'
    [ $failures -eq $before ] || show_on_failure "$dir"
}

# ranks LESSON NAME RANKS ARGS...: RANKS ranks of a collective lesson (ring-allreduce,
# recursive-doubling) at once on this host, each with ARGS; each leaves NAME/rR.out, NAME/rR.rc
# and its record, NAME/rR.json (--json).
ranks() {
    local lesson=$1 name=$2 count=$3 r hosts=$addr
    shift 3
    for ((r = 1; r < count; r++)); do hosts+=",$addr"; done
    mkdir -p "$scratch/$name"
    for ((r = 0; r < count; r++)); do
        (
            timeout -k 5 120 "$bin/$lesson" --rank "$r" --hosts "$hosts" --json "$scratch/$name/r$r.json" "$@" \
                >"$scratch/$name/r$r.out" 2>&1
            echo $? >"$scratch/$name/r$r.rc"
        ) &
    done
    wait
}

# ranks_verified NAME RANKS ELEMENTS ITERS FIELD PATTERN WHAT: every rank exits 0 having verified
# every sum of every allreduce, and reports algbw and busbw; its record (read with rdma-bench
# records, as every record is) has FIELD matching PATTERN (WHAT says what that means) and holds
# each allreduce's time.
ranks_verified() {
    local name=$1 count=$2 elements=$3 iters=$4 field=$5 pattern=$6 what=$7 r
    for ((r = 0; r < count; r++)); do
        check "$name: rank $r exits 0" rc_is "$scratch/$name/r$r.rc" 0
        check "$name: rank $r verified all $elements sums, $iters times" \
            count_is "$iters" "$scratch/$name/r$r.out" "^rank $r: allreduce [0-9]+: [0-9.]+ ms, all $elements sums verified$"
        check "$name: rank $r reports algbw and busbw" has_line "$scratch/$name/r$r.out" \
            "^rank $r: allreduce of $((elements * 4)) bytes over $count ranks: median [0-9.]+ ms of $iters, algbw [0-9.e+-]+ MB/s, busbw [0-9.e+-]+ MB/s$"
        check "$name: rank $r's record is $what" record_has "$scratch/$name/r$r.json" "$field" "$pattern"
        check "$name: rank $r's record holds its $iters allreduce times" \
            records_match "$iters" "$scratch/$name/r$r.json" 'result/times_ms/*' '^[0-9]'
        rc_is "$scratch/$name/r$r.rc" 0 || tail -n 5 "$scratch/$name/r$r.out"
    done
}
