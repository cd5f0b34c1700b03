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
#   tests/faults/link-flap.sh BUILD_BIN_DIR RESULTS.tsv
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:?usage: link-flap.sh BUILD_BIN_DIR RESULTS.tsv}
results=${2:?usage: link-flap.sh BUILD_BIN_DIR RESULTS.tsv}
out=$(mktemp -d "$repo/build/link-flap.XXXXXX")   # both guests write here
trap 'rm -rf "$out"' EXIT
rc=0
"$repo/lab/lab.sh" --hosts 2 --timeout 300 --link-down 1@signal+3 --link-down 2@signal+15 -- \
    bash "$repo/tests/faults/link-flap-hosts.sh" "$bin" "$out" >"$out/lab.out" 2>"$out/lab.err" || rc=$?
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
grep -q '^\[host1\] lab: host 1: link down' "$out/lab.err" && grep -q '^\[host1\] lab: host 1: link up' "$out/lab.err" || verdict=FAIL
record rdma-write "two hosts: server's link down 3 s mid-WRITE, then up" \
    "the WRITE completes after the outage, every byte verified" \
    "exit codes (server client) $(codes "$t/codes")$(grep -m 1 -o 'verified 8388608 bytes' "$t/server.out" 2>/dev/null || echo '; not verified')" "$verdict"

l=$out/long
verdict=ok
[ "$(codes "$l/codes")" = "1 1 " ] || verdict=FAIL
client_line=$(last "$l/client.out")
server_line=$(last "$l/server.out")
[[ $client_line == send-recv:* ]] && [[ $server_line == send-recv:* ]] || verdict=FAIL
grep -q '^\[host2\] lab: host 2: link down' "$out/lab.err" || verdict=FAIL
record send-recv "two hosts: client's link down 15 s mid-run" \
    "both sides give up within --timeout 6, one line each, exit 1" \
    "exit codes (server client) $(codes "$l/codes"); client: $client_line; server: $server_line" "$verdict"
[ "$rc" = 0 ] || { verdict=FAIL; record "(lab)" "two hosts" "the lab exits 0" "exit $rc: $(tail -n 1 "$out/lab.err")" FAIL; }
# This repository's lab leaves nothing: no run folder (it holds the links' sockets' names and
# the guests' consoles), no QEMU still running from one.
runs=$(ls -d "$repo"/build/lab/run.* 2>/dev/null | wc -l)
qemus=$(pgrep -f "$repo/build/lab/run\." | wc -l)
record "(lab)" "resources" "no run folder, no guest left" "run folders left: $runs; QEMU processes left: $qemus" \
    "$([ "$runs" = 0 ] && [ "$qemus" = 0 ] && echo ok || echo FAIL)"
[ "$failed" = 0 ] || { tail -n 20 "$out/lab.out" "$out/lab.err"; cat "$t"/*.out "$l"/*.out 2>/dev/null | tail -n 20; }
[ "$failed" = 0 ]
