#!/usr/bin/env bash
# The recorded traces the site's chapters play (docs/public/traces/*.json), each regenerated
# from a fresh run in the lab by ./rdmalab trace; each file carries its environment in "meta".
#   trace/site-traces.sh [BUILD_BIN_DIR]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$repo/build/bin}
out=$repo/docs/public/traces
mkdir -p "$out"
# rdma-write, 4 KiB: at the lab's path MTU of 1024 bytes, a First, two Middle and a Last packet.
"$repo/trace/record.sh" --bin "$bin" -o "$out/rdma-write.json" rdma-write -s 4K -- -s 4K
