#!/usr/bin/env bash
# Every lesson's server and client (and rdma-bench's), each under valgrind's memcheck, in the lab:
#   tests/sanitize/valgrind.sh BUILD_BIN_DIR OUT_DIR
# (./rdmalab test --sanitize runs it in its lab boot, on the default build: memcheck needs no
# instrumented binary, and an ASan binary cannot run under it.) Known one-time allocations of
# libibverbs, librdmacm and the rxe provider are suppressed by tests/sanitize/valgrind.supp,
# each entry explained there. A program passes with exit 0, 0 bytes definitely lost, 0 bytes
# indirectly lost and no memcheck error (invalid read or write, uninitialised value, bad free…).
# OUT_DIR gets one memcheck log per process and summary.tsv: program, side, exit code, errors,
# definitely / indirectly / possibly lost bytes, suppressed, verdict. Exits 1 if any failed.
set -uo pipefail
bin=${1:?usage: valgrind.sh BUILD_BIN_DIR OUT_DIR}
out=${2:?usage: valgrind.sh BUILD_BIN_DIR OUT_DIR}
addr=${RDMALAB_ADDR:?run it in the lab}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
rm -f "$out"/*.log "$out/summary.tsv"
# A lesson under memcheck runs 20–50 times slower: every wait is given room.
memcheck=(valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect,possible
          --errors-for-leak-kinds=definite,indirect --error-exitcode=99 --track-fds=no
          --suppressions="$here/valgrind.supp" --gen-suppressions=all --num-callers=30)
wait_s=120
failed=0
port=19400

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

report() {  # report PROGRAM SIDE RC LOG
    local program=$1 side=$2 rc=$3 log=$4 errors definite indirect possible suppressed verdict=ok
    read -r errors definite indirect possible suppressed <<<"$(summarize "$log")"
    [ "$rc" = 0 ] && [ "$errors" = 0 ] && [ "$definite" = 0 ] && [ "$indirect" = 0 ] || verdict=FAIL
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$program" "$side" "$rc" "$errors" "$definite" \
        "$indirect" "$possible" "$suppressed" "$verdict" >>"$out/summary.tsv"
    printf '%-4s %-20s %-7s exit %-3s errors %-3s definitely %-6s indirectly %-6s possibly %-6s (suppressed %s)\n' \
        "$verdict" "$program" "$side" "$rc" "$errors" "$definite" "$indirect" "$possible" "$suppressed"
    if [ "$verdict" != ok ]; then
        failed=$((failed + 1))
        grep -E '^==[0-9]+== (Invalid|Conditional|Use of|Syscall param|Mismatched|[0-9,]+ bytes in)' "$log" | head -n 5
        grep -v '^==' "$log" | tail -n 3
    fi
}

# vg_pair NAME CLIENTS [SERVER_ARGS...] -- [CLIENT_ARGS...]: NAME's server and CLIENTS clients,
# every one under memcheck; the server gets its "server: listening" line out first.
vg_pair() {
    local name=$1 clients=$2
    shift 2
    local server_args=() client_args=() i
    while [ $# -gt 0 ] && [ "$1" != -- ]; do server_args+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    client_args=("$@")
    port=$((port + 1))
    local program=$name subcommand_server=server subcommand_client=client
    timeout -k 5 $((wait_s * 3)) "${memcheck[@]}" --log-file="$out/$name.server.log" \
        "$bin/$program" $subcommand_server -p $port --accept-timeout $wait_s --timeout $wait_s \
        "${server_args[@]}" >"$out/$name.server.out" 2>&1 &
    local spid=$! pids=() rcs=()
    for i in $(seq 1200); do  # rdma-bench prints no "listening": its first line will do
        grep -qE '^server: ' "$out/$name.server.out" 2>/dev/null && break
        kill -0 $spid 2>/dev/null || break
        sleep 0.1
    done
    for ((i = 1; i <= clients; i++)); do
        timeout -k 5 $((wait_s * 3)) "${memcheck[@]}" --log-file="$out/$name.client$i.log" \
            "$bin/$program" $subcommand_client "$addr" -p $port --timeout $wait_s "${client_args[@]}" \
            >"$out/$name.client$i.out" 2>&1 &
        pids+=($!)
    done
    for ((i = 1; i <= clients; i++)); do
        local rc=0
        wait "${pids[i - 1]}" || rc=$?
        rcs+=($rc)
    done
    local rc=0
    wait $spid || rc=$?
    report "$name" server $rc "$out/$name.server.log"
    for ((i = 1; i <= clients; i++)); do
        report "$name" "client$([ "$clients" -gt 1 ] && echo " $i")" "${rcs[i - 1]}" "$out/$name.client$i.log"
    done
}

rc=0
timeout -k 5 $wait_s "${memcheck[@]}" --log-file="$out/devices.log" "$bin/devices" >"$out/devices.out" 2>&1 || rc=$?
report devices - $rc "$out/devices.log"
# The single-process lessons (their peer is a second QP of the same process).
vg_single() {  # vg_single NAME [ARGS...]
    local name=$1 rc=0
    shift
    timeout -k 5 $wait_s "${memcheck[@]}" --log-file="$out/$name.log" "$bin/$name" "$@" >"$out/$name.out" 2>&1 || rc=$?
    report "$name" - $rc "$out/$name.log"
}
vg_single async-events
vg_single registration-cost --max-size 1M --repeat 1
vg_single send-invalidate
vg_single threads -n 50 --max-threads 2
vg_single proxy no-nic -n 100 --in-flight 4
vg_pair rdma-write 1 -s 64K -- -s 64K
vg_pair rdma-read 1 -s 64K -- -s 64K
vg_pair send-recv 1 -n 4 -- -n 4
vg_pair write-imm 1 --
vg_pair scatter-gather 1 --
vg_pair post-api 1 --
vg_pair cm-simple 1 --
vg_pair atomics 2 --clients 2 -n 100 -- -n 100
vg_pair rendezvous 1 --
vg_pair credit-ring 1 --
vg_pair completion-events 1 -n 100 -- -n 100
vg_pair solicited-events 1 --
vg_pair selective-signaling 1 --
vg_pair srq 2 --clients 2 --
vg_pair ud 1 --
vg_pair multicast 1 --
vg_pair memory-windows 1 --
vg_pair qp-state-machine 1 --
vg_pair uc 1 --
vg_pair error-recovery 1 --
vg_pair on-the-wire 1 --
vg_pair loss-and-retransmission 1 --
vg_pair gpu-write 1 --
vg_pair gpu-read 1 --
vg_pair proxy 1 -n 20 -- -n 20 --in-flight 4
vg_pair rdma-bench 1 -- --op write -s 4K -n 200 --warmup 10 --no-progress
echo "valgrind: $(grep -c $'\tok$' "$out/summary.tsv") processes clean, $failed failed"
[ "$failed" = 0 ]
