#!/usr/bin/env bash
# RDMA security on the lab's wire (docs/security.md): three lab hosts, rdma-victim's server on
# host 1, its client on host 2, the attacker on host 3 (tests/security/worlds.sh runs the
# worlds). Each attack is checked where it succeeds and where its defence stops it, on the
# victim's own verdict, the client's completions and the capture of host 3's link; then the
# attack tool's refusals (one line, exit 2).
#   tests/security/attacks.sh BUILD_BIN_DIR
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$repo/build/bin}
source "$repo/tests/checks.sh"
[ -e /dev/kvm ] || [ -x "$(command -v qemu-system-x86_64)" ] || { echo "SKIP: no QEMU"; exit 77; }
out=$(mktemp -d "$repo/build/security-test.XXXXXX")   # the guests write here
[ -n "${RDMALAB_KEEP_OUTPUT:-}" ] || trap 'rm -rf "$out"' EXIT   # keep it to look into a failure

rc=0
"$repo/lab/lab.sh" --hosts 3 --timeout 400 --capture "$out/wire.pcap" -- \
    bash "$repo/tests/security/worlds.sh" "$bin" "$out" >"$out/lab.out" 2>&1 || rc=$?

# says WORLD FILE REGEX: a line of WORLD's FILE matches.
says() { has_line "$out/$1/$2" "$3"; }
# show WORLD: what each side said in it (the QP transitions left out), for the log.
show() {
    grep -h '^victim: client\|^client: \(connected\|my\)\|^attacker: sent one\|^rdma-' \
        "$out/$1/victim.out" "$out/$1/client.out" "$out/$1/attack.out" 2>/dev/null | sed "s|^|    $1: |"
}

part prediction
check "the lab ran every world (exit $rc)" [ "$rc" = 0 ]
[ "$rc" = 0 ] || tail -n 20 "$out/lab.out"
check "probe: the attacker connected as a client (exit 0)" rc_is "$out/inject/probe.rc" 0
# rxe numbers QPs in sequence: the QP the victim made for the next client is ours plus one.
predicted=$(sed -n 's/^next_qpn=//p' "$out/inject/probe.txt")
actual=$(sed -n 's/^client: connected to QP \(0x[0-9a-f]*\);.*/\1/p' "$out/inject/client.out")
same_number() { [ -n "$1" ] && [ -n "$2" ] && [ "$(($1))" = "$(($2))" ]; }
check "prediction: the next client's QP at the victim is the one predicted ($predicted = $actual)" \
    same_number "$predicted" "$actual"

part injection
check "inject: the attacker's frame left host 3 (exit 0)" rc_is "$out/inject/attack.rc" 0
check "inject: the victim's slot holds the attacker's bytes" \
    says inject victim.out '^victim: client 2: slot holds bytes it did not write: "INJECTED by host 3"; QP 0x[0-9a-f]+ RTS$'
check "inject: the client's own WRITE completed successfully (its bytes silently dropped as a duplicate)" \
    says inject client.out '^client: my WRITE completed: success$'
check "inject: the client exited 0, none the wiser" rc_is "$out/inject/client.rc" 0
# The captures of each host's link (lab.sh --capture: wire.link-N.pcap): the attacker's 18-byte
# WRITEs, one per world, left host 3 claiming to be 198.51.100.2; not one crossed host 2's link.
spoofed=$("$bin/rdma-wire" "$out/wire.link-3.pcap" --count --where 'src=198.51.100.2' \
    --where 'opcode_name=RDMA WRITE Only' --where 'payload_bytes=18' 2>/dev/null || echo 0)
check "capture: host 3's link carried 6 RDMA WRITEs from 198.51.100.2, one per injecting world ($spoofed)" [ "$spoofed" = 6 ]
own=$("$bin/rdma-wire" "$out/wire.link-2.pcap" --count --where 'opcode_name=RDMA WRITE Only' \
    --where 'payload_bytes=18' 2>/dev/null || echo 0)
check "capture: none of them crossed host 2's link ($own)" [ "$own" = 0 ]
show inject

part defences
check "random PSN: the victim's slot holds what the client wrote" \
    says random-psn victim.out '^victim: client 2: slot holds what it wrote .*; QP 0x[0-9a-f]+ RTS$'
check "random PSN: the client exited 0" rc_is "$out/random-psn/client.rc" 0
check "bad rkey: one packet moved the victim's QP to ERROR" \
    says bad-rkey victim.out '^victim: client 2: its done message failed: .*; QP 0x[0-9a-f]+ ERROR$'
check "bad rkey: the legitimate client failed (exit 1)" rc_is "$out/bad-rkey/client.rc" 1
check "keys per client: the attacker's bytes never reached the slot" \
    bash -c "! grep -q 'INJECTED' '$out/keys-per-client/victim.out'"
