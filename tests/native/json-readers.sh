# Native test: JSON is read back through its one reader (`rdma-bench records` for the typed
# records of rdma-bench and the allreduce programs; `rdma-bench json` for rdma-mesh's mesh.json,
# gpu-memory-bench's record and rdma-doctor --json's report, each through its type in records/;
# rdma-wire for packets, trace-merge --story for traces), never by
# its text, and no script runs an interpreter that could parse it instead (none is in ./rdmalab's
# package lists but the site's Node.js, and the site is docs/). In the tracked scripts and CMake
# files (docs/ aside), outside full-line comments, none of these may appear:
#   - Python: python, python3, python3 -S, a #!/usr/bin/env python3 line;
#   - another interpreter run as a command: node, nodejs, deno, bun, perl, ruby, php, lua,
#     tclsh, Rscript given an option, a script file or a here-document (node -e '...',
#     perl -ne, ruby x.rb), or named on a #! line; and jq anywhere;
#   - a text tool applied to a .json file: grep, egrep, awk, gawk, sed, jq, or the line matchers
#     of tests/checks.sh (has_line, count_is, lacks_line) on a line (continuation lines joined)
#     that names a .json file;
#   - counting the pretty-printer's indentation: a pattern "^" followed by 4 or more spaces and
#     '"' or '{'.
# To mend a failure: read the field with `rdma-bench records FILE --get records/0/...` (or
# `rdma-bench json`), or in a test with record_values/records_match/record_has (tests/checks.sh);
# a trace's events with `trace-merge --story` (trace/trace-merge.cpp).
# Usage: bash tests/native/json-readers.sh [BUILD_BIN_DIR]
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "SKIP: not a git checkout"; exit 77; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
source "$repo/tests/checks.sh"
self=tests/native/json-readers.sh

allowed=()
# For good: lines that match a .json file's name in a message, not a file's contents.
allowed+=(
    $'tests/vm/lab-accel.sh\t/tmp/out\\.json is under /tmp\' \'\\$scratch/err\''
)

python='(^|[^[:alnum:]_.-])python[0-9.]*([^[:alnum:]_.-]|$)'
interpreters='node|nodejs|deno|bun|perl|ruby|php|lua[0-9.]*|tclsh|Rscript'
# As a command: at the start, after ; & | ( or $(, or after env/exec/timeout N; then an option,
# a script file or a here-document. A variable named node ("$node", node=...) is not one.
interpreter='(^|[;&|(]|\$\(|(env|exec|timeout [0-9]+)[[:space:]])[[:space:]]*('"$interpreters"')[[:space:]]+(-|<<|[^[:space:]]+\.(js|mjs|cjs|pl|rb|php|lua|tcl|R)([^[:alnum:]_]|$))'
shebang='^#!.*[/[:space:]]('"$interpreters"')([[:space:]]|$)'
jq='(^|[^[:alnum:]_.-])jq([^[:alnum:]_.-]|$)'
tools='(^|[^[:alnum:]_-])(grep|egrep|awk|gawk|sed|has_line|count_is|lacks_line)([^[:alnum:]_-]|$)'
json_file='\.json(["'"'"')[:space:]]|$)'
indentation='\^    +(\\\{|\\?")'

