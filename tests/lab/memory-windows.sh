# Lab test: memory-windows — a type 2 window opens only part of a region, with its own rights,
# until it is invalidated; a type 1 window bound with ibv_bind_mw allows READ and refuses WRITE;
# every deliberate failure is a remote access error on the client.
source "$(dirname "$0")/lib.sh" "$@"

# windows_checked NAME WINDOW_BYTES: the lines of each step, on both sides.
windows_checked() {
    local name=$1 window=$2
    local server=$scratch/$1/server.out client=$scratch/$1/client.out
    local refused='was refused: IBV_WC_REM_ACCESS_ERR'
    check "$name: the MR itself grants no remote access, the window does" has_line "$server" \
        "^server: \[1\] window rkey 0x[0-9a-f]+ \(READ and WRITE\) .* the MR's own rkey 0x0 grants nothing"
    check "$name: [1] client wrote and read back the window" has_line "$client" \
        "^client: \[1\] wrote $window bytes through the window and read them back, verified"
    check "$name: [1] server verified the window, the rest untouched" has_line "$server" \
        "^server: \[1\] verified the $window bytes the client wrote through the window; the rest"
    # One byte past the window: refused (as the IB spec requires), or let through by a device
    # that checks only the MR's range (Soft-RoCE's rxe does). Both sides must tell one story.
    if has_line "$client" "^client: \[1\] an RDMA WRITE of one byte just past the window $refused"; then
        check "$name: [1] server: the byte past the window is untouched" has_line "$server" \
            '^server: \[1\] the byte past the window is still zero'
    else
        check "$name: [1] client: the device let the write past the window through" has_line "$client" \
            '^client: \[1\] NOTE: an RDMA WRITE of one byte just past the window SUCCEEDED: .* does not enforce'
        check "$name: [1] server: that byte changed" has_line "$server" \
            '^server: \[1\] NOTE: the byte past the window CHANGED'
    fi
    check "$name: [2] client read the READ-only window" has_line "$client" \
        "^client: \[2\] read the window's $window bytes, verified"
    check "$name: [2] a WRITE through the READ-only window is refused" has_line "$client" \
        "^client: \[2\] an RDMA WRITE through the READ-only window $refused"
    check "$name: [2] server: the READ-only window is unchanged" has_line "$server" \
        '^server: \[2\] the READ-only window is unchanged'
    check "$name: [3] server invalidated the window" has_line "$server" \
        '^server: \[3\] invalidated window rkey 0x[0-9a-f]+'
    check "$name: [3] the invalidated rkey is refused" has_line "$client" \
        "^client: \[3\] an RDMA READ with the invalidated rkey $refused"
    # A type 1 window: bound with ibv_bind_mw (rxe does), READ allowed, WRITE refused.
    check "$name: [4] server bound a type 1 window with ibv_bind_mw" has_line "$server" \
        '^server: \[4\] type 1 window rkey 0x[0-9a-f]+ \(READ only\) bound with ibv_bind_mw'
    check "$name: [4] client read the type 1 window" has_line "$client" \
        "^client: \[4\] read the window's $window bytes, verified"
    check "$name: [4] a WRITE through the READ-only type 1 window is refused" has_line "$client" \
        "^client: \[4\] an RDMA WRITE through the READ-only type 1 window $refused"
    check "$name: [4] server: the type 1 window is unchanged" has_line "$server" \
        '^server: \[4\] the READ-only type 1 window is unchanged'
}

part default
pair_expect mw-default memory-windows '^server: verified: each window' '^client: verified: each window' --
windows_checked mw-default 2048
part 64k
pair_expect mw-64K memory-windows '^server: verified: each window' '^client: verified: each window' \
    -s 64K -- -s 64K
windows_checked mw-64K 32768
[ $failures -eq 0 ] || cat "$scratch"/mw-*/*.out

part refusals
# The client bounds the window it is granted by its own -s.
pair_run "$scratch/mw-small-client" memory-windows -s 64K --timeout 3 -- -s 4K
check "mw-small-client: client exits 1" rc_is "$scratch/mw-small-client/client.rc" 1
check "mw-small-client: client says why" has_line "$scratch/mw-small-client/client.out" \
    "^memory-windows: the server's window has 32768 bytes, more than this client's -s 4096"

expect_failure mw-size-small 2 'the region needs at least 4 bytes' "$bin/memory-windows" server -s 2
finish
