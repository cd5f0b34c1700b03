#!/usr/bin/env bash
# One lesson (or rdma-bench) under valgrind's memcheck, every one of its processes, in the lab: a
# CTest test of its own (memcheck.<NAME>, label memcheck, registered in tests/CMakeLists.txt;
# ./rdmalab test --sanitize runs them two at a time in its lab boot, on the default build:
# memcheck needs no instrumented binary, and an ASan binary cannot run under it).
#   memcheck.sh BUILD_BIN_DIR PORT NAME single PROGRAM [ARGS...]
#   memcheck.sh BUILD_BIN_DIR PORT NAME pair PROGRAM CLIENTS [SERVER_ARGS...] -- [CLIENT_ARGS...]
# NAME names the logs and the summary's lines (a program may be checked in two ways).
# Known one-time allocations of libibverbs, librdmacm and the rxe provider are suppressed by
# tests/sanitize/valgrind.supp, each entry explained there. A process passes with exit 0, 0 bytes
# definitely lost, 0 bytes indirectly lost and no memcheck error (invalid read or write,
# uninitialised value, bad free…). The logs go to $RDMALAB_MEMCHECK_OUT (default
# BUILD_BIN_DIR/../memcheck), one per process, and a line per process to its summary.tsv:
# program, side, exit code, errors, definite / indirect / possible lost bytes, suppressed, verdict.
set -uo pipefail
usage="usage: memcheck.sh BUILD_BIN_DIR PORT NAME single PROGRAM [ARGS...] | pair PROGRAM CLIENTS [SERVER_ARGS...] -- [CLIENT_ARGS...]"
bin=${1:?$usage}
port=${2:?$usage}
name=${3:?$usage}
kind=${4:?$usage}
program=${5:?$usage}
shift 5
if [ -z "${RDMALAB_IN_LAB:-}" ]; then
    echo "SKIP: needs an RDMA device: run it through the lab (./rdmalab test --sanitize)"
    exit 77
fi
addr=${RDMALAB_ADDR:?the lab sets RDMALAB_ADDR}
here=$(cd "$(dirname "$0")" && pwd)
out=${RDMALAB_MEMCHECK_OUT:-$bin/../memcheck}
mkdir -p "$out"
rm -f "$out/$name".*
# A lesson under memcheck runs 20–50 times slower (and two run at a time): every wait has room.
memcheck=(valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect,possible
          --errors-for-leak-kinds=definite,indirect --error-exitcode=99 --track-fds=no
          --suppressions="$here/valgrind.supp" --gen-suppressions=all --num-callers=30)
wait_s=120
failed=0

# The summary of one memcheck log: "errors definite indirect possible suppressed".
summarize() {
    awk '
        /ERROR SUMMARY:/ { errors = $4 }
        /definitely lost:/ { definite = $4 }
        /indirectly lost:/ { indirect = $4 }
        /possibly lost:/ { possible = $4 }
        /suppressed:/ && /bytes/ { suppressed = $3 }
        /All heap blocks were freed/ { definite = indirect = possible = 0 }
        END { gsub(",", "", definite); gsub(",", "", indirect); gsub(",", "", possible); gsub(",", "", suppressed)
              printf "%s %s %s %s %s\n", errors == "" ? "?" : errors, definite == "" ? 0 : definite,
                     indirect == "" ? 0 : indirect, possible == "" ? 0 : possible, suppressed == "" ? 0 : suppressed }' "$1"
}

report() {  # report SIDE RC LOG
    local side=$1 rc=$2 log=$3 errors definite indirect possible suppressed verdict=ok
    read -r errors definite indirect possible suppressed <<<"$(summarize "$log")"
    [ "$rc" = 0 ] && [ "$errors" = 0 ] && [ "$definite" = 0 ] && [ "$indirect" = 0 ] || verdict=FAIL
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$side" "$rc" "$errors" "$definite" \
        "$indirect" "$possible" "$suppressed" "$verdict" >>"$out/summary.tsv"
    printf '%-4s %-20s %-7s exit %-3s errors %-3s definitely %-6s indirectly %-6s possibly %-6s (suppressed %s)\n' \
        "$verdict" "$name" "$side" "$rc" "$errors" "$definite" "$indirect" "$possible" "$suppressed"
    if [ "$verdict" != ok ]; then
        failed=$((failed + 1))
        grep -E '^==[0-9]+== (Invalid|Conditional|Use of|Syscall param|Mismatched|[0-9,]+ bytes in)' "$log" | head -n 5
        grep -v '^==' "$log" | tail -n 3
    fi
}

case $kind in
single)
    # A single-process lesson (its peer is a second QP of the same process).
    rc=0
    timeout -k 5 $wait_s "${memcheck[@]}" --log-file="$out/$name.log" "$bin/$program" "$@" \
        >"$out/$name.out" 2>&1 || rc=$?
    report - $rc "$out/$name.log"
    ;;
pair)
    # The server, then CLIENTS clients once it has said its first line, every one under memcheck.
    clients=${1:?$usage}
    shift
    server_args=() client_args=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do server_args+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    client_args=("$@")
    timeout -k 5 $((wait_s * 3)) "${memcheck[@]}" --log-file="$out/$name.server.log" \
        "$bin/$program" server -p "$port" --accept-timeout $wait_s --timeout $wait_s \
        "${server_args[@]}" >"$out/$name.server.out" 2>&1 &
    spid=$! pids=() rcs=()
    for _ in $(seq 1200); do  # rdma-bench prints no "listening": its first line will do
        grep -qE '^server: ' "$out/$name.server.out" 2>/dev/null && break
        kill -0 $spid 2>/dev/null || break
        sleep 0.1
    done
    for ((i = 1; i <= clients; i++)); do
        timeout -k 5 $((wait_s * 3)) "${memcheck[@]}" --log-file="$out/$name.client$i.log" \
            "$bin/$program" client "$addr" -p "$port" --timeout $wait_s "${client_args[@]}" \
            >"$out/$name.client$i.out" 2>&1 &
        pids+=($!)
    done
    for ((i = 1; i <= clients; i++)); do
        rc=0
        wait "${pids[i - 1]}" || rc=$?
        rcs+=($rc)
    done
    rc=0
    wait $spid || rc=$?
    report server $rc "$out/$name.server.log"
    for ((i = 1; i <= clients; i++)); do
        report "client$([ "$clients" -gt 1 ] && echo " $i")" "${rcs[i - 1]}" "$out/$name.client$i.log"
    done
    ;;
*) echo "$usage" >&2; exit 2 ;;
esac
[ "$failed" = 0 ]
