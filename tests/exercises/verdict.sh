#!/usr/bin/env bash
# One program of the exercises' self-test (CTest's exercises.<exercise>.<variant>): the verdict
# exercises.run wrote for it — the reference passes every rule, the starter is rejected, each
# mutant is rejected by the rule its diff names (with that rule's hint) — and the judge's lines.
#   tests/exercises/verdict.sh SELFTEST_DIR EXERCISE VARIANT
set -uo pipefail
dir=${1:?usage: verdict.sh SELFTEST_DIR EXERCISE VARIANT}
exercise=${2:?usage}
variant=${3:?usage}
line=$(awk -F'\t' -v e="$exercise" -v v="$variant" '$1 == e && $2 == v' "$dir/verdicts.tsv" 2>/dev/null)
[ -n "$line" ] || { echo "no verdict for $exercise $variant in $dir/verdicts.tsv (did exercises.run run?)"; exit 1; }
IFS=$'\t' read -r _ _ expected said verdict <<<"$line"
echo "$exercise $variant: expected $expected; $said"
sed 's/^/    /' "$dir/$exercise/$variant.judged" 2>/dev/null
[ "$verdict" = ok ]