# scan FILE...: "FILE:LINE: TEXT" for every offending line that the allowlist does not pass.
scan() {
    local allow=$scratch/allowed.tsv
    printf '%s\n' "${allowed[@]}" >"$allow"
    # The patterns through the environment: awk -v would take their backslashes as escapes.
    PYTHON=$python INTERPRETER=$interpreter SHEBANG=$shebang JQ=$jq TOOLS=$tools JSON_FILE=$json_file \
        INDENTATION=$indentation ALLOW=$allow awk '
        BEGIN {
            python = ENVIRON["PYTHON"]; tools = ENVIRON["TOOLS"]; json = ENVIRON["JSON_FILE"]
            interpreter = ENVIRON["INTERPRETER"]; shebang = ENVIRON["SHEBANG"]; jq = ENVIRON["JQ"]
            indentation = ENVIRON["INDENTATION"]
            while ((getline line < ENVIRON["ALLOW"]) > 0) {
                split(line, a, "\t"); n++; afile[n] = a[1]; are[n] = a[2]
            }
        }
        FNR == 1 { held = ""; at = 0 }
        {
            if (held == "") at = FNR
            line = held $0
            if (line ~ /\\$/) { held = substr(line, 1, length(line) - 1) " "; next }
            held = ""
            if (line ~ /^[[:space:]]*#/ && line !~ /^#!/) next  # comments may name what they explain
            why = ""
            if (line ~ python) why = "uses Python"
            else if (line ~ interpreter || line ~ shebang) why = "runs an interpreter"
            else if (line ~ jq) why = "uses jq"
            else if (line ~ tools && line ~ json) why = "reads a .json file as text"
            else if (line ~ indentation) why = "counts the pretty-printer'"'"'s indentation"
            if (why == "") next
            name = FILENAME
            sub("^" ENVIRON["SCAN_ROOT"] "/", "", name)
            for (i = 1; i <= n; i++) if (name == afile[i] && line ~ are[i]) next
            print name ":" at ": " why ": " line
        }' "$@"
}

# The patterns find what this tree once had (each line below was in it), and leave alone what
# it has now.
export SCAN_ROOT=$scratch
cat >"$scratch/was.sh" <<'EOF_WAS'
mtu=$(grep -o '"path_mtu": [0-9]*' "$out/write-send-64.json" | head -1 | awk '{print $2}')
        row=$(grep -E '"gib_per_s"|"size"' "$out/rc-loss-$rate.json" | awk -F': ' '/"size"/ { size = $2 + 0 } END { print }')
        ud=$(awk -F': ' '/"lost"/ { lost = $2 + 0 } END { print lost }' "$out/ud-loss-$rate.json")
    python3 -S -c '
    python3 - "$1" "$out/$1" <<'EOF'
    for f in "$out"/*/mesh.json; do [ -e "$f" ] && python3 -c 'import json' "$f"; done
    check "$name: $records records in the JSON" count_is "$records" "$dir/r.json" '^    \{$'
        count_is "$records" "$dir/r.json" '^        "provider": "rxe \(Soft-RoCE\)",$'
    [ "$(grep -A2 "^        \"$2\": {" "$1" | grep -c "^          \"path\": \"$3\",$")" = "$4" ]
check "rdma-bench across: records say so" has_line "$out/rdma-bench/records.json" '"lab_hosts": "2"'
rnr=$(grep -c '"meaning": "RNR NAK (timer 24)"' \
    "$scratch/other.json" || true)
#!/usr/bin/env python3
story=$(node -e '
loss=$(nodejs -e "$program" "$out/loss.json")
    done < <(perl -ne 'print if /"psn"/' "$trace")
x=$(cat "$f" | ruby -rjson -e 'puts JSON.parse(STDIN.read)["a"]')
#!/usr/bin/env node
n=$(jq '.records | length' <"$file")
[ "$(timeout 5 node read.js)" = 1 ]
EOF_WAS
cat >"$scratch/now.sh" <<'EOF_NOW'
# python3 is no longer needed here; the old code did grep '"x"' r.json
mtu=$("$bin/rdma-bench" records "$out/write-send-64.json" --get records/0/environment/path_mtu)
check "rc: RC loses no message" records_match 2 "$rc" result/receiver/lost '^0$'
check "rdma-bench across: one record per operation (6)" records_count_is 6 "$out/rdma-bench/records.json"
awk -v a="$g4" -v b="$base4k" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'
grep -q '^server: listening' "$work/server.out"
sed -n 's/^lab: faults: //p' "$work/loss-lab.err"
    --json "$out/lossy-write/records.json"
has_line "$scratch/host.md" '^\| 65536 \| [0-9.]+ \|'
node=$(uname -n)
chmod 600 "$node"
    mpirun --host "$list" -np 2 --map-by node \
    command -v npm >/dev/null && command -v node >/dev/null ||
echo "the lua-scripts folder and perl's are not read here"
EOF_NOW
scan "$scratch/was.sh" >"$scratch/was.found"
found=$(wc -l <"$scratch/was.found")
check "the scan finds all 19 lines the tree had or might have (found $found)" [ "$found" = 19 ]
check "... reporting the joined line at its first line" has_line "$scratch/was.found" '^was\.sh:11: reads a \.json file as text'
check "the scan passes the readers' own lines and text tools on other files" [ -z "$(scan "$scratch/now.sh")" ]

# The tree: tracked scripts and CMake files, docs/ (the site, its node_modules) and this test aside.
export SCAN_ROOT=$repo
mapfile -t files < <(cd "$repo" && git ls-files '*.sh' '*.bash' '*.awk' '*.py' '*CMakeLists.txt' '*.cmake' rdmalab |
    while IFS= read -r f; do [[ $f == docs/* || $f == */node_modules/* || $f == "$self" ]] || echo "$f"; done)
check "scripts and CMake files found (${#files[@]})" [ "${#files[@]}" -gt 50 ]
scan "${files[@]/#/$repo/}" >"$scratch/offending"
check "no script runs an interpreter or reads JSON by its text" [ ! -s "$scratch/offending" ]
while IFS= read -r line; do echo "    $line"; done <"$scratch/offending"
finish
