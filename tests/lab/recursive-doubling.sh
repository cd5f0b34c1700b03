# Lab test: recursive-doubling — the ranks of an allreduce on the lab host (rank R listens for
# link L on port 18515 + R × links + L): every sum verified over 2 and 4 ranks (powers of two:
# swaps only) and 3 and 5 (ranks folded in and the result sent back), at a size of no round
# number; each rank's steps and bytes are what the algorithm says, read from its record; a rank
# killed mid-run makes every other rank exit within its timeout, naming a rank; bad arguments
# refused.
source "$(dirname "$0")/lib.sh" "$@"

# doubling NAME RANKS ARGS...: lib.sh's ranks of this lesson. verified NAME RANKS ELEMENTS ITERS:
# lib.sh's ranks_verified, each record saying which algorithm ran.
doubling() { ranks recursive-doubling "$@"; }
verified() { ranks_verified "$1" "$2" "$3" "$4" config/algorithm '^recursive doubling$' "recursive doubling over $2"; }

# steps NAME RANK COUNT VECTORS BYTES: the rank took COUNT steps and wrote VECTORS whole vectors
# of BYTES.
steps() {
    local name=$1 r=$2 count=$3 vectors=$4 bytes=$(($4 * $5))
    check "$name: rank $r took $count step(s)" records_match "$count" "$scratch/$name/r$r.json" 'result/step_ms/*' '^[0-9]'
    check "$name: rank $r wrote $vectors vector(s) ($bytes bytes)" record_has "$scratch/$name/r$r.json" result/bytes_sent "^$bytes$"
}

part two
# Two ranks: one swap each. 1,000 bytes: 250 floats.
doubling two 2 -s 1000 -n 3
verified two 2 250 3
steps two 0 1 1 1000
part four
# Four: two swaps each, with rank XOR 1, then rank XOR 2.
doubling four 4 -s 256K -n 2
verified four 4 65536 2
part four-steps
for r in 0 1 2 3; do steps four $r 2 2 262144; done
check "four: rank 1 swaps with rank 0, then rank 3" has_line "$scratch/four/r1.out" '^rank 1 of 4 \(.*\): swap with rank 0, swap with rank 3$'
part three
# Three: rank 2 folds into rank 0, ranks 0 and 1 swap, rank 0 sends the sum back.
doubling three 3 -s 1000 -n 2
verified three 3 250 2
part three-steps
steps three 0 3 2 1000
steps three 1 1 1 1000
steps three 2 2 1 1000
check "three: rank 0 folds, swaps and returns the sum" has_line "$scratch/three/r0.out" '^rank 0 of 3 \(.*\): fold from rank 2, swap with rank 1, result to rank 2$'
part five
# Five: rank 4 folds into rank 0; ranks 0..3 swap twice.
doubling five 5 -s 4100 -n 2
verified five 5 1025 2
part five-steps
steps five 0 4 3 4100
steps five 4 2 1 4100

part killed-rank
# A rank killed mid-run: the others end within their timeout (5 s) with one line naming a rank.
mkdir -p "$scratch/killed"
hosts=$addr,$addr,$addr,$addr
started=$SECONDS
for r in 0 1 2 3; do
    (
        timeout -k 5 60 "$bin/recursive-doubling" --rank "$r" --hosts "$hosts" -s 64K -n 1000 --timeout 5 \
            >"$scratch/killed/r$r.out" 2>"$scratch/killed/r$r.err"
        echo $? >"$scratch/killed/r$r.rc"
    ) &
done
for _ in $(seq 600); do grep -q '^rank 3: allreduce 1:' "$scratch/killed/r3.out" 2>/dev/null && break; sleep 0.1; done
pkill -KILL -f -- "recursive-doubling --rank 3 --hosts $hosts" || true
wait
took=$((SECONDS - started))
for r in 0 1 2; do
    check "killed: rank $r exits 1" rc_is "$scratch/killed/r$r.rc" 1
    check "killed: rank $r says why in one line, naming a rank" \
        bash -c "[ \"\$(grep -c . '$scratch/killed/r$r.err')\" = 1 ] && grep -qE '^recursive-doubling: .*rank [0-9]' '$scratch/killed/r$r.err'"
    cat "$scratch/killed/r$r.err"
done
check "killed: the others ended within their timeout ($took s, limit 5 s after the kill plus start-up)" [ "$took" -lt $((40 * ${RDMALAB_TIME_SCALE:-1})) ]
check "killed: no rank left running" bash -c "! pgrep -f -- 'recursive-doublin[g] --rank' >/dev/null"

part bad-arguments
expect_failure bad-size 2 "'3X' is not a size" "$bin/recursive-doubling" --hosts "$addr,$addr" --rank 0 -s 3X
expect_failure one-rank 1 'an allreduce needs 2 to 64' "$bin/recursive-doubling" --hosts "$addr" --rank 0
expect_failure no-rank 1 'is not a place among 2 ranks' "$bin/recursive-doubling" --hosts "$addr,$addr"
expect_failure odd-size 1 '^recursive-doubling: --size must be a positive multiple of 4 bytes' \
    "$bin/recursive-doubling" --hosts "$addr,$addr" --rank 0 -s 6
finish
