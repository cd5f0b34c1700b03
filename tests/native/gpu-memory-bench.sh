# Native test: gpu-memory-bench measures host memory (memcpy, CPU fill/verify) with every table
# line, a complete JSON record and a Markdown report; a GPU that is absent fails in one line; bad
# input exits 2 in one line; gpu/measure.sh keeps GPU results apart from host ones.
# Usage: bash tests/native/gpu-memory-bench.sh BUILD_BIN_DIR
set -uo pipefail
bin=${1:?usage: $0 BUILD_BIN_DIR}
tool=$bin/gpu-memory-bench
if [ ! -x "$tool" ]; then
    echo "SKIP: $tool was not built"
    exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
expect_failure_limit=30
source "$here/../checks.sh" || exit 1
start=$(date +%s)

# check_json FILE SECTION: the named part of the record holds (python3's json; prints what not).
check_json() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
path, section = sys.argv[1], sys.argv[2]
problems = []
try:
    record = json.load(open(path))
except (OSError, ValueError) as e:
    sys.exit(f"{path}: {e}")

def number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)

# Every field, with its kind: "+" a number above zero, "n" any number, "s" text, "b" true/false.
shape = {
    "tool": "s",
    "units": {"bandwidth": "s", "time": "s", "size": "s", "of_ceiling": "s"},
    "config": {"mem": "s", "sizes": ["+"], "reps": "+", "ceiling_size": "+", "ceiling_copies": "+"},
    "memory": {"kind": "s", "gpu": "b", "description": "s", "copy_call": "s", "pinned_call": "s",
               "buffer_size": "+"},
    "environment": {"host": "s", "kernel": "s", "date": "s", "tool_version": "s", "device": {}},
    "allocation": {"first_device_memory_us": "+",
                   "rows": [{"size": "+", "device_memory_us": "+", "device_memory_free_us": "+",
                             "allocate_us": "+", "release_us": "+", "pinned_us": "+",
                             "pinned_free_us": "+"}]},
    "dmabuf_export": {"size": "+", "exported": "b", "call": "s", "offset": "n", "failure": "s",
                      "outcome": "s", "median_us": "+", "attempts": "+"},
    "kernels": {"worker": "s", "size": "+", "fill_gbps": "+", "fill_us": "+", "verify_gbps": "+",
                "verify_us": "+", "verified": "b", "wrong_seed_caught_at": "n"},
    "copies": {"method": "s", "verified": "b", "verification": "s",
               "ceiling": {"size": "+", "copies": "+", "statistic": "s", "h2d_gbps": "+",
                           "h2d_us": "+", "d2h_gbps": "+", "d2h_us": "+"},
               "pinned": [{"size": "+", "h2d_gbps": "+", "h2d_us": "+", "h2d_of_ceiling": "+",
                           "d2h_gbps": "+", "d2h_us": "+", "d2h_of_ceiling": "+"}],
               "pageable": {"size": "+", "h2d_gbps": "+", "h2d_us": "+", "h2d_of_ceiling": "+",
                            "d2h_gbps": "+", "d2h_us": "+", "d2h_of_ceiling": "+"}},
}

def walk(value, expected, where):
    if isinstance(expected, dict):
        if not isinstance(value, dict):
            problems.append(f"{where}: not an object")
            return
        for key, inner in expected.items():
            if key not in value:
                problems.append(f"{where}.{key}: missing")
            else:
                walk(value[key], inner, f"{where}.{key}")
    elif isinstance(expected, list):
        if not isinstance(value, list) or not value:
            problems.append(f"{where}: not a non-empty list")
            return
        for i, item in enumerate(value):
            walk(item, expected[0], f"{where}[{i}]")
    elif expected == "+" and not (number(value) and value > 0):
        problems.append(f"{where}: {value!r} is not a number above zero")
    elif expected == "n" and not number(value):
        problems.append(f"{where}: {value!r} is not a number")
    elif expected == "s" and not (isinstance(value, str) and (value or where.endswith((".call", ".failure")))):
        problems.append(f"{where}: {value!r} is not text")
    elif expected == "b" and not isinstance(value, bool):
        problems.append(f"{where}: {value!r} is not true or false")

if section == "fields":
    walk(record, shape, "record")
elif section == "verified":
    if record["kernels"]["verified"] is not True or record["copies"]["verified"] is not True:
        problems.append("kernels.verified and copies.verified must be true")
    if "checked on the device" not in record["copies"]["verification"]:
        problems.append("copies.verification does not say how the copies were checked")
