# Native test: a function is one named job a reader takes in at once, so none in trace/, mesh/
# and bench/ (the tools and their libraries) is over 120 lines, from its signature's first line
# to its closing brace. The functions listed below are over it, each with the count it may not
# grow past and why it is not shorter yet: the list may only shrink (an entry whose function is
# gone, or now within the limit, fails here too: take it out). A function that grows past its
# limit fails here; divide it into named functions, each one job, and move what has no I/O into
# the tool's library with a unit test (docs/DEVELOPING.md).
# The count: each C++ file's code (comments, strings and character literals blanked, preprocessor
# lines skipped) read brace by brace. A '{' at namespace or class level opens a function when its
# declaration has a '(' outside a call's own parentheses and a signature ends there (')', a
# qualifier such as const or override, a trailing return type, or a constructor's member
# initializers); the matching '}' closes it. Namespaces, extern "C" blocks and class bodies are
# levels of their own; enums and initializers are no functions. The sample below proves it.
# Usage: bash tests/native/function-length.sh [BUILD_BIN_DIR]
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "SKIP: not a git checkout"; exit 77; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
source "$repo/tests/checks.sh"

limit=120
# What is left over the limit (each measured 2026-11-28):
#   bench/src/plot.cpp render_svg: one figure drawn top to bottom — the frame and title, the
#     grid and ticks, the spread bands, each series with its legend entry, the caption — on one
#     pair of scales (px, py) and one layout of a dozen constants every part reads; its parts
#     are marked by comments, and the SVG it writes is pinned by bench_plot_test.
declare -A over=([bench/src/plot.cpp:render_svg]=138)

