# ./rdmalab trace, from the host: rdma-write across the lab's two hosts with --trace and a
# capture inside each guest, merged into one timeline. The run must pass trace-merge's causal
# checks and hold the story the rdma-write chapter tells: the WRITE's post, its First/Middle/Last
# packets, the ACK, the completion, the "done" SEND and the server's receive completion. Then the
# loss lesson traced under the lab's --loss (passed through), a ring allreduce over three hosts
# (--ranks 3), and bad input: one line, exit 2.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$repo/build/bin}
source "$repo/tests/checks.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

rc=0
"$repo/trace/record.sh" --bin "$bin" -o "$scratch/write.json" rdma-write -s 4K -- -s 4K \
    >"$scratch/record.out" 2>"$scratch/record.err" || rc=$?
check "trace rdma-write: exits 0 (run verified, every causal check passed)" [ "$rc" = 0 ]
[ "$rc" = 0 ] || tail -n 8 "$scratch/record.out" "$scratch/record.err"
for name in "every packet arrives after it was sent" "every WR is posted before its first packet leaves" \
    "every send completion follows the ACK that produced it" "every receive completion follows its message's last packet"; do
    check "trace rdma-write: ok $name" grep -qF "ok   $name" "$scratch/record.out"
done
# The story, read back with node (the site's own runtime) from the merged file.
story=$(node -e '
const t = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const out = [];
if (t.format === "rdmalab-trace" && t.version === 2 && t.packet_schema_version === 1) out.push("format");
const write = t.events.find(e => e.event === "post_send" && e.opcode === "RDMA_WRITE");
if (write && write.host === "host2") {
  const names = write.packets.map(i => t.packets[i].opcode_name).join(",");
  if (names === "RDMA WRITE First,RDMA WRITE Middle,RDMA WRITE Middle,RDMA WRITE Last") out.push("packets");
  const ack = t.packets[write.acked_by];
  if (ack && ack.opcode_name === "Acknowledge" && ack.from === "host1") out.push("ack");
  const done = t.events[write.completion];
  if (done && done.event === "completion" && done.ok && done.caused_by === write.acked_by) out.push("completion");
}
const send = t.events.find(e => e.event === "post_send" && e.opcode === "SEND" && e.host === "host2");
const recv = t.events.find(e => e.event === "completion" && e.opcode === "RECV" && e.host === "host1");
if (send && recv && t.packets[recv.caused_by].wr === send.id) out.push("receive");
if (t.events.some(e => e.event === "step" && /verified 4096 bytes/.test(e.text))) out.push("step");
let ordered = true;
for (let i = 1; i < t.timeline.length; i++) if (t.timeline[i].t_ns < t.timeline[i - 1].t_ns) ordered = false;
if (ordered && t.timeline.length === t.events.length + 2 * t.packets.filter(p => p.rx_ns !== null && p.tx_ns !== null).length) out.push("timeline");
if (t.meta && t.meta.environment && t.meta.environment.guest_kernel) out.push("environment");
console.log(out.join(" "));' "$scratch/write.json" 2>&1)
for part in format packets ack completion receive step timeline environment; do
    check "trace rdma-write: the timeline has the $part" grep -qw "$part" <<<"$story"
done

# With the lab's faults passed through: the loss lesson under 30 % loss on the client's egress
# (32 WRITE packets: all arriving first time has odds of 0.7^32, about 1e-5). The causal checks
# must pass although lost packets never reached the sender's capture, every RC WRITE must own
# its packets and the ACK that completed it, and the file must name the fault.
rc=0
"$repo/trace/record.sh" --bin "$bin" --loss 2:30% -o "$scratch/loss.json" loss-and-retransmission \
    -n 8 -s 4K --datagrams 10 -- -n 8 -s 4K --datagrams 10 >"$scratch/loss.out" 2>"$scratch/loss.err" || rc=$?
check "trace loss: exits 0 (run verified, every causal check passed)" [ "$rc" = 0 ]
[ "$rc" = 0 ] || tail -n 8 "$scratch/loss.out" "$scratch/loss.err"
loss=$(node -e '
const t = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const out = [];
if (t.meta.environment.faults === "host 2 egress loss 30%") out.push("fault");
if (t.packets.some(p => p.sent_again && p.transport === "RC")) out.push("resent");
const writes = t.events.filter(e => e.event === "post_send" && e.opcode === "RDMA_WRITE");
if (writes.length === 8 && writes.every(w => w.packets && w.packets.length === 4 && w.acked_by !== undefined &&
    t.events[w.completion] && t.events[w.completion].caused_by === w.acked_by)) out.push("writes");
console.log(out.join(" "));' "$scratch/loss.json" 2>&1)
for part in fault resent writes; do
    check "trace loss: the timeline has the $part" grep -qw "$part" <<<"$loss"
done

# A collective over three hosts (--ranks 3): one ring allreduce of 3 KiB per rank, 1 KiB
# chunks. Each host's capture must hold all its own packets (the star's centre captures on its
# bridge), the clocks must all be placed, and the ring must be in the file as the lesson runs
# it: each rank's 4 WRITEs WITH IMMEDIATE go to its right neighbour, one packet each, each
# acknowledged and completed by that ACK; each rank's 4 arrivals come from its left neighbour.
rc=0
"$repo/trace/record.sh" --bin "$bin" --ranks 3 -o "$scratch/ring.json" ring-allreduce -s 3K \
    --segment 1K --slots 2 -n 1 >"$scratch/ring.out" 2>"$scratch/ring.err" || rc=$?
check "trace --ranks 3 ring-allreduce: exits 0 (every rank verified, every causal check passed)" [ "$rc" = 0 ]
[ "$rc" = 0 ] || tail -n 8 "$scratch/ring.out" "$scratch/ring.err"
ring=$(node -e '
const t = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const out = [];
const hosts = ["host1", "host2", "host3"];
if (t.hosts.map(h => h.name).join() === hosts.join() && t.meta.roles.host2 === "rank 1") out.push("hosts");
if (t.clock.unaligned.length === 0 && t.packets.every(p => p.tx_ns !== null && p.rx_ns !== null)) out.push("captured");
const right = (h) => hosts[(hosts.indexOf(h) + 1) % 3], left = (h) => hosts[(hosts.indexOf(h) + 2) % 3];
const writes = t.events.filter(e => e.event === "post_send" && e.opcode === "RDMA_WRITE_WITH_IMM");
if (writes.length === 12 && hosts.every(h => writes.filter(w => w.host === h).length === 4) &&
    writes.every(w => w.packets && w.packets.length === 1 && t.packets[w.packets[0]].to === right(w.host) &&
      w.acked_by !== undefined && t.events[w.completion] && t.events[w.completion].caused_by === w.acked_by)) out.push("writes");
const arrivals = t.events.filter(e => e.event === "completion" && e.opcode === "RECV_RDMA_WITH_IMM");
if (arrivals.length === 12 && arrivals.every(e => e.caused_by !== undefined && t.packets[e.caused_by].from === left(e.host))) out.push("arrivals");
if (hosts.every(h => t.events.some(e => e.event === "step" && e.host === h && e.text === "step 4 of 4 (all-gather) all in"))) out.push("steps");
console.log(out.join(" "));' "$scratch/ring.json" 2>&1)
for part in hosts captured writes arrivals steps; do
    check "trace --ranks 3 ring-allreduce: the timeline has the $part" grep -qw "$part" <<<"$ring"
done

# Bad input: one line, exit 2, nothing written.
merge=$bin/trace-merge
printf 'not json\n' >"$scratch/bad.jsonl"
echo '[]' >"$scratch/none.json"
rc=0
"$merge" -o "$scratch/x.json" --host host1 198.51.100.1 "$scratch/bad.jsonl" "$scratch/none.json" \
    >/dev/null 2>"$scratch/bad.err" || rc=$?
check "trace-merge: a malformed trace is refused (exit 2)" [ "$rc" = 2 ]
check "trace-merge: in one line" count_is 1 "$scratch/bad.err" .
check "trace-merge: naming the file" has_line "$scratch/bad.err" 'bad\.jsonl'
check "trace-merge: and writes nothing" [ ! -e "$scratch/x.json" ]
rc=0
"$repo/trace/record.sh" --bin "$bin" -o "$scratch/x.json" no-such-lesson >/dev/null 2>"$scratch/usage.err" || rc=$?
check "trace: an unknown lesson is a usage error (exit 2)" [ "$rc" = 2 ]
check "trace: which says so" has_line "$scratch/usage.err" 'no such lesson'
# The lab's faults pass through; a link-down signal needs the line that gives it, and back.
rc=0
"$repo/trace/record.sh" --bin "$bin" --link-down 1@signal -o "$scratch/x.json" link-failure \
    >/dev/null 2>"$scratch/signal.err" || rc=$?
check "trace: --link-down I@signal without --signal-on is a usage error (exit 2)" [ "$rc" = 2 ]
check "trace: which says what is missing" has_line "$scratch/signal.err" 'needs --signal-on TEXT'
rc=0
"$repo/trace/record.sh" --bin "$bin" --signal-on 'x' -o "$scratch/x.json" link-failure \
    >/dev/null 2>"$scratch/signal.err" || rc=$?
check "trace: --signal-on without a link-down signal is a usage error (exit 2)" [ "$rc" = 2 ]
rc=0
"$repo/trace/record.sh" --bin "$bin" --ranks 5 -o "$scratch/x.json" ring-allreduce \
    >/dev/null 2>"$scratch/ranks.err" || rc=$?
check "trace: --ranks 5 is a usage error (exit 2)" [ "$rc" = 2 ]
check "trace: which names the range" has_line "$scratch/ranks.err" 'from 2 to 4'
finish
