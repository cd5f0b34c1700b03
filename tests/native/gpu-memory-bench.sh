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

# The record is read with `rdma-bench json` (the one reader of the tools' JSON), never by its
# text. get FILE OUT ARGS...: rdma-bench json FILE ARGS (one value a line) into OUT; a refusal's
# one line is printed.
reader=$bin/rdma-bench
get() {
    local file=$1 out=$2
    shift 2
    "$reader" json "$file" "$@" >"$out" 2>"$out.err" && return 0
    echo "  $(cat "$out.err")"
    return 1
}

# Every field, with its kind: "+" a number above zero, "n" any number, "s" text (empty only for
# .../call and .../failure), "b" true/false, "o" an object; a list's elements as LIST/*.
record_shape=(
    "tool s"
    "units/bandwidth s" "units/time s" "units/size s" "units/of_ceiling s"
    "config/mem s" "config/sizes/* +" "config/reps +" "config/ceiling_size +" "config/ceiling_copies +"
    "memory/kind s" "memory/gpu b" "memory/description s" "memory/copy_call s" "memory/pinned_call s"
    "memory/buffer_size +"
    "environment/host s" "environment/kernel s" "environment/date s" "environment/tool_version s"
    "environment/device o"
    "allocation/first_device_memory_us +"
    "allocation/rows/*/size +" "allocation/rows/*/device_memory_us +" "allocation/rows/*/device_memory_free_us +"
    "allocation/rows/*/allocate_us +" "allocation/rows/*/release_us +" "allocation/rows/*/pinned_us +"
    "allocation/rows/*/pinned_free_us +"
    "dmabuf_export/size +" "dmabuf_export/exported b" "dmabuf_export/call s" "dmabuf_export/offset n"
    "dmabuf_export/failure s" "dmabuf_export/outcome s" "dmabuf_export/median_us +" "dmabuf_export/attempts +"
    "kernels/worker s" "kernels/size +" "kernels/fill_gbps +" "kernels/fill_us +" "kernels/verify_gbps +"
    "kernels/verify_us +" "kernels/verified b" "kernels/wrong_seed_caught_at n"
    "copies/method s" "copies/verified b" "copies/verification s"
    "copies/ceiling/size +" "copies/ceiling/copies +" "copies/ceiling/statistic s" "copies/ceiling/h2d_gbps +"
    "copies/ceiling/h2d_us +" "copies/ceiling/d2h_gbps +" "copies/ceiling/d2h_us +"
    "copies/pinned/*/size +" "copies/pinned/*/h2d_gbps +" "copies/pinned/*/h2d_us +" "copies/pinned/*/h2d_of_ceiling +"
    "copies/pinned/*/d2h_gbps +" "copies/pinned/*/d2h_us +" "copies/pinned/*/d2h_of_ceiling +"
    "copies/pageable/size +" "copies/pageable/h2d_gbps +" "copies/pageable/h2d_us +" "copies/pageable/h2d_of_ceiling +"
    "copies/pageable/d2h_gbps +" "copies/pageable/d2h_us +" "copies/pageable/d2h_of_ceiling +"
)
kind_is() {  # kind_is KIND PATH VALUE (VALUE as compact JSON)
    case $1 in
        +) [[ $3 =~ ^[0-9.]+([eE][-+]?[0-9]+)?$ && ! $3 =~ ^[0.]+$ ]] ;;
        n) [[ $3 =~ ^-?[0-9.]+([eE][-+]?[0-9]+)?$ ]] ;;
        s) [[ $3 == \"* ]] && { [ "$3" != '""' ] || [[ $2 == */call || $2 == */failure ]]; } ;;
        b) [[ $3 == true || $3 == false ]] ;;
        o) [[ $3 == \{* ]] ;;
    esac
}
declare -A kind_names=([+]="a number above zero" [n]="a number" [s]="text" [b]="true or false" [o]="an object")

