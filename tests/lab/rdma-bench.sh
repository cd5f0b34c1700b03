# Lab test: rdma-bench runs every operation × transport it supports, in both modes, briefly, and
# its records say what it counted: RC loses nothing, UC/UD report the receiver's count, moved
# data was verified, fetch-add's counter equals the adds. Then every knob, sweeps, duration, and
# the refusals (bad input, UD over the MTU, a window the device cannot hold, mismatched server settings).
source "$(dirname "$0")/lib.sh" "$@"

part rc
# ---- Every op × transport, bandwidth and latency.
bench_ok rc 12 -- --op write,read,send,write-imm,fetch-add,cmp-swap -c RC -m bw,lat -n 200 -s 256
rc=$scratch/rc/r.json
check "rc: RC loses no message (send, write-imm: 200 of 200 counted at the server)" records_match 2 "$rc" result/receiver/lost '^0$'
check "rc: the server counted 200 messages for send and write-imm" records_match 2 "$rc" result/receiver/messages '^200$'
check "rc: moved data verified (write, read, send, write-imm)" records_match 4 "$rc" result/verified '^true$'
check "rc: fetch-add's remote counter equals the 200 adds" record_has "$rc" result/atomic_counter '^200$'
check "rc: 6 latency records with percentiles" records_match 6 "$rc" result/latency/p999_us '^[0-9.e+-]+$'
check "rc: READ and atomics report the whole round trip" records_match 3 "$rc" result/latency/reported_as '^round trip$'
check "rc: atomics move 8 bytes" records_match 4 "$rc" config/size '^8$'

part uc-ud
bench_ok uc 6 -- --op write,send,write-imm -c UC -m bw,lat -n 200 -s 512
check "uc: the server's count is reported for send and write-imm" records_match 2 "$scratch/uc/r.json" result/receiver '^\{'
check "uc: received + lost is reported" records_match 2 "$scratch/uc/r.json" result/receiver/lost '^[0-9]+$'

bench_ok ud 2 -- --op send -c UD -m bw,lat -n 300 -s 1024
check "ud: the receiver's count and losses are in the record" record_has "$scratch/ud/r.json" result/receiver/lost '^[0-9]+$'
check "ud: the table shows the receiver's rate" has_line "$scratch/ud/client.out" '^send UD bw 1024 B .* [0-9.]+ +[0-9]+ +[0-9.]+ +[0-9.]+$'

part api-ex
# ---- The extended posting API (--api ex): every operation, post lists, UD, ping-pongs.
bench_ok api-ex 6 -- --api ex --op write,read,send,write-imm,fetch-add,cmp-swap -n 200 -s 64
check "api-ex: every record says the client posted with the extended API" records_match 6 "$scratch/api-ex/r.json" config/api '^ex$'
check "api-ex: moved data verified (write, read, send, write-imm)" records_match 4 "$scratch/api-ex/r.json" result/verified '^true$'
check "api-ex: fetch-add's counter equals the adds" record_has "$scratch/api-ex/r.json" result/atomic_counter '^200$'
bench_ok api-ex-more 4 --api ex -- --api ex --op send -c RC,UD -m bw,lat -l 1 -n 200 -s 64
bench_ok api-ex-list 1 -- --api ex --op write -l 4 -n 200 -s 64
check "api-ex-list: a post list through ibv_wr_complete, verified" record_has "$scratch/api-ex-list/r.json" result/verified '^true$'
bench api-ex-inline -- --api ex --op write -s 64 -I 64 -n 10
check "api-ex-inline: refused on rxe (its inline path sends no payload)" has_line "$scratch/api-ex-inline/client.out" \
    "^rdma-bench: --api ex with inline data \(-I\): rxe's ibv_wr_set_inline_data sends no payload"