check "keys per client: the guessed key was refused and the QP went to ERROR" \
    says keys-per-client victim.out '^victim: client 2: .*; QP 0x[0-9a-f]+ ERROR$'
show bad-rkey

part keys
# guess: the attacker, a client given only its own slot's key, tries the keys of the
# registration just below its own (rxe: index << 8 | 8 random bits) until the secret reads.
g=$out/guess
secret_rkey=$(sed -n 's/^victim: secret at 0x[0-9a-f]*, rkey \(0x[0-9a-f]*\),.*/\1/p' "$g/victim.out")
secret_text=$(sed -n 's/^victim: secret at .*: "\(.*\)"$/\1/p' "$g/victim.out")
found_rkey=$(sed -n 's/^rkey=//p' "$g/attack.out")
tries=$(sed -n 's/^tries=//p' "$g/attack.out")
check "guess: the attacker found a key (exit 0)" rc_is "$g/attack.rc" 0
check "guess: the key it found is the secret's ($found_rkey = $secret_rkey)" \
    same_number "$found_rkey" "$secret_rkey"
check "guess: it read the secret's bytes" \
    bash -c "[ -n \"\$1\" ] && grep -qxF \"bytes=\\\"\$1\\\"\" '$g/attack.out'" _ "$secret_text"
refused=$(grep -c '^try=[0-9]* rkey=0x[0-9a-f]* status=remote access error$' "$g/attack.out")
check "guess: every try before the last was refused with a remote access error ($refused of $tries)" \
    bash -c "[ -n '$tries' ] && [ '$tries' -ge 1 ] && [ '$refused' = \$(($tries - 1)) ]"
check "guess: at most 256 tries at the right index, 512 in all ($tries)" \
    bash -c "[ -n '$tries' ] && [ '$tries' -le 512 ]"
# Every try is one READ request on host 3's link (this world's, and least-privilege's one).
reads=$("$bin/rdma-wire" "$out/wire.link-3.pcap" --count --where 'src=198.51.100.3' \
    --where 'opcode_name=RDMA READ Request' 2>/dev/null || echo 0)
check "capture: host 3 sent one READ request per try, plus least-privilege's one ($reads = $tries + 1)" \
    bash -c "[ -n '$tries' ] && [ '$reads' = \$(($tries + 1)) ]"
# The victim's answer to each refused access: a NAK, remote access error (AETH syndrome 0x62):
# the guess's wrong tries, least-privilege's READ, and the stolen key's WRITE in two worlds.
naks=$("$bin/rdma-wire" "$out/wire.link-3.pcap" --count --where 'dst=198.51.100.3' \
    --where 'aeth.syndrome=98' 2>/dev/null || echo 0)
check "capture: the victim NAKed every refused access with a remote access error ($naks = $tries - 1 + 3)" \
    bash -c "[ -n '$tries' ] && [ '$naks' = \$(($tries + 2)) ]"
check "guess: the victim served a connection per try, and no more" \
    has_line "$g/victim.out" "^victim: no client for 10 s: $tries served\$"
sed -n '/^own_rkey\|^target\|^tries\|^rkey\|^bytes/p' "$g/attack.out" | sed 's/^/    guess: /'

l=$out/least-privilege
check "least privilege: the secret registered for local access only" \
    has_line "$l/victim.out" '^victim: secret at 0x[0-9a-f]*, rkey 0x0, lkey 0x[0-9a-f]*, local access only: '
lkey=$(sed -n 's/^victim: secret at .*, lkey \(0x[0-9a-f]*\),.*/\1/p' "$l/victim.out")
check "least privilege: a READ with the key the secret would have had ($lkey) was refused (remote access error, exit 1)" \
    bash -c "[ \"\$(cat '$l/attack.rc')\" = 1 ] && grep -qx 'status=remote access error' '$l/attack.out' && grep -qx 'rkey=$lkey' '$l/attack.out'"

stolen() {  # WORLD: what client 1 and the attack said, for the log
    grep -h '^client: connected\|^status=\|^victim: client\|^victim: at exit' \
        "$out/$1/client.out" "$out/$1/attack.out" "$out/$1/victim.out" 2>/dev/null | sed "s|^|    $1: |"
}
s=$out/stolen-key
check "stolen key: client 1 wrote its slot and exited 0" rc_is "$s/client.rc" 0
check "stolen key: the attacker's WRITE with client 1's key succeeded (exit 0)" \
    bash -c "[ \"\$(cat '$s/attack.rc')\" = 0 ] && grep -qx 'status=success' '$s/attack.out'"
check "stolen key: at exit client 1's slot holds the attacker's bytes" \
    has_line "$s/victim.out" "^victim: at exit, client 1's slot holds bytes it did not write: \"OVERWRITTEN by host 3"