elif section == "ratios":
    ceiling = record["copies"]["ceiling"]
    rows = record["copies"]["pinned"] + [record["copies"]["pageable"]]
    for row in rows:
        for way in ("h2d", "d2h"):
            expected = row[f"{way}_gbps"] / ceiling[f"{way}_gbps"]
            if abs(row[f"{way}_of_ceiling"] - expected) > 1e-4 + 1e-3 * expected:
                problems.append(f"size {row['size']}: {way}_of_ceiling {row[f'{way}_of_ceiling']} "
                                f"is not {way}_gbps / the ceiling ({expected:.5f})")
    if [row["size"] for row in record["copies"]["pinned"]] != record["config"]["sizes"]:
        problems.append("copies.pinned does not have one row per --sizes value")
elif section.startswith("host:"):  # host:SIZES,... the sizes asked for
    sizes = [int(s) for s in section[5:].split(",")]
    if record["config"]["sizes"] != sizes:
        problems.append(f"config.sizes is {record['config']['sizes']}, not {sizes}")
    if record["memory"]["gpu"] is not False or record["memory"]["kind"] != "host":
        problems.append("memory does not say host memory, not a GPU")
    dmabuf = record["dmabuf_export"]
    if dmabuf["exported"] or "host memory is not exported as a dma-buf" not in dmabuf["failure"]:
        problems.append(f"dmabuf_export does not record host memory's refusal: {dmabuf}")
    if "cpu" not in record["environment"]["device"]:
        problems.append("environment.device has no cpu")
elif section == "gpu":
    if record["memory"]["gpu"] is not True:
        problems.append("memory.gpu is not true")
    device = record["environment"]["device"]
    for fact in ("device_name", "pci_bus_id"):
        if fact not in device:
            problems.append(f"environment.device has no {fact}")
    dmabuf = record["dmabuf_export"]
    if dmabuf["exported"] == bool(dmabuf["failure"]):
        problems.append(f"dmabuf_export: exported and failure disagree: {dmabuf}")
else:
    problems.append(f"unknown section {section}")
for problem in problems:
    print(f"  {problem}")
sys.exit(1 if problems else 0)
EOF
}

# --- Host memory: the whole run, small. -----------------------------------------------------
run=$scratch/host
timeout -k 5 60 "$tool" --mem host --sizes 4096,65536 --reps 3 --ceiling-size 1M \
    --json "$scratch/host.json" --markdown "$scratch/host.md" >"$run.out" 2>"$run.err"
echo $? >"$run.rc"
check "host: exits 0" rc_is "$run.rc" 0
check "host: nothing on stderr" count_is 0 "$run.err" '.'
check "host: the title says host memory, not a GPU" \
    has_line "$run.out" '^gpu-memory-bench: host memory, not a GPU: memcpy copies and CPU fill/verify'
check "host: units stated" has_line "$run.out" '^units: GB/s = 10\^9 bytes/s; times in microseconds'
check "host: allocation table header" \
    has_line "$run.out" '^ +size B +DeviceMemory +~DeviceMemory +Backend::allocate +Backend::release +PinnedHostMemory'
for size in 4096 65536 1048576; do  # the smallest, the largest and the ceiling's size
    check "host: allocation row $size" \
        has_line "$run.out" "^ +$size( +[0-9]+\\.[0-9]){6}\$"
done
check "host: dma-buf export failure recorded" \
    has_line "$run.out" '^dma-buf export \(Backend::export_dmabuf of 1048576 B\): failed: host memory is not exported as a dma-buf here .*not an error\)$'
check "host: fill line" has_line "$run.out" '^  fill_pattern \+ synchronize +[0-9.]+ GB/s +[0-9.]+ us$'
check "host: verify line, verified" \
    has_line "$run.out" '^  find_mismatch +[0-9.]+ GB/s +[0-9.]+ us  verified: no wrong byte'
check "host: copies verified" has_line "$run.out" '^copies verified: pattern through H2D checked on the device'
check "host: ceiling line" \
    has_line "$run.out" '^copy ceiling \(4 queued copies of 1048576 B, one synchronize, best\): H2D [0-9.]+ GB/s, D2H [0-9.]+ GB/s$'
check "host: copy table header" has_line "$run.out" '^ +size B +H2D GB/s +of ceiling +D2H GB/s +of ceiling$'
for size in 4096 65536; do
    check "host: copy row $size with both ratios" \
        has_line "$run.out" "^ +$size +[0-9]+\\.[0-9]+ +[0-9]+\\.[0-9]% +[0-9]+\\.[0-9]+ +[0-9]+\\.[0-9]%\$"
done
check "host: pageable copies labelled" \
    has_line "$run.out" '^pageable std::vector, for contrast \(not the staging path\), 65536 B: H2D [0-9.]+ GB/s \([0-9.]+% of ceiling\)'
