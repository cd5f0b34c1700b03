# Lab test: rdma-mesh under mpirun, all ranks in one guest on its one rxe (rxe loops the
# packets back): the 4-rank matrix is complete, every bandwidth phase's data verified (a failed
# check would be a failed pair); a rank that never answers is reported by rank within the
# timeout while the rest is measured; a rank without a device fails its pairs at once; bad input
# is one line from rank 0 and exit 2. Numbers here are Soft-RoCE under emulation with 4 ranks
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

# json_checks FILE [DESCRIPTION EXPRESSION]...: each expression holds for d = the parsed
# mesh.json; one python3 for them all (every process start costs seconds under emulation).
json_checks() {
    local file=$1 line n=0 out=$scratch/json-checks.out
    shift
    python3 -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    d = None
    print("FAIL - " + sys.argv[1] + ": " + str(e))
args = sys.argv[2:]
for i in range(0, len(args), 2):
    try:
        good = d is not None and eval(args[i + 1])
    except Exception:
        good = False
    print(("ok   - " if good else "FAIL - ") + args[i])
' "$file" "$@" >"$out" 2>&1
    while IFS= read -r line; do
        echo "$line"
        case "$line" in
            "ok   - "*) n=$((n + 1)) ;;
            *) failures=$((failures + 1)) ;;
        esac
    done <"$out"
    [ $n -eq $(($# / 2)) ] || { echo "FAIL - $file: only $n of $(($# / 2)) checks passed"; failures=$((failures + 1)); }
}
run_mesh() {  # run_mesh NAME NP [ARGS...]: output in $scratch/NAME.out, exit status in NAME.rc
    local name=$1 np=$2 rc=0 start=$SECONDS
    shift 2
    "${mpi[@]}" -np "$np" "$mesh" --out "$scratch/$name" "$@" >"$scratch/$name.out" 2>&1 || rc=$?
    echo "$rc" >"$scratch/$name.rc"
    echo "$name: exit $rc after $((SECONDS - start)) s"
}
rc_in() { local code; read -r code <"$1"; [[ " $2 " == *" $code "* ]]; }

# ---- The whole matrix, one pair at a time.
run_mesh full 4 --quick --serial
j=$scratch/full/mesh.json
check "full: exits 0 (nothing flagged) or 1 (flagged)" rc_in "$scratch/full.rc" "0 1"
cells=()
for m in bw_gbps rate_mops lat_us lat_p99_us; do
    cells+=("full: $m: all 12 directed cells measured, > 0"
        "sum(1 for i,r in enumerate(d['metrics']['$m']['matrix']) for k,v in enumerate(r) if i != k and v and v > 0) == 12")
done
json_checks "$j" "full: no failed pair" 'd["failed"] == []' "${cells[@]}" \
    "full: 3 rounds, 6 pairs timed" 'd["rounds"] == 3 and len(d["pair_seconds"]) == 6' \
    "full: each rank's host, device and GID" \
    'all(r["device"] == "rxe0" and r["gid"].startswith("::ffff:") for r in d["ranks"])' \
    "full: the environment and the launcher" \
    'd["environment"]["launcher"] == "openmpi" and d["environment"]["mpi"].startswith("Open MPI")'
check "full: CSV has 12 pairs + header" count_is 13 "$scratch/full/mesh.csv" '.'
for m in bw-gbps rate-mops lat-us lat-p99-us; do
    check "full: heatmap $m" has_line "$scratch/full/mesh-$m.svg" '^</svg>$'
done
check "full: a verdict line" has_line "$scratch/full.out" '^rdma-mesh: verdict: '

# ---- A rank that never answers: reported by rank, the rest measured, nobody hangs.
run_mesh silent 3 --quick --timeout 1 --simulate-silent-rank 2
j=$scratch/silent/mesh.json
check "silent: exits 1" rc_in "$scratch/silent.rc" "1"
json_checks "$j" "silent: pairs 0-2 and 1-2 failed, naming rank 2" \
    'sorted((f["a"], f["b"]) for f in d["failed"]) == [(0, 2), (1, 2)] and all("rank 2" in f["reason"] for f in d["failed"])' \
    "silent: pair 0-1 measured both ways" \
    'd["metrics"]["bw_gbps"]["matrix"][0][1] and d["metrics"]["bw_gbps"]["matrix"][1][0]' \
    "silent: rank 2 named as the culprit" '[c["rank"] for c in d["culprits"]] == [2]'

# ---- A rank whose device is missing (local rank 1 takes the second name of -d).
run_mesh nodev 2 --quick -d rxe0,nosuch0
check "nodev: exits 1" rc_in "$scratch/nodev.rc" "1"
check "nodev: rank 1 says which device is missing" has_line "$scratch/nodev.out" \
    "^rdma-mesh: rank 1 .*no usable RDMA device.*nosuch0"
json_checks "$scratch/nodev/mesh.json" "nodev: pair 0-1 failed, naming rank 1" \
    'len(d["failed"]) == 1 and "rank 1" in d["failed"][0]["reason"]'

# ---- Bad input: one line from rank 0, exit 2, every rank exits.
run_mesh bad 2 --op nope
check "bad: exits 2" rc_in "$scratch/bad.rc" "2"
check "bad: one line from rdma-mesh" count_is 1 "$scratch/bad.out" '^rdma-mesh: '
check "bad: names the option" has_line "$scratch/bad.out" "^rdma-mesh: --op 'nope' is not write, read or send"

[ $failures -eq 0 ] || for f in "$scratch"/*.out; do echo "--- $f"; cat "$f"; done
finish