stolen stolen-key
for world in pd-per-client window; do
    w=$out/$world
    check "$world: client 1 wrote its slot and exited 0" rc_is "$w/client.rc" 0
    check "$world: the attacker's WRITE with client 1's key was refused (remote access error, exit 1)" \
        bash -c "[ \"\$(cat '$w/attack.rc')\" = 1 ] && grep -qx 'status=remote access error' '$w/attack.out'"
    check "$world: at exit client 1's slot still holds what it wrote" \
        has_line "$w/victim.out" '^victim: at exit, 1 of 1 confirmed slots unchanged$'
done
check "window: client 1's window was invalidated once it was done" \
    has_line "$out/window/victim.out" '^victim: client 1: slot holds what it wrote .*; window 0x[0-9a-f]+ invalidated; QP 0x[0-9a-f]+ RTS$'
stolen window

part encryption
# MACsec and IPsec between hosts 1 and 2, rxe above them; host 3 injects the inject world's
# WRITE knowing every number. The injected frame crosses host 3's link in the clear; on host 2's
# link nothing is RoCE: every frame between the two is MACsec, or ESP.
frames() {  # frames PCAP DISPLAY_FILTER: how many frames of the capture match
    tshark -r "$1" -Y "$2" 2>/dev/null | wc -l
}
for world in macsec ipsec; do
    w=$out/$world
    check "$world: set up on hosts 1 and 2 (rxe above it)" \
        bash -c "[ \"\$(cat '$w/setup-1.rc' '$w/setup-2.rc' 2>/dev/null | tr -d '\n')\" = 00 ]"
    check "$world: the client's WRITE and SEND completed, exit 0" rc_is "$w/client.rc" 0
    check "$world: the attacker's frame left host 3 (exit 0)" rc_is "$w/attack.rc" 0
    check "$world: the victim's slot holds what the client wrote" \
        has_line "$w/victim.out" '^victim: client 1: slot holds what it wrote .*; QP 0x[0-9a-f]+ RTS$'
    check "$world: the injected WRITE was the inject world's: client's QP, PSN 0, its slot and key" \
        has_line "$w/attack.out" '^attacker: sent one RDMA WRITE Only .* PSN 0x0, address 0x[0-9a-f]+, rkey 0x[0-9a-f]+$'
done
# The three captures hold every world; count what only these worlds add.
macsec_frames=$(frames "$out/wire.link-2.pcap" macsec)
esp_frames=$(frames "$out/wire.link-2.pcap" esp)
check "capture: host 2's link carried MACsec frames ($macsec_frames) and ESP packets ($esp_frames)" \
    bash -c "[ '$macsec_frames' -gt 0 ] && [ '$esp_frames' -gt 0 ]"
# Host 2's RoCE in the clear, by the victim's QP of each world (QP numbers never repeat in a
# boot): the random-psn world's client packets are there; the encrypted worlds' are not.
clear_packets() {  # clear_packets WORLD: the client's packets to the victim's QP, in the clear
    local qpn
    qpn=$(sed -n 's/^client: connected to QP \(0x[0-9a-f]*\);.*/\1/p' "$out/$1/client.out")
    [ -n "$qpn" ] || { echo none; return; }
    "$bin/rdma-wire" "$out/wire.link-2.pcap" --count --where "dst=198.51.100.1" \
        --where "qpn=$(printf '0x%06x' "$((qpn))")" 2>/dev/null || echo none
}
plain=$(clear_packets random-psn)
check "capture: the random-psn world's WRITE and SEND crossed host 2's link in the clear ($plain)" \
    [ "$plain" = 2 ]
for world in macsec ipsec; do
    clear=$(clear_packets $world)
    check "capture: not one of the $world world's RoCE packets in the clear on host 2's link ($clear)" \
        [ "$clear" = 0 ]
done
# MACsec on host 1 validates strictly: a frame without a SecTAG never reaches macsec0, where
# rxe and the address now live (counted as InPktsNoTag).
no_tag=$(awk '/InPktsNoTag/ { getline; print $4; exit }' "$out/macsec/stats-1.txt" 2>/dev/null)
check "macsec: host 1 counted the untagged (injected) frame and kept it from macsec0 (InPktsNoTag $no_tag)" \
    bash -c "[ -n '$no_tag' ] && [ '$no_tag' -ge 1 ]"
check "ipsec: host 1's inbound policy refused the plaintext packet (XfrmInTmplMismatch or XfrmInNoPols)" \
    bash -c "grep -Eq '^(XfrmInTmplMismatch|XfrmInNoPols)[[:space:]]+[1-9]' '$out/ipsec/stats-1.txt'"
grep -E '^Xfrm(InTmplMismatch|InNoPols|InNoStates)' "$out/ipsec/stats-1.txt" 2>/dev/null | sed 's/^/    ipsec host 1: /'

