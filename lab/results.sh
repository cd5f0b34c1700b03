#!/usr/bin/env bash
# Records a run's results in the committed results/ folder, which the site's "Measured results"
# page (docs/results.md, through docs/results.data.mjs) renders when it is built. Each file is
# TSV: `# ` lines first (what it is, and for a whole run its date, command and machine), then a
# row of column names, then the rows.
#   lab/results.sh run KIND RUN.tsv COMMAND     a whole run replaces results/KIND.tsv
#       faults    the fault matrix's cells (tests/faults/matrix.sh, link-flap.sh, mesh-hosts.sh)
#       valgrind  memcheck per process (tests/sanitize/memcheck.sh's summary.tsv)
#   lab/results.sh machine                      the machine, in one line (for the rows below)
#   lab/results.sh rows KIND ROWS.tsv           rows replace those of results/KIND.tsv with the
#                                               same first column; new ones are appended
#       fuzz      ./rdmalab fuzz --record: a row per target run
#       timings   ./rdmalab timings --record: boot, tour, suite
# RDMALAB_RESULTS_DIR names another folder (the tests of this script use one).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${RDMALAB_RESULTS_DIR:-$repo/results}
usage="usage: lab/results.sh run faults|valgrind RUN.tsv COMMAND | rows fuzz|timings ROWS.tsv | machine"
mode=${1:?$usage}

# The machine, in one line: cores, memory, distribution, kernel, and whether the lab has KVM.
machine() {
    local accel="no KVM (emulation)"
    [ -w /dev/kvm ] && accel=KVM
    printf '%s cores, %s, %s, kernel %s, %s' "$(nproc)" \
        "$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)" \
        "$(. /etc/os-release && echo "$PRETTY_NAME")" "$(uname -r)" "$accel"
}
[ "$mode" = machine ] && { machine; echo; exit 0; }
kind=${2:?$usage}
tsv=${3:?$usage}
[ -s "$tsv" ] || { echo "results: $tsv is empty or missing" >&2; exit 1; }
mkdir -p "$dir"
out=$dir/$kind.tsv

case "$mode:$kind" in
    run:faults|run:valgrind)
        command=${4:?$usage}
        # Every row must have the columns the page shows (a stray line would shift a table).
        columns=5
        header=$'program\tfault\texpected\tobserved\tresult'
        what="The fault matrix (tests/faults): one row per cell."
        if [ "$kind" = valgrind ]; then
            columns=9
            header=$'program\tprocess\texit\terrors\tdefinitely lost\tindirectly lost\tpossibly lost\tsuppressed\tresult'
            what="valgrind's memcheck, one row per process (tests/sanitize/memcheck.sh)."
        fi
        bad=$(awk -F'\t' -v n=$columns 'NF != n { c++ } END { print c + 0 }' "$tsv")
        [ "$bad" = 0 ] || { echo "results: $tsv has $bad row(s) without $columns columns" >&2; exit 1; }
        {
            echo "# $what Written by $command --record"
            echo "# (lab/results.sh); the site renders it (docs/results.md)."
            echo "# date: $(date -u +%Y-%m-%d)"
            echo "# command: $command"
            echo "# commit: $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
            echo "# machine: $(machine)"
            echo "$header"
            cat "$tsv"
        } >"$out.new"
        mv "$out.new" "$out" ;;
    rows:fuzz|rows:timings)
        [ -s "$out" ] || { echo "results: $out is missing (it holds the column names)" >&2; exit 1; }
        # The new rows take the place of the old rows with the same key; the rest stay in order.
        awk -F'\t' -v rows="$tsv" '
            BEGIN { while ((getline line < rows) > 0) { split(line, f, "\t"); new[f[1]] = line; order[++n] = f[1] } }
            /^#/ || !header++ { print; next }
            $1 in new { print new[$1]; done[$1] = 1; next }
            { print }
            END { for (i = 1; i <= n; i++) if (!(order[i] in done)) print new[order[i]] }' "$out" >"$out.new"
        mv "$out.new" "$out" ;;
    *) echo "results: $usage" >&2; exit 2 ;;
esac
echo "results: $(grep -vc '^#' "$out" | awk '{ print $1 - 1 }') rows in ${out#"$repo"/}"
