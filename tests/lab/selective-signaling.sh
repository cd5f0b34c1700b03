# Lab test: selective-signaling deadlocks (bounded, and says so) when it signals less often than
# the send-queue depth, then delivers every write when it signals often enough.
source "$(dirname "$0")/lib.sh" "$@"

part signaling
pair_expect signaling-default selective-signaling \
    '^server: verified the buffer after 10000 RDMA WRITEs: every slot holds the last write' \
    '^client: the server verified its buffer after all 10000 RDMA WRITEs' --
out=$scratch/signaling-default/client.out
check "the deadlock: the send queue fills with unsignaled WRs" \
    has_line "$out" '^client: after ([0-9]+) WRs the send queue is full: unsignaled WRs hold all \1 slots'
check "the deadlock: no completion comes, and the wait is bounded" \
    has_line "$out" '^client: waited 1 s for a completion to free a slot: 0 arrived.* deadlock'
check "the provider's answer to one WR too many is reported" \
    has_line "$out" '^client: one more ibv_post_send anyway: (ENOMEM|rxe[0-9]+ accepted it)'
check "the cure signals every depth/2" has_line "$out" '^client: 10000 RDMA WRITEs of 64 bytes, IBV_SEND_SIGNALED on every 31$'
check "completions polled = signaled WRs, far fewer than WRs posted" \
    has_line "$out" '^client: 10000 RDMA WRITEs posted, ([0-9]{2,3}) signaled; \1 completions polled'
check "the server saw the stalled connection end" \
    has_line "$scratch/signaling-default/server.out" '^server: connection 1: the client stalled'

# Other numbers: 500 writes of 256 bytes, signaled every 8th and the last: 62 + 1 completions.
pair_expect signaling-small selective-signaling '^server: verified the buffer after 500 RDMA WRITEs' \
    '^client: the server verified its buffer after all 500 RDMA WRITEs' \
    -s 256 -- -s 256 -n 500 --sq-depth 16 --signal-every 8
check "small: 63 completions for 500 WRs" \
    has_line "$scratch/signaling-small/client.out" '^client: 500 RDMA WRITEs posted, 63 signaled; 63 completions polled'

part refusals
# Asked to signal too rarely: both sides fail, quickly, and say why.
start=$(date +%s)
pair_run "$scratch/too-rare" selective-signaling -- -n 200 --sq-depth 16 --signal-every 100
check "too-rare: client exits 1" rc_is "$scratch/too-rare/client.rc" 1
check "too-rare: client says deadlock" has_line "$scratch/too-rare/client.out" \
    '^selective-signaling: deadlock: the send queue \(depth [0-9]+\) filled with unsignaled WRs, and signaling every 100 never frees a slot'
check "too-rare: server exits 1" rc_is "$scratch/too-rare/server.rc" 1
check "too-rare: server says nothing was verified" has_line "$scratch/too-rare/server.out" '^server: nothing to verify'
check "too-rare: over within 15 s" [ $(($(date +%s) - start)) -lt $((15 * ${RDMALAB_TIME_SCALE:-1})) ]
[ $failures -eq 0 ] || cat "$scratch"/too-rare/*.out

expect_failure depth-too-large 1 '--sq-depth 1000000 is more than rxe[0-9]+ allows \(max_qp_wr [0-9]+, max_cqe [0-9]+\)' \
    "$bin/selective-signaling" client "$addr" --sq-depth 1000000
expect_failure signal-zero 2 'signal-every' "$bin/selective-signaling" client "$addr" --signal-every 0
expect_failure depth-zero 2 'sq-depth' "$bin/selective-signaling" client "$addr" --sq-depth 0
finish
