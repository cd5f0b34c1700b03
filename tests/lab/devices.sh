# Lab test: the devices lesson lists the lab's rxe device with its RoCE v2 GIDs.
source "$(dirname "$0")/lib.sh" "$@"
out=$scratch/devices.out
"$bin/devices" >"$out" 2>&1
echo $? >"$scratch/devices.rc"
check "devices exits 0" rc_is "$scratch/devices.rc" 0
check "lists a device with its transport" has_line "$out" '^rxe[0-9]+: transport '
check "port is active on Ethernet" has_line "$out" 'port 1: active, link layer Ethernet'
check "shows the MTU" has_line "$out" 'MTU active [0-9]+ / max 4096'
check "shows the IPv4-mapped RoCE v2 GID" has_line "$out" "::ffff:$addr +RoCE v2"
check "shows READ and atomic limits" has_line "$out" 'max_qp_rd_atom [1-9]'
check "says what it demonstrated" has_line "$out" '^devices: listed 1 device'
expect_failure devices-unknown 1 "^devices: no RDMA device named 'nosuch' \(available: rxe" "$bin/devices" -d nosuch
expect_failure devices-garbage 2 'run with --help' "$bin/devices" --frobnicate
[ $failures -eq 0 ] || cat "$out"
finish
