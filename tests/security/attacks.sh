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
check "capture: host 3's link carried 4 RDMA WRITEs from 198.51.100.2 ($spoofed)" [ "$spoofed" = 4 ]
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
