# Native test: the tools' own JSON documents (rdma-mesh's mesh.json, gpu-memory-bench's record,
# rdma-doctor --json's report) are read by `rdma-bench json` through their types
# (records/tool_documents.hpp): the committed ones answer paths of their schema; a path naming
# no field, a truncated file, a field of the wrong type, a misspelt field and a document of no
# tool each exit 2 with one line naming what is wrong and print nothing else; rdma-doctor --json
# on this host reads back through its type.
# Usage: bash tests/native/tool-documents.sh BUILD_BIN_DIR
set -uo pipefail
bin=${1:?usage: $0 BUILD_BIN_DIR}
reader=$bin/rdma-bench
if [ ! -x "$reader" ]; then
    echo "SKIP: $reader was not built"
    exit 77
fi
repo=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
expect_failure_limit=30
source "$repo/tests/checks.sh" || exit 1

mesh=$repo/bench/results/mesh/one-slow-host/mesh.json
gpu=$repo/gpu/results/cuda0-vm-20261127T123934Z.json

# The committed documents, through their types.
"$reader" json "$mesh" --raw --count ranks --get 'culprits/*/host' --get settings/judge \
    >"$scratch/mesh.out" 2>"$scratch/mesh.err"
echo $? >"$scratch/mesh.rc"
check "mesh.json: read (exit 0)" rc_is "$scratch/mesh.rc" 0
check "mesh.json: 4 ranks, the slow host named, judged on bw" \
    [ "$(tr '\n' '|' <"$scratch/mesh.out")" = "4|rdmalab-lab 198.51.100.4|bw|" ]
"$reader" json "$gpu" --raw --get environment/device/device_name --count 'copies/pinned' \
    >"$scratch/gpu.out" 2>"$scratch/gpu.err"
echo $? >"$scratch/gpu.rc"
check "gpu record: read (exit 0)" rc_is "$scratch/gpu.rc" 0
check "gpu record: the device and its 8 copy sizes" \
    [ "$(tr '\n' '|' <"$scratch/gpu.out")" = "NVIDIA H200|8|" ]

# Refusals: one line, exit 2, nothing on stdout.
refused() {  # refused NAME REGEX ARGS...: rdma-bench json ARGS is refused so
    local name=$1 regex=$2
    shift 2
    expect_failure "$name" 2 "$regex" "$reader" json "$@"
    check "$name: nothing on stdout" [ ! -s "$scratch/$name.stdout" ]
}
refused misspelt-path "ranks/\*/adress: the document has no field ranks\.0\.adress" \
    "$mesh" --get 'ranks/*/adress'
refused gpu-misspelt-path "copies/pinned/0/h2d_gbs: the document has no field" \
    "$gpu" --get copies/pinned/0/h2d_gbs
head -c 700 "$mesh" >"$scratch/truncated.json"
refused truncated "truncated\.json is not valid JSON" "$scratch/truncated.json" --get rounds
printf '{"tool": "rdma-mesh 0.1", "rounds": "three"}\n' >"$scratch/mistyped.json"
refused mistyped "mistyped\.json: rounds: a string, not integer \(and [0-9]+ more\)$" \
    "$scratch/mistyped.json" --get rounds
printf '{"format": "rdma-doctor", "version": 1, "healthy": true, "findings": [], "passed": [], "devices": [], "gpus": [], "helthy": true}\n' \
    >"$scratch/misspelt.json"
refused misspelt-field "misspelt\.json: helthy: not in the schema$" "$scratch/misspelt.json" --get healthy
printf '{"tool": "nobody 1", "a": 1}\n' >"$scratch/nobody.json"
refused no-tool "nobody\.json: not a document this project's tools write" \
    "$scratch/nobody.json" --get a
refused absent "cannot open" "$scratch/absent.json" --get a

# rdma-doctor --json on this host (no RDMA device here, or one): its report through its type.
if [ -x "$bin/rdma-doctor" ]; then
    "$bin/rdma-doctor" --json --window 0 >"$scratch/doctor.json" 2>"$scratch/doctor.err"
    "$reader" json "$scratch/doctor.json" --raw --get format --get version --count findings \
        >"$scratch/doctor.out" 2>"$scratch/doctor.read.err"
    echo $? >"$scratch/doctor.rc"
    check "rdma-doctor --json: read through its type (exit 0)" rc_is "$scratch/doctor.rc" 0
    check "rdma-doctor --json: format rdma-doctor, version 1" \
        [ "$(head -2 "$scratch/doctor.out" | tr '\n' '|')" = "rdma-doctor|1|" ]
fi
finish
