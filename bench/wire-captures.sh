#!/usr/bin/env bash
# Records the wire lessons' runs across two lab hosts, captured, as references the site shows:
#   OUT_DIR/operations: the on-the-wire lesson with no fault — its prediction, the capture's
#     ladder (tshark's RoCE v2 dissector), the packets as JSON, the two compared, a ladder (SVG)
#   OUT_DIR/loss-lesson: loss-and-retransmission under 10 % loss on host 2's egress — both
#     sides' output and the capture's summary (NAKs, packets sent again)
# each with the environment it came from. OUT_DIR defaults to bench/results/wire.
#   bench/wire-captures.sh BUILD_BIN_DIR [OUT_DIR]     (./rdmalab bench-wire-captures)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:?usage: wire-captures.sh BUILD_BIN_DIR [OUT_DIR]}
results=${2:-$repo/bench/results/wire}
out=$results/operations
mkdir -p "$out" "$results/loss-lesson"
work=$(mktemp -d "$repo/build/wire-captures.XXXXXX")  # the guests write here
trap 'rm -rf "$work"' EXIT

"$repo/lab/lab.sh" --hosts 2 --timeout 200 --capture "$work/operations.pcap" \
    --on 1 "$bin/on-the-wire server >$work/server.out" \
    --on 2 "until grep -q '^server: listening' $work/server.out 2>/dev/null; do sleep 0.05; done
            $bin/on-the-wire client \$RDMALAB_ADDR_1 >$work/client.out" 2>"$work/lab.err" ||
    { cat "$work/lab.err" "$work"/*.out >&2; echo "wire-captures: the lab run failed" >&2; exit 1; }

"$bin/rdma-wire" "$work/operations.pcap" --json "$out/packets.json" >"$out/ladder.txt"
grep -E '^client: (path MTU|step|  |    )' "$work/client.out" >"$out/prediction.txt"
comparison=$("$bin/rdma-wire" "$out/packets.json" --check-predicted "$work/client.out" | head -n 1)
grep -q ' missing 0 extra 0 ' <<<"$comparison" ||
    { echo "wire-captures: the capture does not match the prediction: $comparison" >&2; exit 1; }

when=$(date -u +%Y-%m-%d)
accel=$(sed -nE 's/.*\((kernel [^)]*)\).*/\1/p' "$work/lab.err" | head -n 1)
caption="Soft-RoCE (rxe) in two QEMU guests, $accel; captured on host 1's side of the link"

# The ladder figure: host 2 (the client) on the left, host 1 on the right, one arrow a packet.
# The packets' fields come from rdma-wire (the packet record), one tab-separated line each.
"$bin/rdma-wire" "$out/packets.json" \
    --print src,opcode_name,psn,payload_bytes,time_s,reth,immdt,atomic,aeth,atomic_ack,ack_requested |
awk -F'\t' -v caption="$caption" '
function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); return s }
{
    n++
    src[n] = $1; name[n] = $2; psn[n] = $3; bytes[n] = $4; t[n] = $5
    extra[n] = ($6 != "" ? " RETH" : "") ($7 != "" ? " ImmDt" : "") ($8 != "" ? " AtomicETH" : "") \
               ($9 != "" ? " AETH" : "") ($10 != "" ? " AtomicAckETH" : "") ($11 == "true" ? " AckReq" : "")
}
END {
    row = 17; top = 60; left = 200; right = 760; width = 960; height = top + n * row + 50
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n", width, height, width, height
    printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
    printf "<defs><marker id=\"a\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#333\"/></marker></defs>\n"
    printf "<text x=\"%d\" y=\"22\" font-size=\"14\" font-weight=\"bold\" text-anchor=\"middle\">host 2 (client) 198.51.100.2</text>\n", left
    printf "<text x=\"%d\" y=\"22\" font-size=\"14\" font-weight=\"bold\" text-anchor=\"middle\">host 1 (server) 198.51.100.1</text>\n", right
    printf "<text x=\"10\" y=\"42\" fill=\"#555\">time ms</text>\n"
    printf "<line x1=\"%d\" y1=\"30\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/><line x1=\"%d\" y1=\"30\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>\n", left, left, height - 40, right, right, height - 40
    for (i = 1; i <= n; i++) {
        y = top + (i - 1) * row
        to_server = src[i] == "198.51.100.2"
        color = (name[i] ~ /Acknowledge|Response/) ? "#1f6f3f" : "#1f3f8f"
        x1 = to_server ? left : right; x2 = to_server ? right : left
        printf "<text x=\"10\" y=\"%d\" fill=\"#555\">%.1f</text>\n", y + 4, t[i] * 1000
        printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" marker-end=\"url(#a)\"/>\n", x1, y, x2, y + 6, color
        label = sprintf("%s  PSN %s%s%s", name[i], psn[i], (bytes[i] > 0 ? "  " bytes[i] " B" : ""), extra[i])
        printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"%s\">%s</text>\n", (left + right) / 2, y - 2, color, esc(label)
    }
    printf "<text x=\"10\" y=\"%d\" fill=\"#555\" font-size=\"10\">%s</text>\n", height - 12, esc(caption)
    printf "</svg>\n"
}' >"$out/operations-ladder.svg"

