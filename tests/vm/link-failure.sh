# Test of the link-failure lesson across the lab's wire: host 1's link goes down while host 2
# writes, so the WRITE must fail with IBV_WC_RETRY_EXC_ERR at about (retry_cnt + 1) × 4.096 µs ×
# 2^timeout; then a SEND without a receive fails with IBV_WC_RNR_RETRY_EXC_ERR after the RNR
# NAKs the capture must show; both times the QP is in ERROR and recovers, and every round's data
# is verified.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$repo/build/bin}
source "$repo/tests/checks.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

rc=0
# Host 1's link goes down on a signal: host 2 gives it once its client is writing and waiting.
client="sleep 2; $bin/link-failure client \$RDMALAB_ADDR_1 | tee \$RDMALAB_SHARED/client.out &
    until grep -q 'until the link dies' \$RDMALAB_SHARED/client.out 2>/dev/null; do sleep 0.05; done
    touch \$RDMALAB_SHARED/link-down-1; wait \$!"
"$repo/lab/lab.sh" --hosts 2 --timeout 300 --capture "$scratch/lf.pcap" --link-down 1@signal+4 \
    --on 1 "$bin/link-failure server" --on 2 "set -o pipefail; $client" \
    >"$scratch/out" 2>"$scratch/err" || rc=$?
check "both sides exit 0" [ "$rc" = 0 ]
check "the client writes until the link dies, predicting 0.268 s" \
    has_line "$scratch/out" '^\[host2\] client: writing every 20 ms until the link dies .* = 0\.268 s$'
line=$(grep -m 1 'failed with IBV_WC_RETRY_EXC_ERR' "$scratch/out" || true)
check "the dead link ends in IBV_WC_RETRY_EXC_ERR" [ -n "$line" ]
ratio=$(sed -nE 's/.*ratio ([0-9.]+).*/\1/p' <<<"$line")
measured retry_exceeded_over_predicted "${ratio:-}"
# Measured / predicted: 0.82-1.04 in docs/link-failure.md's six runs, 0.76-1.01 in ten runs of
# this test on 2026-11-28 (tests/repeat-checks.sh, five beside two busy loops): 0.76-1.04, a width
# of 0.28. The lines sit outside by more than that: 0.45 (a QP with one retry instead of three
# waits half as long) and 2. The first wait may start on an earlier packet's timer.
check "…at the predicted time (measured / predicted = ${ratio:-?}, within 0.45…2)" \
    awk -v r="${ratio:-0}" 'BEGIN { exit !(r >= 0.45 && r <= 2) }'
check "the QP is in ERROR after it" has_line "$scratch/out" '^\[host2\] client: after the error ibv_query_qp says the QP is ERROR$'
check "recovery waits out the outage (TCP carries the request once the link is back)" \
    has_line "$scratch/out" '^\[host2\] client: the QP is RTS again \([0-9.]+ s to reach the server'
line=$(grep -m 1 'failed with IBV_WC_RNR_RETRY_EXC_ERR' "$scratch/out" || true)
check "a SEND with no receive ends in IBV_WC_RNR_RETRY_EXC_ERR, the QP in ERROR" \
    bash -c "grep -q 'the QP is ERROR$' <<<'$line'"
ratio=$(sed -nE 's/.*ratio ([0-9.]+).*/\1/p' <<<"$line")
measured rnr_wait_over_predicted "${ratio:-}"
# The wait itself is recorded, not judged: the guest arms each RNR timer from jiffies (HZ 250,
# 4 ms a tick), which lag the clock the lesson measures with whenever the emulated vCPU is held up
# (1.16-1.21 in ten runs on 2026-11-28, 0.89 in a loaded run of 2026-11-27). The packets below show
# that the sender waited and tried again: rnr_retry + 1 tries, each answered by an RNR NAK.
for round in 1 2 3; do
    check "round $round verified by the server" has_line "$scratch/out" "^\[host1\] server: round $round: verified 4096 bytes"
done
rnr=$("$bin/rdma-wire" "$scratch/lf.pcap" --count --where 'aeth.meaning=RNR NAK (timer 24)' 2>&1)
# The SEND that met no receive: host 2 sent it once and again rnr_retry (3) times, each try
# answered by an RNR NAK naming the timer; the packets, not the clock, show the sender waited.
sends=$("$bin/rdma-wire" "$scratch/lf.pcap" --count --where src=198.51.100.2 --where 'opcode_name~^SEND' 2>&1)
sent_again=$("$bin/rdma-wire" "$scratch/lf.pcap" --count --where src=198.51.100.2 --where 'opcode_name~^SEND' \
    --where sent_again=true 2>&1)
measured rnr_naks "${rnr:-}"
measured rnr_send_packets "${sends:-}"
measured rnr_send_sent_again "${sent_again:-}"
check "the capture shows rnr_retry + 1 = 4 RNR NAKs, each naming timer 24 ($rnr)" [ "${rnr:-0}" = 4 ]
check "host 2 sent the SEND again rnr_retry = 3 times, after the first try ($sent_again)" [ "${sent_again:-0}" = 3 ]
check "the lab stated the fault" grep -qx 'lab: faults: host 1 link down on a signal for 4 s' "$scratch/err"
grep -E 'failed with|RTS again' "$scratch/out" | sed 's/^/    /'
[ $failures -eq 0 ] || { cat "$scratch/out" "$scratch/err" | tail -40; }
finish
