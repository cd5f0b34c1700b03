#!/usr/bin/env bash
# The link taken down mid-transfer across the lab's two hosts, then up again (part of
# ./rdmalab test --sanitize and ./rdmalab faults; tests/vm/link-failure.sh covers the
# link-failure lesson, whose subject this is). What RC promises, checked:
#   transient (host 1's link down 3 s under an 8 MiB RDMA WRITE): the WRITE completes once the
#     link is back and the server verifies every byte; both exit 0.
#   long (host 2's link down 15 s under send-recv, both sides --timeout 6): the client reports
#     it within its timeout (+4 s), one line, exit 1; the server likewise; after the link is back
#     nothing is left running.
# Appends its cells to RESULTS.tsv in the fault matrix's format.
#   tests/faults/link-flap.sh BUILD_BIN_DIR [RESULTS.tsv]   (default $RDMALAB_FAULTS_TSV, or
#   BUILD_BIN_DIR/../faults/faults.tsv: CTest's faults.link-flap)
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:?usage: link-flap.sh BUILD_BIN_DIR [RESULTS.tsv]}
results=${2:-${RDMALAB_FAULTS_TSV:-$bin/../faults/faults.tsv}}
mkdir -p "$(dirname "$results")"
out=$(mktemp -d "$repo/build/link-flap.XXXXXX")   # both guests write here
trap 'rm -rf "$out"' EXIT
# Host 2's egress is held to 20 Mbit/s, so each transfer lasts seconds (8 MiB: about 3.4 s) and
# the link surely goes down while it is under way: at full speed the WRITE could end before host 1
# has seen the signal, and its outage would fall after it. One lab boot per phase (see
# link-flap-hosts.sh).
lab_rc=()
for spec in transient:1@signal+3 long:2@signal+15; do
    rc=0
    "$repo/lab/lab.sh" --hosts 2 --timeout 200 --rate 2:20mbit --link-down "${spec#*:}" -- \
        bash "$repo/tests/faults/link-flap-hosts.sh" "$bin" "$out" "${spec%%:*}" \
        >"$out/lab-${spec%%:*}.out" 2>"$out/lab-${spec%%:*}.err" || rc=$?
    lab_rc+=("$rc")
done
failed=0
record() {  # record PROGRAM FAULT EXPECTED OBSERVED VERDICT
    printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4//$'\n'/ }" "$5" >>"$results"
    printf '%-4s %-12s %-28s %s\n' "$5" "$1" "$2" "$4"
    [ "$5" = ok ] || failed=$((failed + 1))
}
codes() { tr '\n' ' ' <"$1" 2>/dev/null; }
last() { grep -v '^client: \|^server: ' "$1" 2>/dev/null | tail -n 1 | cut -c1-120; }

t=$out/transient
verdict=ok
[ "$(codes "$t/codes")" = "0 0 " ] || verdict=FAIL
grep -q '^server: verified 8388608 bytes placed' "$t/server.out" 2>/dev/null || verdict=FAIL
grep -q '^\[host1\] lab: host 1: link down' "$out/lab-transient.err" && grep -q '^\[host1\] lab: host 1: link up' "$out/lab-transient.err" || verdict=FAIL
# The outage fell inside the phase: host 1's link came back before its server had finished (both
# times by host 1's own clock).
up_at=$(sed -nE 's/^\[host1\] lab: host 1: link up \(guest uptime ([0-9.]+) s\)$/\1/p' "$out/lab-transient.err")
phase_end=$(sed -nE 's/^== host 1 after the transient phase, guest uptime ([0-9.]+) s$/\1/p' "$out/diag-host1-transient.txt" 2>/dev/null)
awk -v up="${up_at:-}" -v end="${phase_end:-}" 'BEGIN { exit !(up != "" && end != "" && up + 0 < end + 0) }' ||
    verdict=FAIL
record rdma-write "two hosts: server's link down 3 s mid-WRITE, then up" \
    "the WRITE completes after the outage, every byte verified" \
    "exit codes (server client) $(codes "$t/codes")$(grep -m 1 -o 'verified 8388608 bytes' "$t/server.out" 2>/dev/null || echo '; not verified'); link up at ${up_at:-?} s, server done at ${phase_end:-?} s (host 1's clock)" "$verdict"

l=$out/long
verdict=ok
[ "$(codes "$l/codes")" = "1 1 " ] || verdict=FAIL
client_line=$(last "$l/client.out")
server_line=$(last "$l/server.out")
[[ $client_line == send-recv:* ]] && [[ $server_line == send-recv:* ]] || verdict=FAIL
grep -q '^\[host2\] lab: host 2: link down' "$out/lab-long.err" || verdict=FAIL
record send-recv "two hosts: client's link down 15 s mid-run" \
    "both sides give up within --timeout 6, one line each, exit 1" \
    "exit codes (server client) $(codes "$l/codes"); client: $client_line; server: $server_line" "$verdict"
for phase in transient long; do
    rc=${lab_rc[0]}
    [ "$phase" = long ] && rc=${lab_rc[1]}
    [ "$rc" = 0 ] || record "(lab)" "two hosts, $phase phase" "the lab exits 0" "exit $rc: $(tail -n 1 "$out/lab-$phase.err")" FAIL
done
# This repository's lab leaves nothing: no run folder (it holds the links' sockets' names and
# the guests' consoles), no QEMU still running from one.
runs=$(ls -d "$repo"/build/lab/run.* 2>/dev/null | wc -l)
qemus=$(pgrep -f "$repo/build/lab/run\." | wc -l)
record "(lab)" "resources" "no run folder, no guest left" "run folders left: $runs; QEMU processes left: $qemus" \
    "$([ "$runs" = 0 ] && [ "$qemus" = 0 ] && echo ok || echo FAIL)"
[ "$failed" = 0 ] || { tail -n 20 "$out"/lab-*.out "$out"/lab-*.err; cat "$t"/*.out "$l"/*.out 2>/dev/null | tail -n 20; cat "$out"/diag-*.txt 2>/dev/null; }
[ "$failed" = 0 ]
