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
# rdma-read, 4 KiB: one READ Request; the server's NIC answers with First/Middle/Last responses.
"$repo/trace/record.sh" --bin "$bin" -o "$out/rdma-read.json" rdma-read -s 4K -- -s 4K
# send-recv, 3 messages: each SEND consumes one of the receives the server posted first.
"$repo/trace/record.sh" --bin "$bin" -o "$out/send-recv.json" send-recv -n 3 -- -n 3
# write-imm, 2 parts of 2 KiB: each WRITE WITH IMMEDIATE ends in a receive completion.
"$repo/trace/record.sh" --bin "$bin" -o "$out/write-imm.json" write-imm -n 2 -s 2K -- -n 2 -s 2K
