# Lab test: rdma-mesh under mpirun, all ranks in one guest on its one rxe (rxe loops the
# packets back): the 4-rank matrix is complete, every bandwidth phase's data verified (a failed
# check would be a failed pair); in one run, a rank that never answers is reported by rank within
# the timeout and a rank without a device fails its pairs at once, while the rest is measured;
# --pairs ring:1 measures only the ring's pairs; bad input is one line from rank 0 and exit 2. Numbers here are Soft-RoCE under emulation with 4 ranks
# sharing the guest's vCPUs: the verdict may flag noise, so only the exit codes 0/1 are asked.
source "$(dirname "$0")/lib.sh" "$@"
mesh=$bin/rdma-mesh
if [ ! -x "$mesh" ]; then
    echo "SKIP: rdma-mesh is not built (no MPI: apt-get install openmpi-bin libopenmpi-dev)"
    exit 77
fi
# The lab runs as root; --mca keeps Open MPI on TCP for its own messages (no openib/UCX probing
# of the rxe device: MPI carries no measured byte).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(timeout -k 5 120 mpirun --allow-run-as-root --oversubscribe --mca btl self,tcp --mca pml ob1)

# mesh.json is read through `rdma-bench json` (the one reader of the tools' JSON), never by its
# text. json_get FILE --get PATH|--count PATH...: strings as they are, one value a line.
json_get() { "$bin/rdma-bench" json "$@" --raw; }
is() { [ "$1" = "$2" ] || { echo "    got: '$1'"; return 1; }; }  # is GOT WANT
# cells FILE METRIC: "ROW-COLUMN" of every off-diagonal cell of METRIC's matrix measured above 0,
# in row order (the matrix's values row by row, after its number of rows).
cells() {
    local values n=0 v
    json_get "$1" --count "metrics/$2/matrix" --get "metrics/$2/matrix/*/*" >"$scratch/cells" || return 1
    mapfile -t values <"$scratch/cells"
    for v in "${values[@]:1}"; do
        if ((n / values[0] != n % values[0])) && [[ $v =~ ^[0-9.]+([eE][-+]?[0-9]+)?$ && ! $v =~ ^[0.]+$ ]]; then
            echo "$((n / values[0]))-$((n % values[0]))"
        fi
        n=$((n + 1))
    done
}
# failed_pairs FILE REGEX...: "A-B ..." (sorted) of the failed pairs whose reason matches every REGEX.
failed_pairs() {
    local file=$1 v n i re ok pairs=()
    shift
    json_get "$file" --count failed --get 'failed/*/a' --get 'failed/*/b' --get 'failed/*/reason' >"$scratch/failed" || return 1
    mapfile -t v <"$scratch/failed"
    n=${v[0]}
    for ((i = 0; i < n; i++)); do
        ok=1
        for re in "$@"; do [[ ${v[1 + 2 * n + i]} =~ $re ]] || ok=0; done
        ((ok)) && pairs+=("${v[1 + i]}-${v[1 + n + i]}")
    done
    [ ${#pairs[@]} -eq 0 ] || printf '%s\n' "${pairs[@]}" | sort | paste -sd' ' -
}
lines() { paste -sd' ' -; }  # lines: stdin's lines joined by spaces
run_mesh() {  # run_mesh NAME NP [ARGS...]: output in $scratch/NAME.out, exit status in NAME.rc
    local name=$1 np=$2 rc=0 start=$SECONDS
    shift 2
    "${mpi[@]}" -np "$np" "$mesh" --out "$scratch/$name" "$@" >"$scratch/$name.out" 2>&1 || rc=$?
    echo "$rc" >"$scratch/$name.rc"
    echo "$name: exit $rc after $((SECONDS - start)) s"
}
lacks_line() { ! has_line "$@"; }
rc_in() { local code; read -r code <"$1"; [[ " $2 " == *" $code "* ]]; }

part full
# ---- The whole matrix, one pair at a time (short measurements: the numbers are not judged).
run_mesh full 4 --quick --serial -D 0.1 -n 100
j=$scratch/full/mesh.json
check "full: exits 0 (nothing flagged) or 1 (flagged)" rc_in "$scratch/full.rc" "0 1"
for m in bw_gbps rate_mops lat_us lat_p99_us; do
    check "full: $m: all 12 directed cells measured, > 0" is "$(cells "$j" $m | wc -l)" 12
done
check "full: no failed pair" is "$(json_get "$j" --count failed)" 0
check "full: 3 rounds, 6 pairs timed" is "$(json_get "$j" --get rounds --count pair_seconds | lines)" "3 6"
# Into files, not <(...): the guest has no /dev/fd for process substitution.
json_get "$j" --get 'ranks/*/device' >"$scratch/full.devices"
json_get "$j" --get 'ranks/*/gid' >"$scratch/full.gids"
json_get "$j" --get environment/mpi >"$scratch/full.mpi"
check "full: each rank's device" count_is 4 "$scratch/full.devices" '^rxe0$'
check "full: each rank's GID" count_is 4 "$scratch/full.gids" '^::ffff:'
check "full: the launcher" is "$(json_get "$j" --get environment/launcher)" openmpi
check "full: the environment names the MPI" has_line "$scratch/full.mpi" '^Open MPI'
check "full: CSV has 12 pairs + header" count_is 13 "$scratch/full/mesh.csv" '.'
for m in bw-gbps rate-mops lat-us lat-p99-us; do
    check "full: heatmap $m" has_line "$scratch/full/mesh-$m.svg" '^</svg>$'
done
culprits=$(json_get "$j" --count culprits 2>&1)
check "full: the record holds its verdict: culprits, a list ($culprits)" [ "$culprits" -ge 0 ]

part broken
# ---- Two failures in one run: rank 2 never answers, rank 3 has no device (local rank 3 takes
# the fourth name of -d). Each is reported by rank, the pair between the other two is measured,
# both are named, and nobody hangs.
run_mesh broken 4 --quick -D 0.1 -n 100 --timeout 1 --simulate-silent-rank 2 -d rxe0,rxe0,rxe0,nosuch0
j=$scratch/broken/mesh.json
check "broken: exits 1" rc_in "$scratch/broken.rc" "1"
check "broken: rank 3 says which device is missing" has_line "$scratch/broken.out" \
    "^rdma-mesh: rank 3 .*no usable RDMA device.*nosuch0"
check "silent: pairs 0-2, 1-2 and 2-3 failed: rank 2 did not answer" \
    is "$(failed_pairs "$j" 'rank 2 \(' '(no answer|silent)')" "0-2 1-2 2-3"
check "nodev: pairs 0-3 and 1-3 failed: rank 3 has no device" \
    is "$(failed_pairs "$j" 'rank 3 \(' 'no usable RDMA device')" "0-3 1-3"
check "broken: five failed pairs, pair 0-1 measured both ways" \
    is "$(json_get "$j" --count failed) $(cells "$j" bw_gbps | lines)" "5 0-1 1-0"
check "broken: ranks 2 and 3 named as the culprits" is "$(json_get "$j" --get 'culprits/*/rank' | lines)" "2 3"

part ring
# ---- Fewer pairs: --pairs ring:1 over 4 ranks plans 0-1, 1-2, 2-3, 3-0 in 2 rounds; 0-2 and
# 1-3 are neither measured nor failed.
run_mesh ring 4 --quick -D 0.1 -n 100 --serial --pairs ring:1
j=$scratch/ring/mesh.json
check "ring: exits 0 (nothing flagged) or 1 (flagged)" rc_in "$scratch/ring.rc" "0 1"
check "ring: 2 rounds, 4 planned pairs, none failed" \
    is "$(json_get "$j" --get rounds --get planned_pairs --count failed --get settings/pairs | lines)" "2 4 0 ring:1"
check "ring: the heatmap draws 0-2 and 1-3 as not planned, not failed" \
    lacks_line "$scratch/ring/mesh-bw-gbps.svg" '>failed<'
check "ring: a bandwidth heatmap" has_line "$scratch/ring/mesh-bw-gbps.svg" '^</svg>$'
check "ring: exactly the ring's 8 directed cells measured" \
    is "$(cells "$j" bw_gbps | lines)" "0-1 0-3 1-0 1-2 2-1 2-3 3-0 3-2"

part bad-input
# ---- Bad input: one line from rank 0, exit 2, every rank exits.
run_mesh bad 2 --op nope
check "bad: exits 2" rc_in "$scratch/bad.rc" "2"
check "bad: one line from rdma-mesh" count_is 1 "$scratch/bad.out" '^rdma-mesh: '
check "bad: names the option" has_line "$scratch/bad.out" "^rdma-mesh: --op 'nope' is not write, read or send"

[ $failures -eq 0 ] || for f in "$scratch"/*.out; do echo "--- $f"; cat "$f"; done
finish
