#!/usr/bin/env bash
# `./rdmalab wire FILE.pcap`: the RoCE v2 packets of a capture as a ladder a person can read —
# time, host → host, transport and opcode, QPN, PSN, ACK/NAK with its syndrome, RETH (address,
# rkey, length), ImmDt, AtomicETH, DETH and payload size — then a count per opcode and of the
# packets sent again. Decoding is tshark's RoCE v2 dissector (Debian's tshark); this script
# only lays out its fields. Works on the lab's captures (--capture) and on real hosts' ones:
# `tcpdump -i IFACE -w x.pcap udp port 4791`, or Mellanox's ibdump.
#   lab/wire.sh FILE.pcap [--json OUT.json] [--brief] [--quiet]
#     --json OUT.json  the same packets as a JSON array (for the site and for tests)
#     --brief          a run of packets of one opcode, direction and QP on one line ("× 62")
#     --quiet          no ladder on stdout (with --json)
set -euo pipefail
usage="usage: rdmalab wire FILE.pcap [--json OUT.json] [--brief] [--quiet]"
die() { echo "wire: $*" >&2; exit 2; }

file=""
json=""
quiet=0
brief=0
while [ $# -gt 0 ]; do
    case "$1" in
        --json) [ $# -ge 2 ] || die "--json needs a file name"; json=$2; shift ;;
        --quiet) quiet=1 ;;
        --brief) brief=1 ;;
        -h|--help) echo "$usage"; exit 0 ;;
        -*) die "unknown option '$1' ($usage)" ;;
        *) [ -z "$file" ] || die "one capture at a time ($usage)"; file=$1 ;;
    esac
    shift
done
[ -n "$file" ] || die "no capture given ($usage)"
[ -r "$file" ] || die "$file: no such readable file"
command -v tshark >/dev/null || die "tshark is missing: install it with 'apt-get install tshark' (Wireshark's RoCE v2 dissector)"
if [ -n "$json" ]; then
    json_dir=$(dirname "$json")
    [ -d "$json_dir" ] && [ -w "$json_dir" ] || die "--json $json: $json_dir is not a writable folder"
fi

fields=(frame.time_relative ip.src ip.dst infiniband.bth.opcode infiniband.bth.destqp infiniband.bth.psn
        infiniband.bth.a infiniband.aeth.syndrome infiniband.aeth.msn infiniband.reth.va infiniband.reth.r_key
        infiniband.reth.dmalen infiniband.immdt infiniband.atomiceth.swapdt infiniband.atomiceth.cmpdt
        infiniband.atomicacketh.origremdt infiniband.deth.q_key infiniband.deth.srcqp udp.length infiniband.bth.padcnt frame.time_epoch)
tshark_args=(-r "$file" -n -Y 'infiniband.bth' -T fields -E separator=/t -E occurrence=f)
for field in "${fields[@]}"; do tshark_args+=(-e "$field"); done
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# tshark dissects UDP port 4791 as RoCE v2 ("RRoCE") by default.
if ! tshark "${tshark_args[@]}" >"$scratch/packets" 2>"$scratch/err"; then
    die "tshark cannot read $file: $(grep -m 1 . "$scratch/err" || echo 'no reason given')"
fi

