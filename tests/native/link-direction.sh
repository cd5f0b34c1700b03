# Native test: dependencies point from tools to what lessons share, never back. A tool's library
# is one a tool's folder defines (bench/, mesh/, trace/, wire/, doctor/, security/: rdmalab_bench,
# rdmalab_mesh, …); no lesson, and none of the libraries lessons link (common/, records/, gpu/),
# may link one or include a header of one. What both need lives in a shared library: the
# allreduce record, which the lessons once took from rdmalab_bench, is the records library's.
# Usage: bash tests/native/link-direction.sh [BUILD_BIN_DIR]
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
source "$repo/tests/checks.sh"

tool_folders=(bench mesh trace wire doctor security)
shared_folders=(lessons common records gpu)

# The tools' libraries, from their add_library lines.
tool_libraries=()
for folder in "${tool_folders[@]}"; do
    while IFS= read -r line; do
        [[ $line =~ ^[[:space:]]*add_library\(([A-Za-z0-9_-]+) ]] && tool_libraries+=("${BASH_REMATCH[1]}")
    done <"$repo/$folder/CMakeLists.txt"
done
check "the tools' libraries found (${tool_libraries[*]})" [ "${#tool_libraries[@]}" -ge 6 ]
names=$(IFS='|'; echo "${tool_libraries[*]}")

offending=()
# A CMake file of a lesson or a shared library naming a tool's library (comments aside).
while IFS= read -r file; do
    n=0
    while IFS= read -r line || [ -n "$line" ]; do
        n=$((n + 1))
        [[ $line =~ ^[[:space:]]*# ]] && continue
        [[ $line =~ (^|[^A-Za-z0-9_])($names)([^A-Za-z0-9_]|$) ]] &&
            offending+=("${file#"$repo"/}:$n: links ${BASH_REMATCH[2]}")
    done <"$file"
done < <(for folder in "${shared_folders[@]}"; do find "$repo/$folder" -name CMakeLists.txt; done)
# A source of theirs including a tool's header ("rdmalab/bench/…", "rdmalab/mesh/…").
while IFS= read -r file; do
    n=0
    while IFS= read -r line || [ -n "$line" ]; do
        n=$((n + 1))
        [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*[\"\<]rdmalab/(bench|mesh)/ ]] &&
            offending+=("${file#"$repo"/}:$n: includes a header of rdmalab_${BASH_REMATCH[1]}")
    done <"$file"
done < <(for folder in "${shared_folders[@]}"; do
    find "$repo/$folder" \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' \) -not -path '*/tests/*'
done)
check "no lesson or shared library links or includes a tool's library (${#offending[@]} found)" \
    [ "${#offending[@]}" = 0 ]
for line in "${offending[@]}"; do echo "    $line"; done

# The test finds what it looks for: the lessons' old link line.
printf 'target_link_libraries(ring-allreduce PRIVATE rdmalab_common rdmalab_bench)\n' >"$scratch/was.txt"
check "the pattern finds a lesson linking rdmalab_bench" \
    has_line "$scratch/was.txt" "(^|[^A-Za-z0-9_])($names)([^A-Za-z0-9_]|$)"
finish
