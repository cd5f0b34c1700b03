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

# json_check FILE DESCRIPTION EXPRESSION: the expression holds for d = FILE parsed as JSON.
# Collected, then run_json_checks checks them all in one python3 (every process start costs
# seconds under emulation; -S skips the site module, much of its start-up).
json_args=()
json_check() { json_args+=("$1" "$2" "$3"); }
run_json_checks() {
    local line n=0 out=$scratch/json-checks.out
    python3 -S -c '
import json, sys
docs = {}
args = sys.argv[1:]
for i in range(0, len(args), 3):
    name, what, expression = args[i:i + 3]
    if name not in docs:
        try:
            docs[name] = json.load(open(name))
        except Exception as e:
            docs[name] = None
            print("FAIL - " + name + ": " + str(e))
    d = docs[name]
    try:
        good = d is not None and eval(expression)
    except Exception:
        good = False
    print(("ok   - " if good else "FAIL - ") + what)
' "${json_args[@]}" >"$out" 2>&1
    while IFS= read -r line; do
        echo "$line"
        case "$line" in
            "ok   - "*) n=$((n + 1)) ;;
            *) failures=$((failures + 1)) ;;
        esac
    done <"$out"
    [ $n -eq $((${#json_args[@]} / 3)) ] ||
        { echo "FAIL - only $n of $((${#json_args[@]} / 3)) JSON checks passed"; failures=$((failures + 1)); }
}
run_mesh() {  # run_mesh NAME NP [ARGS...]: output in $scratch/NAME.out, exit status in NAME.rc
    local name=$1 np=$2 rc=0 start=$SECONDS
    shift 2
    "${mpi[@]}" -np "$np" "$mesh" --out "$scratch/$name" "$@" >"$scratch/$name.out" 2>&1 || rc=$?
    echo "$rc" >"$scratch/$name.rc"
    echo "$name: exit $rc after $((SECONDS - start)) s"
}
lacks_line() { ! has_line "$@"; }
rc_in() { local code; read -r code <"$1"; [[ " $2 " == *" $code "* ]]; }

# ---- The whole matrix, one pair at a time (short measurements: the numbers are not judged).
run_mesh full 4 --quick --serial -D 0.1 -n 100
j=$scratch/full/mesh.json
check "full: exits 0 (nothing flagged) or 1 (flagged)" rc_in "$scratch/full.rc" "0 1"
for m in bw_gbps rate_mops lat_us lat_p99_us; do
    json_check "$j" "full: $m: all 12 directed cells measured, > 0" \
        "sum(1 for i,r in enumerate(d['metrics']['$m']['matrix']) for k,v in enumerate(r) if i != k and v and v > 0) == 12"
done
json_check "$j" "full: no failed pair" 'd["failed"] == []'
json_check "$j" "full: 3 rounds, 6 pairs timed" 'd["rounds"] == 3 and len(d["pair_seconds"]) == 6'
json_check "$j" "full: each rank's host, device and GID" \
    'all(r["device"] == "rxe0" and r["gid"].startswith("::ffff:") for r in d["ranks"])'
json_check "$j" "full: the environment and the launcher" \
    'd["environment"]["launcher"] == "openmpi" and d["environment"]["mpi"].startswith("Open MPI")'
check "full: CSV has 12 pairs + header" count_is 13 "$scratch/full/mesh.csv" '.'
for m in bw-gbps rate-mops lat-us lat-p99-us; do
    check "full: heatmap $m" has_line "$scratch/full/mesh-$m.svg" '^</svg>$'
done
check "full: a verdict line" has_line "$scratch/full.out" '^rdma-mesh: verdict: '

# ---- Two failures in one run: rank 2 never answers, rank 3 has no device (local rank 3 takes
# the fourth name of -d). Each is reported by rank, the pair between the other two is measured,
# both are named, and nobody hangs.
run_mesh broken 4 --quick -D 0.1 -n 100 --timeout 1 --simulate-silent-rank 2 -d rxe0,rxe0,rxe0,nosuch0
j=$scratch/broken/mesh.json
check "broken: exits 1" rc_in "$scratch/broken.rc" "1"
check "broken: rank 3 says which device is missing" has_line "$scratch/broken.out" \
    "^rdma-mesh: rank 3 .*no usable RDMA device.*nosuch0"
json_check "$j" "silent: pairs 0-2, 1-2 and 2-3 failed: rank 2 did not answer" \
    'sorted((f["a"], f["b"]) for f in d["failed"] if "rank 2 (" in f["reason"] and ("no answer" in f["reason"] or "silent" in f["reason"])) == [(0, 2), (1, 2), (2, 3)]'
json_check "$j" "nodev: pairs 0-3 and 1-3 failed: rank 3 has no device" \
    'sorted((f["a"], f["b"]) for f in d["failed"] if "rank 3 (" in f["reason"] and "no usable RDMA device" in f["reason"]) == [(0, 3), (1, 3)]'
json_check "$j" "broken: five failed pairs, pair 0-1 measured both ways" \
    'len(d["failed"]) == 5 and d["metrics"]["bw_gbps"]["matrix"][0][1] and d["metrics"]["bw_gbps"]["matrix"][1][0]'
json_check "$j" "broken: ranks 2 and 3 named as the culprits" '[c["rank"] for c in d["culprits"]] == [2, 3]'

# ---- Fewer pairs: --pairs ring:1 over 4 ranks plans 0-1, 1-2, 2-3, 3-0 in 2 rounds; 0-2 and
# 1-3 are neither measured nor failed.
run_mesh ring 4 --quick -D 0.1 -n 100 --serial --pairs ring:1
j=$scratch/ring/mesh.json
check "ring: exits 0 (nothing flagged) or 1 (flagged)" rc_in "$scratch/ring.rc" "0 1"
check "ring: says 4 of 6 pairs" has_line "$scratch/ring.out" '^rdma-mesh: 4 ranks, 2 rounds, 4 of 6 pairs \(--pairs ring:1\)'
json_check "$j" "ring: 2 rounds, 4 planned pairs, none failed" \
    'd["rounds"] == 2 and d["planned_pairs"] == 4 and d["failed"] == [] and d["settings"]["pairs"] == "ring:1"'
check "ring: the heatmap draws 0-2 and 1-3 as not planned, not failed" \
    lacks_line "$scratch/ring/mesh-bw-gbps.svg" '>failed<'
check "ring: a bandwidth heatmap" has_line "$scratch/ring/mesh-bw-gbps.svg" '^</svg>$'
json_check "$j" "ring: exactly the ring's 8 directed cells measured" \
    'sorted((i, k) for i, r in enumerate(d["metrics"]["bw_gbps"]["matrix"]) for k, v in enumerate(r) if v) == sorted([(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2), (0, 3), (3, 0)])'

# ---- Bad input: one line from rank 0, exit 2, every rank exits.
run_mesh bad 2 --op nope
check "bad: exits 2" rc_in "$scratch/bad.rc" "2"
check "bad: one line from rdma-mesh" count_is 1 "$scratch/bad.out" '^rdma-mesh: '
check "bad: names the option" has_line "$scratch/bad.out" "^rdma-mesh: --op 'nope' is not write, read or send"

start=$SECONDS
run_json_checks
echo "JSON checks: $((SECONDS - start)) s"
[ $failures -eq 0 ] || for f in "$scratch"/*.out; do echo "--- $f"; cat "$f"; done
finish
