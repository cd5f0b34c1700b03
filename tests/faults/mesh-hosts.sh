#!/usr/bin/env bash
# rdma-mesh across three lab hosts under mpirun (Open MPI's daemons started through
# lab/mesh-rsh.sh), in one boot (lab/mesh-run.sh --then-slow):
#   healthy   every pair measured both ways, every bandwidth phase's data verified (a failed
#             check is a failed pair), no pair failed, no host named;
#   one slow  host 3's egress then held to 4 Mbit/s by netem: the verdict names exactly that
#             host (rank 2), every flagged pair is one of its pairs, both its sending cells are
#             below the threshold, and the run exits 1.
# Only bandwidth is judged, at half the typical value (--judge bw --fraction 0.5): three
# emulated guests on two cores make latency and message rate noise, and fast cells vary by up to
# a third between pairs; 4 Mbit/s is a fifth or less of what the emulated link carries. Appends
# its cells to RESULTS.tsv in the fault matrix's format.
#   tests/faults/mesh-hosts.sh BUILD_BIN_DIR [RESULTS.tsv]   (default $RDMALAB_FAULTS_TSV, or
#   BUILD_BIN_DIR/../faults/faults.tsv: CTest's faults.mesh-hosts)
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:?usage: mesh-hosts.sh BUILD_BIN_DIR [RESULTS.tsv]}
results=${2:-${RDMALAB_FAULTS_TSV:-$bin/../faults/faults.tsv}}
mkdir -p "$(dirname "$results")"
if [ ! -x "$bin/rdma-mesh" ]; then
    echo "SKIP: rdma-mesh is not built (no MPI: apt-get install openmpi-bin libopenmpi-dev)"
    exit 77
fi
out=$(mktemp -d "$repo/build/mesh-hosts.XXXXXX") # the guests write here
trap 'rm -rf "$out"' EXIT
start=$SECONDS
lab_rc=0
"$repo/lab/lab.sh" --hosts 3 --timeout 400 -- \
    bash "$repo/lab/mesh-run.sh" "$bin" "$out/healthy" --then-slow 3:4mbit "$out/slow" \
    --serial --quick -D 0.3 -n 20 --warmup 10 --judge bw --fraction 0.5 \
    >"$out/lab.out" 2>"$out/lab.err" || lab_rc=$?
seconds=$((SECONDS - start))

failed=0
record() { # record PROGRAM FAULT EXPECTED OBSERVED VERDICT
    printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4//$'\n'/ }" "$5" >>"$results"
    printf '%-4s %-10s %-44s %s\n' "$5" "$1" "$2" "$4"
    [ "$5" = ok ] || failed=$((failed + 1))
}
# judge PHASE: "ok|FAIL<TAB>what was seen" for one run's mesh.json and status.
judge() {
    python3 - "$1" "$out/$1" <<'EOF'
import json, sys
phase, folder = sys.argv[1], sys.argv[2]
try:
    d = json.load(open(folder + "/mesh.json"))
    status = open(folder + "/status").read().strip()
except Exception as e:
    print("FAIL\tno results: " + str(e))
    sys.exit()
m = d["metrics"]["bw_gbps"]
cells = [(i, k, v) for i, r in enumerate(m["matrix"]) for k, v in enumerate(r) if i != k]
measured = [c for c in cells if c[2]]
culprits = [c["rank"] for c in d["culprits"]]
slow = sorted((p["a"], p["b"]) for p in d["slow"])
hosts = {r["rank"]: r["address"] for r in d["ranks"]}
seen = "exit %s; %d of 6 directed cells measured in every metric; typical %.3g Gb/s, threshold %.3g; failed pairs %d; slow pairs %s; named %s" % (
    status, min(sum(1 for i, r in enumerate(d["metrics"][k]["matrix"]) for j, v in enumerate(r) if i != j and v) for k in d["metrics"]),
    m["typical"], m["threshold"], len(d["failed"]), slow or "none",
    ", ".join("rank %d (%s)" % (r, hosts.get(r)) for r in culprits) or "none")
whole = all(sum(1 for i, r in enumerate(d["metrics"][k]["matrix"]) for j, v in enumerate(r) if i != j and v and v > 0) == 6
            for k in d["metrics"])
good = len(d["ranks"]) == 3 and d["environment"]["launcher"] == "openmpi" and whole and d["failed"] == []
good = good and sorted(hosts.values()) == ["198.51.100.1", "198.51.100.2", "198.51.100.3"]
if phase == "healthy":
    good = good and culprits == [] and status in ("0", "1")
else:
    slow_cells = [v for i, k, v in cells if i == 2 and v is not None]
    good = (good and culprits == [2] and hosts.get(2) == "198.51.100.3" and status == "1"
            and slow and all(2 in p for p in slow)
            and len(slow_cells) == 2 and all(v < m["threshold"] for v in slow_cells))
    seen += "; rank 2 sent at %s Gb/s" % ", ".join("%.3g" % v for v in slow_cells)
times = sorted(p["seconds"] for p in d["pair_seconds"])
if times:
    seen += "; pairs took %.1f-%.1f s" % (times[0], times[-1])
print(("ok" if good else "FAIL") + "\t" + seen)
EOF
}
IFS=$'\t' read -r verdict seen < <(judge healthy)
record rdma-mesh "three hosts under mpirun, healthy" \
    "every pair measured both ways and verified, none failed, no host named" "$seen" "$verdict"
IFS=$'\t' read -r verdict seen < <(judge slow)
record rdma-mesh "three hosts, host 3's egress at 4 Mbit/s" \
    "host 3 (rank 2) named, and only pairs of it flagged; exit 1" "$seen" "$verdict"
runs=$(ls -d "$repo"/build/lab/run.* 2>/dev/null | wc -l)
qemus=$(pgrep -f "$repo/build/lab/run\." | wc -l)
record "(lab)" "three hosts: exit status, resources" "the lab exits 0; no run folder, no guest left" \
    "lab exit $lab_rc after $seconds s; run folders left: $runs; QEMU processes left: $qemus" \
    "$([ "$lab_rc" = 0 ] && [ "$runs" = 0 ] && [ "$qemus" = 0 ] && echo ok || echo FAIL)"
if [ "$failed" != 0 ]; then
    tail -n 40 "$out/lab.out" "$out/lab.err"
    for f in "$out"/*/mesh.json; do [ -e "$f" ] && python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["summary"]))' "$f"; done
fi
[ "$failed" = 0 ]