check "host: environment" has_line "$run.out" '^environment: host .*, gpu-memory-bench '
check "host: wrote the JSON file" has_line "$run.out" "^wrote $scratch/host.json\$"
check "host JSON: every field, numbers above zero" check_json "$scratch/host.json" fields
check "host JSON: fill/verify and copies verified" check_json "$scratch/host.json" verified
check "host JSON: ratios are GB/s over the same direction's ceiling" check_json "$scratch/host.json" ratios
check "host JSON: host memory and its dma-buf refusal" check_json "$scratch/host.json" host:4096,65536
check "host Markdown: the copy table" has_line "$scratch/host.md" '^\| 65536 \| [0-9.]+ \| [0-9.]+% \| [0-9.]+ \| [0-9.]+% \|$'
check "host Markdown: says host memory" has_line "$scratch/host.md" '^# gpu-memory-bench: host memory, not a GPU'

# --- GPUs: absent here, so one line and exit 1; present, a small verified run. ---------------
if [ -e /dev/nvidiactl ]; then
    timeout -k 5 60 "$tool" --mem cuda --sizes 4K,1M --reps 3 --ceiling-size 16M \
        --json "$scratch/cuda.json" >"$scratch/cuda.out" 2>&1
    echo $? >"$scratch/cuda.rc"
    check "cuda: exits 0 on this GPU machine" rc_is "$scratch/cuda.rc" 0
    check "cuda JSON: every field, numbers above zero" check_json "$scratch/cuda.json" fields
    check "cuda JSON: verified" check_json "$scratch/cuda.json" verified
    check "cuda JSON: ratios" check_json "$scratch/cuda.json" ratios
    check "cuda JSON: device facts and the dma-buf outcome" check_json "$scratch/cuda.json" gpu
    rc_is "$scratch/cuda.rc" 0 || cat "$scratch/cuda.out"
else
    expect_failure cuda-absent 1 \
        '^gpu-memory-bench: --mem cuda: (no CUDA driver \(libcuda\.so\.1 not found\)|this build has no CUDA backend \(.+\)|cudaGetDeviceCount failed: .+)$' \
        "$tool" --mem cuda --sizes 4096 --reps 1
fi
if [ ! -e /dev/kfd ]; then
    expect_failure rocm-absent 1 '^gpu-memory-bench: --mem rocm: ' "$tool" --mem rocm --sizes 4096 --reps 1
fi

# --- Bad input: one line, exit 2, before any measurement. ------------------------------------
expect_failure sizes-zero 2 '^gpu-memory-bench: --sizes: 0 is outside 1\.\.1073741824' "$tool" --sizes 0
expect_failure sizes-text 2 "^gpu-memory-bench: --sizes: 'abc' is not a number" "$tool" --sizes abc
expect_failure sizes-too-big 2 '^gpu-memory-bench: --sizes: 2147483648 is outside' "$tool" --sizes 4K,2G
expect_failure reps-zero 2 '^gpu-memory-bench: --reps: .*0.* 1 to 10000' "$tool" --reps 0
expect_failure mem-gpu 2 "^gpu-memory-bench: --mem: 'gpu' is not a memory kind" "$tool" --mem gpu
expect_failure ceiling-too-big 2 "^gpu-memory-bench: --ceiling-size: '2G' is not a size from 1 B to 1 GiB" \
    "$tool" --ceiling-size 2G
expect_failure json-no-folder 2 "^gpu-memory-bench: --json: .*there is no folder $scratch/absent" \
    "$tool" --json "$scratch/absent/x.json"

# --- gpu/measure.sh: GPU results only, unless asked. -----------------------------------------
measure=$here/../../gpu/measure.sh
export RDMALAB_BIN=$bin
expect_failure measure-host 2 '^measure\.sh: --mem host measures memcpy, not a GPU; add --allow-host' \
    bash "$measure" --mem host --out "$scratch/results"
check "measure.sh --mem host: wrote nothing" [ ! -e "$scratch/results" ]
timeout -k 5 60 bash "$measure" --mem host --allow-host --out "$scratch/results" \
    -- --sizes 4096 --reps 2 --ceiling-size 64K >"$scratch/measure.out" 2>&1
echo $? >"$scratch/measure.rc"
check "measure.sh --allow-host: exits 0" rc_is "$scratch/measure.rc" 0
results=("$scratch"/results/host-*.json)
check "measure.sh: one JSON file named host-<host>-<time>.json" \
    [ ${#results[@]} -eq 1 -a -f "${results[0]}" ]
check "measure.sh: its Markdown table beside it" has_line "${results[0]%.json}.md" '^\| 4096 \| '
check "measure.sh: the JSON is complete" check_json "${results[0]}" fields

elapsed=$(($(date +%s) - start))
echo "($elapsed s)"
check "finished within 60 s" [ "$elapsed" -lt 60 ]
finish
