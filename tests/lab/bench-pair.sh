# Lab test: `./rdmalab bench ARGS` (bench/run-pair.sh) exits 0 when the run succeeded and
# non-zero when it failed, and leaves no rdma-bench server behind either way.
source "$(dirname "$0")/lib.sh" "$@"
run_pair=$(cd "$(dirname "$0")/../.." && pwd)/bench/run-pair.sh
bin=$(cd "$bin" && pwd)
no_server_left() { ! pgrep -f '[r]dma-bench server' >/dev/null; }

rc=0
(cd "$scratch" && timeout -k 5 120 bash "$run_pair" "$bin" --op write,send -s 64 -n 50 --warmup 5 --no-progress \
    --json pair.json) >"$scratch/ok.out" 2>"$scratch/ok.err" || rc=$?
check "a successful run exits 0" [ "$rc" = 0 ]
check "and printed its rows" has_line "$scratch/ok.out" '^send RC bw 64 B '
check "and wrote its records where it was asked to" records_count_is 2 "$scratch/pair.json"
check "no server left behind after success" no_server_left
[ "$rc" = 0 ] || cat "$scratch/ok.err"

rc=0
start=$SECONDS
timeout -k 5 120 bash "$run_pair" "$bin" --op bogus >"$scratch/bad.out" 2>"$scratch/bad.err" || rc=$?
check "a refused client exits non-zero (2)" [ "$rc" = 2 ]
check "and says why" has_line "$scratch/bad.err" 'bogus'
# RDMALAB_TIME_SCALE: ./rdmalab test --sanitize runs everything 2-3 times slower (ASan).
check "without waiting out the server's accept limit" [ $((SECONDS - start)) -lt $((15 * ${RDMALAB_TIME_SCALE:-1})) ]
check "no server left behind after failure" no_server_left
finish
