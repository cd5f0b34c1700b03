# Lab test: the compact fault matrix (tests/faults/matrix.sh compact): servers killed mid-run
# (send-recv, rdma-bench), srq losing one of three clients, and a rogue peer
# (tests/tools/rogue-peer) with a foreign rkey, a truncated message and an unknown protocol. Every cell must hold; the kernel's RDMA objects must be as before. The whole
# matrix is ./rdmalab faults (and part of ./rdmalab test --sanitize).
source "$(dirname "$0")/lib.sh" "$@"
rc=0
bash "$(dirname "$0")/../faults/matrix.sh" "$bin" "$scratch/faults.tsv" compact >"$scratch/out" 2>&1 || rc=$?
check "the matrix script exits 0" [ "$rc" = 0 ]
check "7 results (6 cells and the resource check)" count_is 7 "$scratch/faults.tsv" '.'
check "every cell held" count_is 7 "$scratch/faults.tsv" $'\tok$'
for cell in 'send-recv	server-killed' 'rdma-bench	server-killed' 'srq	client-killed' \
    'rdma-write	rogue: server advertises an rkey' 'rdma-write	rogue: client sends a truncated' \
    'rdma-bench	rogue: client speaks protocol 99' '(all cells)	resources'; do
    check "cell ran: ${cell//$'\t'/ × }" has_line "$scratch/faults.tsv" "^${cell//(/\\(}"
done
check "a killed server is reported by the completion or rdma_cm event that told the client" \
    has_line "$scratch/faults.tsv" $'^send-recv\tserver-killed\t.*RDMA_CM_EVENT_DISCONNECTED'
check "srq names the client it lost and serves the other two" \
    has_line "$scratch/faults.tsv" $'^srq\tclient-killed\t.*2 of 2 other clients exit 0; server: client 1 .* lost'
check "nothing was written past the rogue server's region" \
    bash -c "! grep -q 'bytes written past the region' '$scratch/out'"
grep -E '^(ok|FAIL) ' "$scratch/out" | sed 's/^/    /'
[ $failures -eq 0 ] || cat "$scratch/out"
finish
