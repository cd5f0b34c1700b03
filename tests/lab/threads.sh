# Lab test: threads — four layouts of threads, QPs and CQs (a shared QP under the application's
# lock and under the provider's alone, a QP per thread with one poller, a QP and CQ per thread),
# each measured with 1, 2 and 4 threads; every thread's slice of the target verified.
source "$(dirname "$0")/lib.sh" "$@"
out=$scratch/threads.out
timeout -k 5 120 "$bin/threads" -n 300 >"$out" 2>&1
echo $? >"$scratch/rc"
check "exits 0" rc_is "$scratch/rc" 0
check "four layouts, a rate for 1, 2 and 4 threads each" count_is 4 "$out" \
    '^(one QP, application lock|one QP, provider lock only|QP per thread, one CQ \+ poller|QP and CQ per thread) +[0-9]+ +[0-9]+ +[0-9]+$'
check "the CPUs available are stated" has_line "$out" '^threads: .*; [0-9]+ CPUs online; 300 WRITEs of 64 B per thread'
check "every thread's slice verified" has_line "$out" "^threads: every thread's slice of the target verified \(256 bytes\)"
[ $failures -eq 0 ] || cat "$out"
expect_failure threads-bad 2 'threads: --max-threads' "$bin/threads" --max-threads 3
finish
