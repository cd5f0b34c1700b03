# Lab test: ring-allreduce — the ranks of a ring on the lab host (rank R listens on port 18515 + R):
# every sum verified at several sizes and rank counts, a size that is not a multiple of the
# segment or of the rank count among them; a rank killed mid-run makes every other rank exit
# within its timeout, naming a rank; bad arguments refused. (tests/wire/star.sh runs three ranks
# on three lab hosts.)
source "$(dirname "$0")/lib.sh" "$@"

# ring NAME RANKS ARGS...: RANKS ranks at once; each leaves NAME/rR.out, NAME/rR.rc and its
# record, NAME/rR.json (--json).
ring() {
    local name=$1 ranks=$2 r hosts=$addr
    shift 2
    for ((r = 1; r < ranks; r++)); do hosts+=",$addr"; done
    mkdir -p "$scratch/$name"
    for ((r = 0; r < ranks; r++)); do
        (
            timeout -k 5 120 "$bin/ring-allreduce" --rank "$r" --hosts "$hosts" --json "$scratch/$name/r$r.json" "$@" \
                >"$scratch/$name/r$r.out" 2>&1
            echo $? >"$scratch/$name/r$r.rc"
        ) &
    done
    wait
}

# ring_verified NAME RANKS ELEMENTS ITERS: every rank exits 0 having verified every sum of every
# allreduce, and reports its busbw and what it wrote to its right neighbour; its record (read with
# rdma-bench records, as every record is) names the ring and holds each allreduce's time.
ring_verified() {
    local name=$1 ranks=$2 elements=$3 iters=$4 r
    for ((r = 0; r < ranks; r++)); do
        check "$name: rank $r exits 0" rc_is "$scratch/$name/r$r.rc" 0
        check "$name: rank $r verified all $elements sums, $iters times" \
            count_is "$iters" "$scratch/$name/r$r.out" "^rank $r: allreduce [0-9]+: [0-9.]+ ms, all $elements sums verified$"
        check "$name: rank $r reports algbw and busbw" has_line "$scratch/$name/r$r.out" \
            "^rank $r: allreduce of $((elements * 4)) bytes over $ranks ranks: median [0-9.]+ ms of $iters, algbw [0-9.e+-]+ MB/s, busbw [0-9.e+-]+ MB/s$"
        check "$name: rank $r's record is of a ring of $ranks" record_has "$scratch/$name/r$r.json" config/ranks "^$ranks$"
        check "$name: rank $r's record holds its $iters allreduce times" \
            records_match "$iters" "$scratch/$name/r$r.json" 'result/times_ms/*' '^[0-9]'
        rc_is "$scratch/$name/r$r.rc" 0 || tail -n 5 "$scratch/$name/r$r.out"
    done
}

ring two 2 -s 64K -n 3
ring_verified two 2 16384 3
# 250 floats over 3 ranks (chunks of 84, 83, 83) in 16-float segments through 2 slots: segments
# of several steps in flight, the sender waiting for credits, a last segment shorter than the rest.
ring three 3 -s 1000 --segment 64 --slots 2 -n 2
ring_verified three 3 250 2
# What each link carried: 2(n-1)/n of the vector (1,333.3 bytes of 1,000: 1,332 or 1,336 by chunk).
for r in 0 1 2; do
    check "three: rank $r wrote 2(n-1)/n of the vector to its right neighbour" has_line "$scratch/three/r$r.out" \
        "^rank $r: 13(32|36) bytes written to rank $(((r + 1) % 3)) per allreduce"
    check "three: rank $r's record says the same" record_has "$scratch/three/r$r.json" result/bytes_sent '^13(32|36)$'
done
check "three: a step time for each of the 2(n-1) = 4 steps" \
    has_line "$scratch/three/r0.out" '^rank 0: steps of the last allreduce \(ms\):( [0-9.]+){4}$'
ring four 4 -s 256K --segment 16K --slots 4 -n 2
ring_verified four 4 65536 2

# A rank killed mid-run: the others end within their timeout (5 s) with one line naming a rank.
mkdir -p "$scratch/killed"
hosts=$addr,$addr,$addr
started=$SECONDS
for r in 0 1 2; do
    (
        timeout -k 5 60 "$bin/ring-allreduce" --rank "$r" --hosts "$hosts" -s 256K --segment 4K -n 1000 --timeout 5 \
            >"$scratch/killed/r$r.out" 2>"$scratch/killed/r$r.err"
        echo $? >"$scratch/killed/r$r.rc"
    ) &
done
for _ in $(seq 600); do grep -q '^rank 2: allreduce 1:' "$scratch/killed/r2.out" 2>/dev/null && break; sleep 0.1; done
pkill -KILL -f -- "ring-allreduce --rank 2 --hosts $hosts" || true
wait
took=$((SECONDS - started))
for r in 0 1; do
    check "killed: rank $r exits 1" rc_is "$scratch/killed/r$r.rc" 1
    check "killed: rank $r says why in one line, naming a rank" \
        bash -c "[ \"\$(grep -c . '$scratch/killed/r$r.err')\" = 1 ] && grep -qE '^ring-allreduce: .*rank [0-9]' '$scratch/killed/r$r.err'"
    cat "$scratch/killed/r$r.err"
done
check "killed: the others ended within their timeout ($took s, limit 5 s after the kill plus start-up)" [ "$took" -lt $((40 * ${RDMALAB_TIME_SCALE:-1})) ]
check "killed: no rank left running" bash -c "! pgrep -f -- 'ring-allreduc[e] --rank' >/dev/null"

expect_failure bad-size 2 "'3X' is not a size" "$bin/ring-allreduce" --hosts "$addr,$addr" --rank 0 -s 3X
expect_failure one-rank 1 'a ring needs 2 to 64' "$bin/ring-allreduce" --hosts "$addr" --rank 0
expect_failure no-rank 1 'is not a place in a ring of 2' "$bin/ring-allreduce" --hosts "$addr,$addr"
expect_failure odd-size 1 'multiples of 4 bytes' "$bin/ring-allreduce" --hosts "$addr,$addr" --rank 0 -s 6
finish
