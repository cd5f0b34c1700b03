#!/usr/bin/env bash
# Writes a generated table into README.md's Reliability section, between
# <!-- generated: KIND begin --> and <!-- generated: KIND end --> (the lines around are kept).
#   tests/faults/readme.sh README.md faults FAULTS.tsv      the fault matrix (tests/faults/matrix.sh)
#   tests/faults/readme.sh README.md valgrind SUMMARY.tsv   memcheck per program (tests/sanitize/valgrind.sh)
set -euo pipefail
readme=${1:?usage: readme.sh README.md faults|valgrind FILE.tsv}
kind=${2:?usage}
tsv=${3:?usage}
[ -s "$tsv" ] || { echo "readme.sh: $tsv is empty or missing" >&2; exit 1; }
grep -q "^<!-- generated: $kind begin -->$" "$readme" || { echo "readme.sh: $readme has no '$kind' block" >&2; exit 1; }
table=$(mktemp)
trap 'rm -f "$table" "$table.new"' EXIT
case $kind in
    faults)
        {
            echo "| program | fault | expected | observed | |"
            echo "| --- | --- | --- | --- | --- |"
            # Pipes inside a cell would end it: escaped.
            sed -e 's/|/\\|/g' -e 's/\t/ | /g' -e 's/^/| /' -e 's/$/ |/' -e 's/| ok |$/| ✓ |/' -e 's/| FAIL |$/| ✗ |/' "$tsv"
            echo
            awk -F'\t' '{ kind = $2; sub(/:.*/, "", kind); n[kind]++; if ($5 == "ok") ok[kind]++ }
                END { printf "Survived: "; sep = ""
                      for (k in n) { printf "%s%s %d of %d", sep, k, ok[k], n[k]; sep = "; " }
                      print "." }' "$tsv"
        } >"$table" ;;
    valgrind)
        {
            echo "| program | process | exit | errors | definitely lost | indirectly lost | possibly lost | suppressed | |"
            echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
            sed -e 's/\t/ | /g' -e 's/^/| /' -e 's/$/ |/' -e 's/| ok |$/| ✓ |/' -e 's/| FAIL |$/| ✗ |/' "$tsv"
        } >"$table" ;;
    *) echo "readme.sh: unknown kind '$kind' (faults, valgrind)" >&2; exit 1 ;;
esac
awk -v begin="<!-- generated: $kind begin -->" -v end="<!-- generated: $kind end -->" -v table="$table" '
    $0 == begin { print; while ((getline line < table) > 0) print line; skipping = 1; next }
    $0 == end { skipping = 0 }
    !skipping { print }' "$readme" >"$table.new"
cat "$table.new" >"$readme"
echo "readme.sh: $kind table written into $readme ($(grep -c . "$tsv") rows)"