# lengths FILE...: "LINES<TAB>FILE<TAB>NAME<TAB>FIRST-LAST" for every function defined in them
# (a member defined in its class: CLASS::NAME).
lengths() {
    awk '
        function reset() { text = ""; first = 0 }
        function top() { return kinds[depth] }
        FNR == 1 { depth = 0; kinds[0] = "scope"; classes[0] = ""; comment = 0; raw = ""; held = 0; reset() }
        {
            line = $0
            if (held) { held = line ~ /\\$/; next }  # a preprocessor line continued
            # The code alone: comments dropped, each string or character literal left as two quotes.
            code = ""
            for (i = 1; i <= length(line);) {
                c = substr(line, i, 1)
                if (raw != "") {  # inside a raw string R"DELIM( ... )DELIM"
                    j = index(substr(line, i), raw)
                    if (j == 0) break
                    i += j - 1 + length(raw); raw = ""; code = code "\"\""; continue
                }
                if (comment) {
                    j = index(substr(line, i), "*/")
                    if (j == 0) break
                    i += j + 1; comment = 0; continue
                }
                two = substr(line, i, 2)
                if (two == "//") break
                if (two == "/*") { comment = 1; i += 2; continue }
                if (two == "R\"" && (i == 1 || substr(line, i - 1, 1) !~ /[[:alnum:]_]/)) {
                    rest = substr(line, i + 2); p = index(rest, "(")
                    raw = ")" substr(rest, 1, p - 1) "\""; i += 2 + p; continue
                }
                if (c == "\"" || c == "'\''") {
                    for (i++; i <= length(line) && substr(line, i, 1) != c; i++)
                        if (substr(line, i, 1) == "\\") i++
                    i++; code = code c c; continue
                }
                code = code c; i++
            }
            if (code ~ /^[ \t]*#/) { held = code ~ /\\$/; next }
            for (k = 1; k <= length(code); k++) {
                c = substr(code, k, 1)
                if (c == "{") {
                    kind = "other"
                    if (top() == "scope") {
                        t = text; sub(/^[ \t]+/, "", t); sub(/[ \t]+$/, "", t)
                        opened = t; gsub(/[^(]/, "", opened); closed = t; gsub(/[^)]/, "", closed)
                        head = t; sub(/\(.*/, "", head)
                        if (t ~ /^(inline[ \t]+)?namespace([ \t]|$)/ || t ~ /^extern[ \t]*""$/) kind = "scope"
                        else if (t ~ /^(template[ \t]*<.*>[ \t]*)?(struct|class|union)[ \t]/) kind = "class"
                        else if (t ~ /^enum([ \t]|$)/ || length(opened) != length(closed) || index(t, "(") == 0) kind = "other"
                        else if (t ~ /[)}>]$/ || t ~ /\)[^(]*->/ || t ~ /[^[:alnum:]_](const|override|final|noexcept|mutable)$/)
                            kind = "function"
                    }
                    depth++
                    if (kind == "class") {
                        name = t; sub(/[ \t]*[:{].*/, "", name); sub(/.*[ \t]/, "", name)
                        kinds[depth] = "scope"; classes[depth] = name; reset()
                    } else if (kind == "scope") {
                        kinds[depth] = "scope"; classes[depth] = classes[depth - 1]; reset()
                    } else if (kind == "function") {
                        kinds[depth] = "function"; start[depth] = first
                        sub(/[ \t]+$/, "", head); sub(/.*[ \t*&]/, "", head)
                        fname[depth] = (classes[depth - 1] != "" ? classes[depth - 1] "::" : "") head
                    } else {
                        kinds[depth] = "other"
                        if (top() == "other" && kinds[depth - 1] == "scope") text = text "{"
                    }
                } else if (c == "}") {
                    if (kinds[depth] == "function")
                        printf "%d\t%s\t%s\t%d-%d\n", FNR - start[depth] + 1, FILENAME, fname[depth], start[depth], FNR
                    was = kinds[depth]
                    depth--
                    if (top() == "scope") {
                        if (was == "other") text = text "}"  # an initializer: the declaration goes on
                        else reset()
                    }
                } else if (top() == "scope") {
                    if (c == ";") { reset(); continue }
                    if (c == ":" && text ~ /^[ \t]*(public|private|protected)[ \t]*$/) { reset(); continue }
                    if (c !~ /[ \t]/ && first == 0) first = FNR
                    text = text c
                }
            }
            if (top() == "scope" && text != "") text = text " "
        }' "$@"
}

part count
# The sample holds one function of each kind the counter must tell apart, each named for its
# length, and braces in every place that must not count.
cat >"$scratch/sample.cpp" <<'EOF'
// A sample: each function's name says its length. { in a comment
#include <string>
#define TWICE(x) \
    {            \
        x;       \
    }
namespace outer {
namespace {
const char* kBraces = "{{{ \" }";  // a string's braces
const char kOpen = '{', kQuote = '\'';
/* a comment's { spanning
   two lines } */
int lines3() {
    return kOpen;
}
}  // namespace
struct Holder : std::string {
    int value{0};
    Holder() : value{1} {
        value = 2;
    }
    int lines1() const { return value; }

  public:
    std::string lines4() const {
        return R"x(}} ")x"
               "}";
    }
};
enum class Kind { kA, kB };
template <typename T>
T lines8(T t) {
    if (t) {
        return t;
    }
    auto twice = [](int x) { return x * 2; };
    return T{twice(1)};
}
auto lines3_trailing() -> std::pair<int, int> {
    return {1, 2};
}
int lines4_two_line_signature(int a,
                              int b) {
    return a + b;
}
extern "C" int lines3_c() {
    return 0;
}
const int kTable[] = {1, 2, 3};
const std::string kMade = std::string({'a', 'b'});
}  // namespace outer
EOF
lengths "$scratch/sample.cpp" >"$scratch/sample.out"
found=""
while IFS=$'\t' read -r lines file name span; do found+="$name:$lines "; done <"$scratch/sample.out"
expected="lines3:3 Holder::Holder:3 Holder::lines1:1 Holder::lines4:4 lines8:8 lines3_trailing:3 lines4_two_line_signature:4 lines3_c:3 "
check "the counter reads the sample's 8 functions and their lengths (read: $found)" [ "$found" = "$expected" ]

part lengths
mapfile -t files < <(cd "$repo" && git ls-files 'trace/*.cpp' 'trace/*.hpp' 'mesh/*.cpp' 'mesh/*.hpp' \
    'bench/*.cpp' 'bench/*.hpp' 'bench/*.h' 'bench/*.cu' 'mesh/*.h' 'trace/*.h')
(cd "$repo" && lengths "${files[@]}") >"$scratch/lengths"
functions=0
declare -A seen=()
: >"$scratch/too-long"
while IFS=$'\t' read -r lines file name span; do
    functions=$((functions + 1))
    key=$file:$name
    allowed=${over[$key]:-$limit}
    [ -n "${over[$key]:-}" ] && seen[$key]=$lines
    [ "$lines" -le "$allowed" ] || echo "    $file:${span%-*}: $name is $lines lines, at most $allowed" >>"$scratch/too-long"
done <"$scratch/lengths"
check "no function in trace/, mesh/ and bench/ is over $limit lines but those listed, none past its count" \
    [ ! -s "$scratch/too-long" ]
while IFS= read -r line; do echo "$line"; done <"$scratch/too-long"
for key in "${!over[@]}"; do
    check "${key/:/ }, listed over $limit lines, still is (${seen[$key]:-not found}, at most ${over[$key]})" \
        [ "${seen[$key]:-0}" -gt "$limit" ]
done

part inventory
check "found the C++ files of trace/, mesh/ and bench/ (${#files[@]})" [ "${#files[@]}" -ge 30 ]
check "found their functions ($functions)" [ "$functions" -ge 300 ]
finish
