# Native test: lab/paths.sh, the two-path fabric's setup, refuses what it cannot do with one line
# and exit 2, before it changes anything: outside a three-host lab, an unknown option, a mode, a
# rate or a delay it cannot read, an option without its value; `mode` anywhere but on host 1.
# Usage: bash tests/native/paths-refusals.sh [BUILD_BIN_DIR]
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
source "$repo/tests/checks.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# refused WHY REGEX ENV... -- ARGS...: exit 2, exactly one line on stderr, matching REGEX.
refused() {
    local why=$1 regex=$2 rc=0
    shift 2
    local -a env_vars=()
    while [ "$1" != -- ]; do env_vars+=("$1"); shift; done
    shift
    env -i PATH="$PATH" "${env_vars[@]}" bash "$repo/lab/paths.sh" "$@" >"$scratch/out" 2>"$scratch/err" || rc=$?
    local lines
    lines=$(wc -l <"$scratch/err")
    check "$why: exit 2 ($rc), one line ($lines)" bash -c '[ "$1" = 2 ] && [ "$2" = 1 ]' _ "$rc" "$lines"
    check "$why: the line says why: $(head -c 120 "$scratch/err")" has_line "$scratch/err" "$regex"
}
lab=(RDMALAB_HOSTS=3 RDMALAB_HOST=2 "RDMALAB_SHARED=$scratch")
refused "outside the lab" 'runs inside the guests of rdmalab lab --hosts 3' -- setup
refused "a two-host lab" 'runs inside the guests' RDMALAB_HOSTS=2 RDMALAB_HOST=1 "RDMALAB_SHARED=$scratch" -- setup
refused "no command" '^lab/paths.sh: usage' "${lab[@]}" --
refused "an unknown option" "unknown option '--paths'" "${lab[@]}" -- setup --paths 3
refused "a mode it does not know" "--mode must be ecmp or spray, got 'random'" "${lab[@]}" -- setup --mode random
refused "one rate for two paths" '--rate must be two rates' "${lab[@]}" -- setup --rate 50mbit
refused "a rate with no unit" '--rate must be two rates' "${lab[@]}" -- setup --rate 50,20mbit
refused "a delay that is no number" '--delay must be two delays' "${lab[@]}" -- setup --delay 1,x
refused "an option without its value" '--delay needs a value' "${lab[@]}" -- setup --delay
refused "mode on a host that does not route" 'mode: only on host 1' "${lab[@]}" -- mode spray
refused "mode it does not know" "mode must be ecmp or spray, got 'all'" RDMALAB_HOSTS=3 RDMALAB_HOST=1 "RDMALAB_SHARED=$scratch" -- mode all
finish
