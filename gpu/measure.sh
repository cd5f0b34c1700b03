#!/usr/bin/env bash
# One command on a GPU machine: gpu-memory-bench's full run, kept as a JSON record and a Markdown
# table side by side in gpu/results/<mem>-<host>-<UTC time>.{json,md}. Builds nothing: the
# binary is taken from $RDMALAB_BIN (default build/bin; a gpu/device-bundle.sh folder's bin/
# works too, its lib/ is used).
#   gpu/measure.sh [--mem cuda:0] [--out DIR] [--allow-host] [-- TOOL_OPTIONS...]
# TOOL_OPTIONS go to gpu-memory-bench as they are (e.g. -- --reps 50 --sizes 4K..1G).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: gpu/measure.sh [--mem cuda[:N]|rocm[:N]] [--out DIR] [--allow-host] [-- TOOL_OPTIONS...]"
bad_input() { echo "measure.sh: $* ($usage)" >&2; exit 2; }

mem=cuda:0
out=$repo/gpu/results
allow_host=false
while [ $# -gt 0 ]; do
    case $1 in
        --mem) [ $# -ge 2 ] || bad_input "--mem needs a value"; mem=$2; shift 2 ;;
        --out) [ $# -ge 2 ] || bad_input "--out needs a folder"; out=$2; shift 2 ;;
        --allow-host) allow_host=true; shift ;;
        --) shift; break ;;
        -h|--help) echo "$usage"; exit 0 ;;
        *) bad_input "unknown argument '$1'" ;;
    esac
done
# The results folder is for GPUs: host memory measures memcpy, and would sit beside them as if
# it were a card.
if [ "$mem" = host ] && ! $allow_host; then
    bad_input "--mem host measures memcpy, not a GPU; add --allow-host to record it anyway"
fi

bin_dir=${RDMALAB_BIN:-$repo/build/bin}
tool=$bin_dir/gpu-memory-bench
if [ ! -x "$tool" ]; then
    echo "measure.sh: no $tool (build it: cmake --build build --target gpu-memory-bench; or set RDMALAB_BIN)" >&2
    exit 1
fi
# A device bundle carries the libraries this machine may lack next to bin/.
if [ -x "$bin_dir/../run" ] && [ -d "$bin_dir/../lib" ]; then
    export LD_LIBRARY_PATH=$(cd "$bin_dir/../lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi

mkdir -p "$out"
node=$(uname -n)
name=${mem//:/}-${node%%.*}-$(date -u +%Y%m%dT%H%M%SZ)
# The tool checks every option and writes both files only after a complete, verified run.
"$tool" --mem "$mem" --json "$out/$name.json" --markdown "$out/$name.md" "$@"
echo "measure.sh: results in $out/$name.json and $out/$name.md"