{
    echo "# Each RC operation on the wire"
    echo
    echo "Recorded by \`bench/wire-captures.sh\` on $when: the \`on-the-wire\` lesson from host 2 (client,"
    echo "198.51.100.2) to host 1 (server, 198.51.100.1), $caption. No fault on the link."
    echo "Soft-RoCE timings are an emulated CPU's: only the packets mean anything here."
    echo
    echo "- \`prediction.txt\`: what the lesson predicted from the path MTU and the PSNs, before each operation"
    echo "- \`ladder.txt\`: the capture as \`./rdmalab wire\` prints it; \`packets.json\`: the same as JSON"
    echo "- \`operations-ladder.svg\`: the capture drawn as a ladder"
    echo "- prediction against capture: $comparison"
    echo "- host: $(uname -sr), QEMU $(qemu-system-x86_64 --version | head -n 1 | awk '{print $4}'), $(tshark --version 2>/dev/null | head -n 1 | sed "s/ (Git.*//")"
} >"$out/README.md"
echo "wire-captures: $comparison; recorded in ${out#"$repo"/}"

# ---- The loss lesson under 10 % loss on host 2's egress (the client's: the data direction).
loss=10%
"$repo/lab/lab.sh" --hosts 2 --timeout 300 --loss "2:$loss" --capture "$work/loss.pcap" \
    --on 1 "$bin/loss-and-retransmission server >$work/loss-server.out" \
    --on 2 "until grep -q '^server: listening' $work/loss-server.out 2>/dev/null; do sleep 0.05; done
            $bin/loss-and-retransmission client \$RDMALAB_ADDR_1 >$work/loss-client.out" 2>"$work/loss-lab.err" ||
    { cat "$work/loss-lab.err" "$work"/loss-*.out >&2; echo "wire-captures: the loss lesson's run failed" >&2; exit 1; }
loss_out=$results/loss-lesson
cp "$work/loss-server.out" "$loss_out/server.out"
cp "$work/loss-client.out" "$loss_out/client.out"
"$bin/rdma-wire" "$work/loss.pcap" --brief | tail -n 3 >"$loss_out/capture-summary.txt"
{
    echo "# loss-and-retransmission under $loss loss"
    echo
    echo "Recorded by \`bench/wire-captures.sh\` on $when: the \`loss-and-retransmission\` lesson from host 2"
    echo "(client) to host 1 (server), $caption. Fault: $(sed -n 's/^lab: faults: //p' "$work/loss-lab.err")."
    echo "Soft-RoCE in an emulated CPU: times and rates are only comparable within this run."
    echo
    echo "- \`client.out\`, \`server.out\`: both sides' output (rxe's counters before and after, in their lines)"
    echo "- \`capture-summary.txt\`: \`./rdmalab wire --brief\`'s count of the capture (packets as they reached host 1)"
    echo
    echo '```'
    grep -hE '^(client|server): (RC|UD):' "$loss_out/server.out" "$loss_out/client.out"
    cat "$loss_out/capture-summary.txt"
    echo '```'
} >"$loss_out/README.md"
echo "wire-captures: the loss lesson recorded in ${loss_out#"$repo"/}"
