# Compares the packets the on-the-wire lesson predicted (its client's output) with a capture's
# packets (lab/wire.sh --json): every predicted packet must be in the capture, and the capture
# may hold no other packet of those QPs within the predicted PSN range. A predicted packet seen
# more than once was sent again (a late ACK under emulation makes rxe resend): counted apart.
#   awk -v client=198.51.100.2 -v server=198.51.100.1 -f predicted-packets.awk CAPTURE.json CLIENT.out
# Prints "predicted N found F missing M extra E sent-again A", then one line per packet missing.
function field(line, name,    rest) {  # a string or number field of one JSON packet line
    if (!match(line, "\"" name "\": \"?[^\",}]*")) return ""
    rest = substr(line, RSTART, RLENGTH)
    sub(/^"[a-z_]+": "?/, "", rest)
    return rest
}
FNR == NR {
    if ($0 !~ /^ *\{/) next
    src = field($0, "src"); dst = field($0, "dst"); psn = field($0, "psn") + 0
    seen[src "|" field($0, "opcode_name") "|" psn "|" field($0, "payload_bytes")]++
    packet_src[++packets] = src; packet_psn[packets] = psn; packet_qpn[packets] = field($0, "qpn")
    next
}
/^client:   (client|server) → / {
    line = $0
    sub(/^client:   /, "", line)
    from_client = substr(line, 1, 6) == "client"
    sub(/^[a-z]+ → [a-z]+ /, "", line)
    at = index(line, " QP 0x")
    opcode = substr(line, 1, at - 1)
    sub(/ +$/, "", opcode)
    n = 1
    if (match(opcode, / × [0-9]+$/)) { n = substr(opcode, RSTART + 4) + 0; opcode = substr(opcode, 1, RSTART - 1) }
    split(substr(line, at + 1), f, / +/)
    qpn = f[2]; psn = f[4]; payload = f[5]
    if (index(psn, "–")) psn = substr(psn, 1, index(psn, "–") - 1)
    psn += 0
    qpns[qpn] = 1
    for (k = 0; k < n; k++) {
        p = (psn + k) % 16777216
        predicted++
        if (first == "") first = p
        last = p
        key = (from_client ? client : server) "|" opcode "|" p "|" payload
        if (seen[key] >= 1) { found++; again += seen[key] - 1; seen[key] = -seen[key] }  # counted once
        else if (seen[key] < 0) found++
        else missing_lines[++missing] = sprintf("missing: %s %s PSN %d %s B", (from_client ? "client → server" : "server → client"), opcode, p, payload)
    }
}
END {
    extra = 0
    for (i = 1; i <= packets; i++) {
        if (!(packet_qpn[i] in qpns)) continue
        p = packet_psn[i]
        in_range = (first <= last) ? (p >= first && p <= last) : (p >= first || p <= last)
        if (in_range) extra++
    }
    extra -= found + again
    printf "predicted %d found %d missing %d extra %d sent-again %d\n", predicted, found, missing + 0, extra, again
    for (i = 1; i <= missing; i++) print missing_lines[i]
}
