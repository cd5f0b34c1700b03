# Lab test: send-invalidate — a WRITE through a type 2 window (verified), then SEND WITH
# INVALIDATE naming the window's rkey: the receive completion's flag is reported (rxe: absent, and
# said so), and a WRITE with the old rkey after it fails with a remote access error.
source "$(dirname "$0")/lib.sh" "$@"
out=$scratch/send-invalidate.out
timeout -k 5 60 "$bin/send-invalidate" >"$out" 2>&1
echo $? >"$scratch/rc"
check "exits 0" rc_is "$scratch/rc" 0
check "the WRITE through the window, verified" has_line "$out" '^send-invalidate: the initiator wrote 4096 bytes through the window; verified'
check "the receive completion's IBV_WC_WITH_INV reported, or its absence said" has_line "$out" \
    "^send-invalidate: the target's receive completion (: IBV_WC_WITH_INV, invalidated_rkey 0x|has no IBV_WC_WITH_INV \(wc_flags 0x[0-9a-f]+\): rxe0 does not report)"
check "the revoked rkey refused" has_line "$out" \
    '^send-invalidate: the WRITE with rkey 0x[0-9a-f]+ after the invalidation: remote access error \(IBV_WC_REM_ACCESS_ERR\) — the peer revoked the window'
[ $failures -eq 0 ] || cat "$out"
finish
