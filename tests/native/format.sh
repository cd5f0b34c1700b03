# Native test: every C++ source the project tracks is in the house format (.clang-format), as
# clang-format 14 (Debian 12) writes it, so the formatting cannot drift again. To mend a
# failure: clang-format -i FILE.
# Usage: bash tests/native/format.sh [BUILD_BIN_DIR]
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
command -v clang-format >/dev/null || { echo "FAIL - clang-format is missing (apt-get install clang-format)"; exit 1; }
git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "SKIP: not a git checkout"; exit 77; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
source "$repo/tests/checks.sh"
mapfile -t files < <(cd "$repo" && git ls-files '*.cpp' '*.hpp' '*.h' '*.cu' '*.hip')
check "C++ sources found (${#files[@]})" [ "${#files[@]}" -gt 50 ]
unformatted=()
for file in "${files[@]}"; do
    clang-format --dry-run --Werror "$repo/$file" >/dev/null 2>&1 || unformatted+=("$file")
done
check "every C++ source is in the house format (clang-format $(clang-format --version | grep -oE '[0-9]+\.[0-9.]+' | head -n 1))" \
    [ "${#unformatted[@]}" -eq 0 ]
for file in "${unformatted[@]}"; do echo "    not formatted: $file (clang-format -i $file)"; done
finish
