# Lab test: ring-allreduce — the ranks of a ring on the lab host (rank R listens on port 18515 + R):
# every sum verified at several sizes and rank counts, a size that is not a multiple of the
# segment or of the rank count among them; a rank killed mid-run makes every other rank exit
# within its timeout, naming a rank; bad arguments refused. (tests/wire/star.sh runs three ranks
# on three lab hosts.)
source "$(dirname "$0")/lib.sh" "$@"

# ring NAME RANKS ARGS...: lib.sh's ranks of this lesson. ring_verified NAME RANKS ELEMENTS ITERS:
# lib.sh's ranks_verified, each record naming a ring of RANKS.
ring() { ranks ring-allreduce "$@"; }
ring_verified() { ranks_verified "$1" "$2" "$3" "$4" config/ranks "^$2$" "of a ring of $2"; }

part two
ring two 2 -s 64K -n 3
ring_verified two 2 16384 3
part three
# 250 floats over 3 ranks (chunks of 84, 83, 83) in 16-float segments through 2 slots: segments
# of several steps in flight, the sender waiting for credits, a last segment shorter than the rest.
ring three 3 -s 1000 --segment 64 --slots 2 -n 2
ring_verified three 3 250 2
part three-bytes
# What each link carried: 2(n-1)/n of the vector (1,333.3 bytes of 1,000: 1,332 or 1,336 by chunk).
for r in 0 1 2; do
    check "three: rank $r wrote 2(n-1)/n of the vector to its right neighbour" has_line "$scratch/three/r$r.out" \
        "^rank $r: 13(32|36) bytes written to rank $(((r + 1) % 3)) per allreduce"
    check "three: rank $r's record says the same" record_has "$scratch/three/r$r.json" result/bytes_sent '^13(32|36)$'
done
check "three: a step time for each of the 2(n-1) = 4 steps" \
    has_line "$scratch/three/r0.out" '^rank 0: steps of the last allreduce \(ms\):( [0-9.]+){4}$'
part four
ring four 4 -s 256K --segment 16K --slots 4 -n 2
ring_verified four 4 65536 2

part killed-rank
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

part bad-arguments
expect_failure bad-size 2 "'3X' is not a size" "$bin/ring-allreduce" --hosts "$addr,$addr" --rank 0 -s 3X
# The allreduce programs' shared refusals (allreduce_options.cpp), in the same words in each.
expect_failure one-rank 1 'an allreduce needs 2 to 64' "$bin/ring-allreduce" --hosts "$addr" --rank 0
expect_failure no-rank 1 'is not a place among 2 ranks' "$bin/ring-allreduce" --hosts "$addr,$addr"
expect_failure odd-size 1 '^ring-allreduce: --size must be a positive multiple of 4 bytes' \
    "$bin/ring-allreduce" --hosts "$addr,$addr" --rank 0 -s 6
expect_failure odd-segment 1 '^ring-allreduce: --segment must be a positive multiple of 4 bytes' \
    "$bin/ring-allreduce" --hosts "$addr,$addr" --rank 0 --segment 6
finish
