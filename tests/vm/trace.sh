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
# The story, read back with trace-merge --story (a line per fact, trace/story.hpp).
"$bin/trace-merge" --story "$scratch/write.json" >"$scratch/write.story" 2>&1
story=$scratch/write.story
check "trace rdma-write: the timeline has the format" has_line "$story" $'^format\trdmalab-trace\t2\t1$'
write=$'^post\thost2\tRDMA_WRITE\tRDMA WRITE First,RDMA WRITE Middle,RDMA WRITE Middle,RDMA WRITE Last\t'
check "trace rdma-write: the timeline has the packets" has_line "$story" "$write"
check "trace rdma-write: the timeline has the ack" has_line "$story" "$write"$'[^\t]*\thost1 Acknowledge\t'
check "trace rdma-write: the timeline has the completion" has_line "$story" "$write"$'[^\t]*\t[^\t]+\tok\tby-ack$'
check "trace rdma-write: the timeline has the receive" has_line "$story" $'^completion\thost1\tRECV\tok\thost2\thost2 SEND$'
check "trace rdma-write: the timeline has the step" has_line "$story" $'^step\thost[12]\t.*verified 4096 bytes'
check "trace rdma-write: the timeline has the timeline" has_line "$story" $'^timeline\tordered\tcomplete\t' ||
    grep -E '^(timeline|clock)' "$story"
check "trace rdma-write: the timeline has the environment" has_line "$story" $'^environment\tguest_kernel\t.'

# With the lab's faults passed through: the loss lesson under 30 % loss on the client's egress
# (32 WRITE packets: all arriving first time has odds of 0.7^32, about 1e-5). The causal checks
# must pass although lost packets never reached the sender's capture, every RC WRITE must own
# its packets and the ACK that completed it, and the file must name the fault.
rc=0
"$repo/trace/record.sh" --bin "$bin" --loss 2:30% -o "$scratch/loss.json" loss-and-retransmission \
    -n 8 -s 4K --datagrams 10 -- -n 8 -s 4K --datagrams 10 >"$scratch/loss.out" 2>"$scratch/loss.err" || rc=$?
check "trace loss: exits 0 (run verified, every causal check passed)" [ "$rc" = 0 ]
[ "$rc" = 0 ] || tail -n 8 "$scratch/loss.out" "$scratch/loss.err"
"$bin/trace-merge" --story "$scratch/loss.json" >"$scratch/loss.story" 2>&1
story=$scratch/loss.story
check "trace loss: the timeline has the fault" has_line "$story" $'^environment\tfaults\thost 2 egress loss 30%$'
check "trace loss: the timeline has the resent" has_line "$story" $'^resent\tRC\t[1-9]'
# Every one of the 8 WRITEs owns its 4 packets and the ACK that completed it.
check "trace loss: the timeline has the writes" count_is 8 "$story" $'^post\t[^\t]+\tRDMA_WRITE\t'
check "trace loss: ... each with its packets, completed by its ACK" count_is 8 "$story" \
    $'^post\t[^\t]+\tRDMA_WRITE\t[^,\t]+,[^,\t]+,[^,\t]+,[^,\t]+\t[^\t]+\t[^\t]+ [^\t]+\t[^\t]+\tby-ack$'

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
"$bin/trace-merge" --story "$scratch/ring.json" >"$scratch/ring.story" 2>&1
story=$scratch/ring.story
check "trace --ranks 3 ring-allreduce: the timeline has the hosts" count_is 3 "$story" $'^host\thost[123]\trank [012]$'
check "trace --ranks 3 ring-allreduce: ... host2 rank 1" has_line "$story" $'^host\thost2\trank 1$'
check "trace --ranks 3 ring-allreduce: the timeline has the captured" has_line "$story" $'^clock\t0\t0$'
check "trace --ranks 3 ring-allreduce: the timeline has the writes" count_is 12 "$story" $'^post\t[^\t]+\tRDMA_WRITE_WITH_IMM\t'
check "trace --ranks 3 ring-allreduce: the timeline has the arrivals" count_is 12 "$story" $'^completion\t[^\t]+\tRECV_RDMA_WITH_IMM\t'
for h in 1 2 3; do
    right=host$((h % 3 + 1)) left=host$(((h + 1) % 3 + 1))
    # Each rank's 4 WRITEs go to its right neighbour, one packet each, completed by their ACK;
    # its 4 arrivals come from its left neighbour.
    check "trace --ranks 3 ring-allreduce: host$h writes to $right" count_is 4 "$story" \
        $'^post\thost'$h$'\tRDMA_WRITE_WITH_IMM\t[^,\t]+\t'$right$'\t[^\t]+ [^\t]+\t[^\t]+\tby-ack$'
    check "trace --ranks 3 ring-allreduce: host$h hears from $left" count_is 4 "$story" \
        $'^completion\thost'$h$'\tRECV_RDMA_WITH_IMM\t[^\t]+\t'$left$'\t'
    check "trace --ranks 3 ring-allreduce: the timeline has the steps of host$h" has_line "$story" \
        $'^step\thost'$h$'\tstep 4 of 4 \\(all-gather\\) all in$'
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