part knobs
# ---- Knobs and sweeps: SRQ, shared CQ, events, post lists, signal interval, QPs, inline, SGEs.
bench_ok knobs 8 -- --op send -s 64 -q 3 -t 32 -l 4 -Q 8 --srq off,on --shared-cq off,on --events off,on -n 400
check "knobs: 3 QPs × 400 sends, all counted, each configuration" records_match 8 "$scratch/knobs/r.json" result/receiver/messages '^1200$'
bench_ok write-knobs 4 -- --op write -s 64 -I 0,64 --sge 1,2 -n 300
check "write-knobs: inline and SGE values are recorded" records_match 2 "$scratch/write-knobs/r.json" config/inline '^64$'
part sweep-duration
bench_ok sweep 5 -- --op write -s 32..512 -t 16 -n 100
check "sweep: sizes 32..512 in order" has_line "$scratch/sweep/client.out" '^write RC bw 512 B window 16'
bench_ok duration 1 -- --op write-imm -s 128 -D 0.5
# Posting stops at 0.5 s and the time runs to the last completion, which may come a little
# before the stop is noticed: at least half of it, with no upper line (the drain is the machine's
# speed, under ASan and emulation, not the rule).
check "duration: measured for about 0.5 s (at least 0.25)" record_has "$scratch/duration/r.json" result/seconds \
    '^(0\.(2[5-9]|[3-9])|[1-9])[0-9]*(\.[0-9]*)?$'
check "duration: the server counted every write-imm" record_has "$scratch/duration/r.json" result/receiver/lost '^0$'

part refusals
# ---- Refusals: one line, non-zero exit, before anything is measured.
expect_failure bad-op 2 "unknown 'scatter'" "$bin/rdma-bench" client "$addr" --op scatter
expect_failure ud-write 2 'UD carries only send' "$bin/rdma-bench" client "$addr" --op write -c UD
expect_failure atomic-size 2 'fetch-add moves exactly 8 bytes' "$bin/rdma-bench" client "$addr" --op fetch-add -s 64
expect_failure signal-window 2 'exceeds the window' "$bin/rdma-bench" client "$addr" -t 8 -Q 16
expect_failure bad-range 2 'both ends must be powers of two' "$bin/rdma-bench" client "$addr" -s 30..100

part device-limits
# UD over the path MTU: the client refuses once it knows the path (lab MTU 1024).
start_lesson_server "$scratch/ud-mtu" rdma-bench
expect_failure ud-over-mtu 1 'UD message of 2048 B exceeds the path MTU \(1024 B\)' \
    "$bin/rdma-bench" client "$addr" --op send -c UD -s 2048
finish_server "$scratch/ud-mtu"
check "ud-over-mtu: the server is told and exits 1" rc_is "$scratch/ud-mtu/server.rc" 1

start_lesson_server "$scratch/window" rdma-bench
expect_failure window-over-max 1 "window 65536 × 1 QP\(s\) needs a CQ of 65536 entries; rxe0 allows 32767" \
    "$bin/rdma-bench" client "$addr" -t 65536
finish_server "$scratch/window"

part mismatch
# Mismatched settings: a server started with -s 64 refuses a client that asks for 128.
bench mismatch -s 64 -- -s 128 -n 10
check "mismatch: client exits 1" rc_is "$scratch/mismatch/client.rc" 1
check "mismatch: server exits 1" rc_is "$scratch/mismatch/server.rc" 1
check "mismatch: the client names the mismatch" has_line "$scratch/mismatch/client.out" \
    '^rdma-bench: peer: the client asks for size 128, but this server was started with size 64$'
check "mismatch: the server names it too" has_line "$scratch/mismatch/server.out" \
    '^rdma-bench: the client asks for size 128, but this server was started with size 64$'

part plot
# plot: the records become an SVG with the environment in its caption.
timeout 60 "$bin/rdma-bench" plot "$scratch/sweep/r.json" -o "$scratch/sweep.svg" >"$scratch/plot.out" 2>&1
echo $? >"$scratch/plot.rc"
check "plot: exits 0" rc_is "$scratch/plot.rc" 0
check "plot: the figure says it is Soft-RoCE" has_line "$scratch/sweep.svg" 'Soft-RoCE \(rxe0, software, not a NIC\)'
finish
