# Lab test: registration-cost — ibv_reg_mr timed against size on untouched and resident pages, in
# 4 KiB and transparent huge pages; a registration cache serves 99 of 100 sends; fork() leaves
# the parent's registered page alone; on-demand paging asked for, then tried. Timings under
# emulation are noise-prone: the test checks what is exact (the rows, the cache hits, the fork,
# the ODP answer) and one robust ordering.
source "$(dirname "$0")/lib.sh" "$@"
out=$scratch/registration-cost.out
timeout -k 5 120 "$bin/registration-cost" --max-size 1M --repeat 3 >"$out" 2>&1
echo $? >"$scratch/rc"
check "exits 0" rc_is "$scratch/rc" 0
check "a row per size, 4K to 1M" count_is 3 "$out" '^ +(4096|65536|1048576) +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$'
check "untouched pages cost more than resident ones at 1 MiB" \
    has_line "$out" '^registration-cost: untouched pages cost ([2-9]|[1-9][0-9]+)\.[0-9]+× resident'
check "the cache answers 99 of 100" has_line "$out" '^registration-cost: the same through the cache \(99 hits\)'
check "huge pages measured or their absence said" \
    has_line "$out" '^registration-cost: (huge pages registered [0-9.]+× faster|no transparent huge pages here)'
check "fork: the kernel's answer printed" has_line "$out" '^registration-cost: ibv_is_fork_initialized: IBV_FORK_'
check "fork: the parent's registered page is unchanged" has_line "$out" "^registration-cost: the parent's page, pinned by lkey 0x[0-9a-f]+, is unchanged"
# ODP: the device's answer printed; a device without IBV_ODP_SUPPORT (rxe in the lab's kernel)
# must refuse the registration, one with it must register.
check "odp: the device's odp_caps printed" has_line "$out" '^registration-cost: odp_caps general_caps 0x[0-9a-f]+ \(IBV_ODP_SUPPORT (set|clear)\)'
if has_line "$out" 'IBV_ODP_SUPPORT clear'; then
    check "odp: no support, so the ON_DEMAND registration is refused" \
        has_line "$out" '^registration-cost: ibv_reg_mr with ON_DEMAND: refused, E[A-Z]+ '
else
    check "odp: supported, so the ON_DEMAND registration succeeds" \
        has_line "$out" '^registration-cost: ibv_reg_mr with ON_DEMAND: registered'
fi
[ $failures -eq 0 ] || cat "$out"
expect_failure bad-size 2 'registration-cost: --max-size' "$bin/registration-cost" --max-size 3K
finish