awk -F'\t' -v json="$json" -v quiet="$quiet" -v brief="$brief" '
function opname(op,    base, t) {
    t = int(op / 32)
    base = op % 32
    if (op == 100) return "SEND Only"
    if (op == 101) return "SEND Only with Immediate"
    return names[base] != "" ? names[base] : sprintf("opcode %d", op)
}
function transport(op) { return op >= 96 ? "UD" : (op >= 32 ? "UC" : "RC") }
function syndrome_text(s,    kind) {
    kind = int(s / 32)
    if (kind == 0) return "ACK"
    if (kind == 1) return sprintf("RNR NAK (timer %d)", s % 32)
    if (kind == 3) return "NAK " (naks[s % 32] != "" ? naks[s % 32] : sprintf("code %d", s % 32))
    return sprintf("syndrome %d", s)
}
function host(ip) { return (ip ~ /^198\.51\.100\.[0-9]+$/) ? "host" substr(ip, 12) : ip }
function jstr(v) { gsub(/\\/, "\\\\", v); gsub(/"/, "\\\"", v); return "\"" v "\"" }
function num(v) { return v == "" ? "null" : v }
function hexnum(v) { return v == "" ? "null" : jstr(v) }
BEGIN {
    split("SEND First|SEND Middle|SEND Last|SEND Last with Immediate|SEND Only|SEND Only with Immediate|RDMA WRITE First|RDMA WRITE Middle|RDMA WRITE Last|RDMA WRITE Last with Immediate|RDMA WRITE Only|RDMA WRITE Only with Immediate|RDMA READ Request|RDMA READ Response First|RDMA READ Response Middle|RDMA READ Response Last|RDMA READ Response Only|Acknowledge|ATOMIC Acknowledge|CmpSwap|FetchAdd", list, "|")
    for (i = 1; i <= 21; i++) names[i - 1] = list[i]
    names[22] = "SEND Last with Invalidate"; names[23] = "SEND Only with Invalidate"
    naks[0] = "PSN sequence error"; naks[1] = "invalid request"; naks[2] = "remote access error"
    naks[3] = "remote operational error"; naks[4] = "invalid RD request"
    if (!quiet) printf "%10s  %-15s  %-34s %8s %8s  %s\n", "time ms", "from → to", "opcode", "QPN", "PSN", "headers · payload"
    if (json != "") printf "[\n" > json
}
{
    time = $1; src = $2; dst = $3; op = $4 + 0; qpn = $5; psn = $6; ackreq = $7
    syn = $8; msn = $9; va = $10; rkey = $11; dmalen = $12; imm = $13
    swap = $14; cmp = $15; orig = $16; qkey = $17; srcqp = $18
    # The payload: what the UDP datagram carries beyond UDP (8), BTH (12), the extension
    # headers present, the pad and the ICRC (4).
    headers = 8 + 12 + 4 + $20
    if (dmalen != "") headers += 16
    if (syn != "") headers += 4
    if (imm != "") headers += 4
    if (qkey != "") headers += 8
    if (swap != "") headers += 28
    if (orig != "") headers += 8
    payload = $19 - headers
    if (payload < 0) payload = 0
    name = transport(op) " " opname(op)
    details = ""
    if (syn != "") details = details sprintf("AETH %s msn %d", syndrome_text(syn + 0), msn)
    if (dmalen != "") details = details (details == "" ? "" : " · ") sprintf("RETH va %s rkey %s len %d", va, rkey, dmalen)
    if (imm != "") details = details (details == "" ? "" : " · ") "ImmDt 0x" imm
    if (swap != "") details = details (details == "" ? "" : " · ") (op % 32 == 19 ? sprintf("AtomicETH compare %s swap %s", cmp, swap) : sprintf("AtomicETH add %s", swap))
    if (orig != "") details = details (details == "" ? "" : " · ") "AtomicAckETH original " orig
    if (qkey != "") details = details (details == "" ? "" : " · ") sprintf("DETH qkey %s src QP %s", qkey, srcqp)
    if (op >= 96 && qpn + 0 == 1) details = details " · rdma_cm connection management (QP1)"
    if (payload > 0) details = details (details == "" ? "" : " · ") sprintf("payload %d B", payload)
    if (ackreq == "1" || ackreq == "True") details = details (details == "" ? "" : " · ") "ack requested"
    # A packet seen again: the same direction, QP, PSN and opcode (go-back-N, or a duplicate).
    key = src ">" dst ":" qpn ":" psn ":" op
    if (op != 17 && (key in seen)) { again++; details = details " · SENT AGAIN" }
    seen[key] = 1
    if (!(name in count)) order[++kinds] = name
    count[name]++
    if (syn != "" && int(syn / 32) != 0) nak[syndrome_text(syn + 0)]++
    packets++
    line = sprintf("%10.3f  %-15s  %-34s %8s %8d  %s", time * 1000, host(src) "→" host(dst), name, qpn, psn, details)
    if (!quiet && !brief) print line
    if (!quiet && brief) {
        # A run: the same direction, QP and opcode, headers alike but for the PSN.
        run_key = src ">" dst ":" qpn ":" op ":" (details ~ /RETH|AETH|ImmDt|Atomic|SENT AGAIN/ ? NR : "")
        if (run_key == last_key) { run_count++; run_last_psn = psn }
        else { flush_run(); last_key = run_key; run_line = line; run_count = 1; run_first_psn = psn; run_last_psn = psn }
    }
    if (json != "") {
        printf "%s  {\"time_s\": %s, \"src\": %s, \"dst\": %s, \"transport\": %s, \"opcode\": %d, \"opcode_name\": %s, \"qpn\": %s, \"psn\": %d, \"ack_requested\": %s",
            (packets > 1 ? ",\n" : ""), time, jstr(src), jstr(dst), jstr(transport(op)), op, jstr(opname(op)), jstr(qpn), psn,
            ((ackreq == "1" || ackreq == "True") ? "true" : "false") > json
        if (syn != "") printf ", \"aeth\": {\"syndrome\": %d, \"meaning\": %s, \"msn\": %d}", syn, jstr(syndrome_text(syn + 0)), msn > json
        if (dmalen != "") printf ", \"reth\": {\"va\": %s, \"rkey\": %s, \"length\": %d}", jstr(va), jstr(rkey), dmalen > json
        if (imm != "") printf ", \"immdt\": %s", jstr("0x" imm) > json
        if (swap != "") printf ", \"atomic\": {\"swap_or_add\": %s, \"compare\": %s}", hexnum(swap), hexnum(cmp) > json
        if (orig != "") printf ", \"atomic_ack\": {\"original\": %s}", jstr(orig) > json
        if (qkey != "") printf ", \"deth\": {\"qkey\": %s, \"src_qp\": %s}", jstr(qkey), jstr(srcqp) > json
        # time_epoch: the clock of the capture, as text (doubles in awk would lose digits);
        # ./rdmalab trace lines it up with the --trace events of programs on the same host.
        printf ", \"payload_bytes\": %d, \"sent_again\": %s, \"time_epoch\": %s}", payload, ((details ~ /SENT AGAIN/) ? "true" : "false"), jstr($21) > json
    }
}
function flush_run() {
    if (run_count == 0) return
    print run_line
    if (run_count > 1) printf "%10s  %-15s  %-34s %8s %8s  ··· %d packets like it in all, PSN %d–%d\n", "", "", "", "", "", run_count, run_first_psn, run_last_psn
    run_count = 0
}
END {
    if (brief && !quiet) flush_run()
    if (json != "") { printf "%s]\n", (packets > 0 ? "\n" : "") > json; close(json) }
    if (quiet) exit
    printf "\n%d RoCE v2 packets", packets
    if (packets > 0) {
        printf ":"
        sep = " "
        for (k = 1; k <= kinds; k++) { printf "%s%d %s", sep, count[order[k]], order[k]; sep = ", " }
    }
    printf "\n"
    for (n in nak) printf "%d × %s\n", nak[n], n
    if (again > 0) printf "%d packets sent again (same direction, QP, PSN and opcode)\n", again
}' "$scratch/packets"