part tenants
t=$out/tenants
check "cgroup: the tenant's group allows one handle and one object on rxe0" \
    has_line "$t/rdma.max" '^rxe0 hca_handle=1 hca_object=1 *$'
check "cgroup: past the limit the victim's registration is refused, one line, exit 1" \
    bash -c "[ \"\$(cat '$t/limited.rc')\" = 1 ] && grep -q '^rdma-victim: ibv_reg_mr(pool) failed' '$t/limited.out'"
check "netns, shared mode (the default): the namespace sees the host's rxe0" \
    bash -c "grep -q 'netns shared' '$t/mode-shared.txt' && grep -q ': rxe0:' '$t/shared-tenant-sees.txt'"
check "netns: an rxe device cannot be moved into a namespace" \
    bash -c "[ \"\$(cat '$t/move.rc')\" != 0 ] && grep -qi 'not supported' '$t/move.out'"
check "netns: rxe made from inside the namespace (exit 0) belongs to the initial one" \
    bash -c "[ \"\$(cat '$t/add.rc')\" = 0 ] && grep -q 'rxe_tenant' '$t/root-sees.txt'"
check "netns, exclusive mode: set" has_line "$t/mode-exclusive.txt" 'netns exclusive'
check "netns, exclusive mode: the namespace sees no RDMA device" \
    bash -c "! grep -q rxe '$t/exclusive-tenant-sees.txt'"
sed 's/^/    /' "$t/limited.out" "$t/move.out" "$t/shared-tenant-sees.txt" "$t/exclusive.out" 2>/dev/null | head -8

part refusals
rc=0
env -u RDMALAB_HOST "$bin/rdma-attack" probe --server 198.51.100.1 >/dev/null 2>"$out/outside.err" || rc=$?
check "outside the lab's guests: refused, exit 2" [ "$rc" = 2 ]
check "... in one line that says why" bash -c "[ \"\$(wc -l <'$out/outside.err')\" = 1 ] && grep -q 'runs only inside the lab' '$out/outside.err'"
for address in 10.0.0.1 192.168.1.10 127.0.0.1 8.8.8.8; do
    rc=0
    RDMALAB_HOST=9 "$bin/rdma-attack" probe --server "$address" >/dev/null 2>"$out/refused.err" || rc=$?
    check "an address outside the lab's subnet ($address): refused, exit 2, one line" \
        bash -c "[ $rc = 2 ] && [ \"\$(wc -l <'$out/refused.err')\" = 1 ] && grep -q 'outside the lab.s subnet' '$out/refused.err'"
done
for command in "read --address 0 --rkey 0" "write --address 0 --rkey 0 --text x" guess-rkey; do
    rc=0
    # shellcheck disable=SC2086 # the command's words
    RDMALAB_HOST=9 "$bin/rdma-attack" $command --server 10.0.0.1 >/dev/null 2>"$out/refused.err" || rc=$?
    check "${command%% *} to an address outside the lab's subnet: refused, exit 2, one line" \
        bash -c "[ $rc = 2 ] && [ \"\$(wc -l <'$out/refused.err')\" = 1 ] && grep -q 'outside the lab.s subnet' '$out/refused.err'"
done
rc=0
RDMALAB_HOST=9 "$bin/rdma-attack" write --server 198.51.100.1 --address 0 --rkey 0 --text "" \
    >/dev/null 2>"$out/empty.err" || rc=$?
check "write with nothing to write: refused before connecting, exit non-zero" \
    bash -c "[ $rc != 0 ] && grep -q '1 to 1024 bytes' '$out/empty.err'"
rc=0
"$bin/rdma-victim" server --keys shared --pd per-client >/dev/null 2>"$out/combo.err" || rc=$?
check "rdma-victim: --pd per-client with one shared registration: one line, exit 1" \
    bash -c "[ $rc = 1 ] && [ \"\$(wc -l <'$out/combo.err')\" = 1 ] && grep -q 'needs --keys per-client or window' '$out/combo.err'"
rc=0
RDMALAB_HOST=9 "$bin/rdma-attack" inject-write --interface eth0 --victim 198.51.100.1 \
    --victim-mac 52:54:00:5e:01:02 --spoof 10.1.1.1 --qpn 1 --psn 0 --address 0 --rkey 0 \
    --text x >/dev/null 2>"$out/spoof.err" || rc=$?
check "a spoofed address outside the lab's subnet: refused, exit 2" [ "$rc" = 2 ]
rc=0
RDMALAB_HOST=9 "$bin/rdma-attack" inject-write --interface eth0 --victim 198.51.100.1 \
    --victim-mac 52:54:00:5e:01 --spoof 198.51.100.2 --qpn 1 --psn 0 --address 0 --rkey 0 \
    --text x >/dev/null 2>"$out/mac.err" || rc=$?
check "a malformed MAC address: refused, exit 2" [ "$rc" = 2 ]
finish