# check_json FILE SECTION: the named part of the record holds (prints what not).
check_json() {
    local file=$1 section=$2 spec path kind value problems=0 f=$scratch/field
    local -a v
    case $section in
        fields)
            for spec in "${record_shape[@]}"; do
                path=${spec% *} kind=${spec##* }
                if [[ $path == */\** ]]; then  # a list: not empty
                    get "$file" "$f" --count "${path%%/\**}" || { problems=$((problems + 1)); continue; }
                    [ "$(cat "$f")" != 0 ] || { echo "  ${path%%/\**}: an empty list"; problems=$((problems + 1)); }
                fi
                get "$file" "$f" --get "$path" || { problems=$((problems + 1)); continue; }
                while IFS= read -r value; do
                    kind_is "$kind" "$path" "$value" ||
                        { echo "  $path: $value is not ${kind_names[$kind]}"; problems=$((problems + 1)); }
                done <"$f"
            done ;;
        verified)
            get "$file" "$f" --raw --get kernels/verified --get copies/verified --get copies/verification || return 1
            mapfile -t v <"$f"
            [ "${v[0]} ${v[1]}" = "true true" ] ||
                { echo "  kernels.verified and copies.verified must be true"; problems=1; }
            [[ ${v[2]} == *"checked on the device"* ]] ||
                { echo "  copies.verification does not say how the copies were checked"; problems=1; } ;;
        ratios)
            local way
            for way in h2d d2h; do
                get "$file" "$f.c" --get "copies/ceiling/${way}_gbps" &&
                    get "$file" "$f.1" --get 'copies/pinned/*/size' --get copies/pageable/size &&
                    get "$file" "$f.2" --get "copies/pinned/*/${way}_gbps" --get "copies/pageable/${way}_gbps" &&
                    get "$file" "$f.3" --get "copies/pinned/*/${way}_of_ceiling" --get "copies/pageable/${way}_of_ceiling" ||
                    return 1
                paste "$f.1" "$f.2" "$f.3" | awk -v way="$way" -v ceiling="$(cat "$f.c")" '
                    { e = $2 / ceiling; d = $3 - e; if (d < 0) d = -d }
                    d > 1e-4 + 1e-3 * e { printf "  size %s: %s_of_ceiling %s is not %s_gbps / the ceiling (%.5f)\n", $1, way, $3, way, e; bad = 1 }
                    END { exit bad }' || problems=1
            done
            get "$file" "$f.1" --get 'copies/pinned/*/size' && get "$file" "$f.2" --get 'config/sizes/*' || return 1
            [ "$(paste -sd, "$f.1")" = "$(paste -sd, "$f.2")" ] ||
                { echo "  copies.pinned does not have one row per --sizes value"; problems=1; } ;;
        host:*)  # host:SIZES,... the sizes asked for
            get "$file" "$f" --get 'config/sizes/*' || return 1
            [ "$(paste -sd, "$f")" = "${section#host:}" ] ||
                { echo "  config.sizes is $(paste -sd, "$f"), not ${section#host:}"; problems=1; }
            get "$file" "$f" --raw --get memory/gpu --get memory/kind --get dmabuf_export/exported \
                --get dmabuf_export/failure || return 1
            mapfile -t v <"$f"
            [ "${v[0]} ${v[1]}" = "false host" ] || { echo "  memory does not say host memory, not a GPU"; problems=1; }
            [ "${v[2]}" = false ] && [[ ${v[3]} == *"host memory is not exported as a dma-buf"* ]] ||
                { echo "  dmabuf_export does not record host memory's refusal: ${v[2]} ${v[3]}"; problems=1; }
            get "$file" "$f" --get environment/device/cpu || problems=1 ;;
        gpu)
            get "$file" "$f" --raw --get memory/gpu --get dmabuf_export/exported --get dmabuf_export/failure || return 1
            mapfile -t v <"$f"
            [ "${v[0]}" = true ] || { echo "  memory.gpu is not true"; problems=1; }
            # exported, or a failure said: never both, never neither.
            { [ "${v[1]}" = true ] && [ -z "${v[2]}" ]; } || { [ "${v[1]}" = false ] && [ -n "${v[2]}" ]; } ||
                { echo "  dmabuf_export: exported and failure disagree: ${v[1]} '${v[2]}'"; problems=1; }
            get "$file" "$f" --get environment/device/device_name --get environment/device/pci_bus_id || problems=1 ;;
        *) echo "  unknown section $section"; problems=1 ;;
    esac
    [ $problems -eq 0 ]
}

part host-table
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
part host-files
check "host JSON: every field, numbers above zero" check_json "$scratch/host.json" fields
check "host JSON: fill/verify and copies verified" check_json "$scratch/host.json" verified
check "host JSON: ratios are GB/s over the same direction's ceiling" check_json "$scratch/host.json" ratios
check "host JSON: host memory and its dma-buf refusal" check_json "$scratch/host.json" host:4096,65536
check "host Markdown: the copy table" has_line "$scratch/host.md" '^\| 65536 \| [0-9.]+ \| [0-9.]+% \| [0-9.]+ \| [0-9.]+% \|$'
check "host Markdown: says host memory" has_line "$scratch/host.md" '^# gpu-memory-bench: host memory, not a GPU'

part gpus
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

part bad-sizes
# --- Bad input: one line, exit 2, before any measurement. ------------------------------------
expect_failure sizes-zero 2 '^gpu-memory-bench: --sizes: 0 is outside 1\.\.1073741824' "$tool" --sizes 0
expect_failure sizes-text 2 "^gpu-memory-bench: --sizes: 'abc' is not a number" "$tool" --sizes abc
expect_failure sizes-too-big 2 '^gpu-memory-bench: --sizes: 2147483648 is outside' "$tool" --sizes 4K,2G
part bad-options
expect_failure reps-zero 2 '^gpu-memory-bench: --reps: .*0.* 1 to 10000' "$tool" --reps 0
expect_failure mem-gpu 2 "^gpu-memory-bench: --mem: 'gpu' is not a memory kind" "$tool" --mem gpu
expect_failure ceiling-too-big 2 "^gpu-memory-bench: --ceiling-size: '2G' is not a size from 1 B to 1 GiB" \
    "$tool" --ceiling-size 2G
expect_failure json-no-folder 2 "^gpu-memory-bench: --json: .*there is no folder $scratch/absent" \
    "$tool" --json "$scratch/absent/x.json"

part measure
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

part elapsed
elapsed=$(($(date +%s) - start))
echo "($elapsed s)"
check "finished within 60 s" [ "$elapsed" -lt 60 ]
finish
