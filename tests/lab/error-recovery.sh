# Lab test: error-recovery breaks an RC connection twice on purpose (wrong rkey, receiver not
# ready), shows the error statuses, ERROR state and flushes, and recovers through RESET each time.
source "$(dirname "$0")/lib.sh" "$@"

lesson=error-recovery

part default
SECONDS=0
pair_expect default $lesson \
    '^server: verified 3 rounds of RDMA WRITE \+ SEND; the connection was broken and recovered twice' \
    '^client: verified recovery: IBV_WC_REM_ACCESS_ERR \(then 3 WRs flushed\) and IBV_WC_RNR_RETRY_EXC_ERR' --
# A hang guard, not a speed line (the lesson's own waits are milliseconds): scaled where everything
# runs slower (RDMALAB_TIME_SCALE: ASan).
check "default: takes under 15 s" [ $SECONDS -lt $((15 * ${RDMALAB_TIME_SCALE:-1})) ]
out=$scratch/default
check "default: wrong rkey -> IBV_WC_REM_ACCESS_ERR" has_line "$out/client.out" \
    '^client:   completion of the WRITE with the wrong rkey \(wr_id 10\): IBV_WC_REM_ACCESS_ERR "remote access error"'
check "default: the QP is then in ERROR" has_line "$out/client.out" \
    '^client: after IBV_WC_REM_ACCESS_ERR: ibv_query_qp says the QP is ERROR'
check "default: 3 WRs posted afterwards are flushed" \
    count_is 3 "$out/client.out" 'completion of a WRITE posted after the error \(wr_id 1[1-3]\): IBV_WC_WR_FLUSH_ERR'
check "default: no RNR -> IBV_WC_RNR_RETRY_EXC_ERR" has_line "$out/client.out" \
    '^client:   completion of the SEND nobody can receive \(wr_id 20\): IBV_WC_RNR_RETRY_EXC_ERR'
check "default: ERROR again after the RNR" has_line "$out/client.out" \
    '^client: after IBV_WC_RNR_RETRY_EXC_ERR: ibv_query_qp says the QP is ERROR'
check "default: the responder's QP stays RTS after an RNR" has_line "$out/server.out" \
    "^server: after the client's SEND that found no receive: ibv_query_qp says the QP is RTS"
for side in server client; do
    check "default: $side resets twice" count_is 2 "$out/$side.out" "^$side: [A-Z]+ -> RESET: ibv_modify_qp\(IBV_QP_STATE\)$"
    check "default: $side brings the QP to RTS three times" \
        count_is 3 "$out/$side.out" "^$side:     ibv_query_qp: qp_state RTS$"
    check "default: $side verifies 3 rounds" count_is 3 "$out/$side.out" "^$side: round [1-3]: "
done
# Each recovery exchanges fresh PSNs: three different ones from the client.
declare -A psns=()
while IFS= read -r line; do
    [[ $line =~ ^client:\ sent\ QPN\ 0x[0-9a-f]+,\ PSN\ (0x[0-9a-f]+) ]] && psns[${BASH_REMATCH[1]}]=1
done <"$out/client.out"
check "default: three distinct client PSNs" [ ${#psns[@]} -eq 3 ]

part 1mib-8
pair_expect 1MiB-8 $lesson '^server: verified 3 rounds' '^client: verified recovery: .*\(then 8 WRs flushed\)' \
    -s 1M -- -s 1M -n 8
check "1MiB-8: 8 flushed" count_is 8 "$scratch/1MiB-8/client.out" IBV_WC_WR_FLUSH_ERR
check "1MiB-8: 1 MiB per round" has_line "$scratch/1MiB-8/server.out" '^server: round 3: verified 1048576 bytes'

part refusals
pair_run "$scratch/too-big" $lesson --timeout 1 -- -s 8K
check "too-big: client exits 1" rc_is "$scratch/too-big/client.rc" 1
check "too-big: client says why" has_line "$scratch/too-big/client.out" "server's buffer holds 4096 bytes; cannot write 8192"
check "too-big: server exits 1" rc_is "$scratch/too-big/server.rc" 1

expect_failure flushed-zero 2 'iters' "$bin/$lesson" client "$addr" -n 0
finish
