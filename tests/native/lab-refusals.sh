#!/usr/bin/env bash
# Native test: lab/lab.sh refuses an option it cannot honour with one line on stderr and exit 2,
# before it boots anything: hosts, faults, link-down specs, --on, --kernel, and the rails' and
# MTU's (--rails, --mtu, a fault naming HOST.RAIL). No guest starts: QEMU is never reached (the
# --kernel case names a stand-in, `true`, so that a machine without QEMU refuses it the same way).
# Usage: bash tests/native/lab-refusals.sh [BUILD_BIN_DIR]
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
source "$repo/tests/checks.sh"
lab=$repo/lab/lab.sh
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

refused() {  # refused NAME REGEX COMMAND...: exit 2 and one line on stderr, matching REGEX
    local name=$1 regex=$2 rc=0
    shift 2
    "$@" >/dev/null 2>"$scratch/refused.err" || rc=$?
    check "$name: exit 2 ($rc)" [ "$rc" = 2 ]
    check "$name: one line: $regex" bash -c '[ "$(grep -c . "$1")" = 1 ] && grep -qE -- "$2" "$1"' _ "$scratch/refused.err" "$regex"
}
export RDMALAB_LAB_MODE=vm   # never the host's own device: every case is refused before a boot

part options
refused "--hosts 0" "--hosts must be 1, 2, 3 or 4, got '0'" "$lab" --hosts 0 -- true
refused "--hosts 9" "--hosts must be 1, 2, 3 or 4, got '9'" "$lab" --hosts 9 -- true
refused "--hosts x" "--hosts must be 1, 2, 3 or 4, got 'x'" "$lab" --hosts x -- true
refused "an unknown fault" "unknown option '--jitter'" "$lab" --hosts 2 --jitter 3 -- true
refused "a loss over 100%" "a loss over 100% is not a loss" "$lab" --hosts 2 --loss 150% -- true
refused "a loss without %" "--loss must be a percentage" "$lab" --hosts 2 --loss 5 -- true
refused "a fault for a host that is not there" "there are only 2 hosts" "$lab" --hosts 2 --delay 3:5 -- true
refused "a bad --link-down" "--link-down must be HOST\[\.RAIL\]@SECONDS" "$lab" --hosts 2 --link-down 2 -- true
refused "--on beyond the hosts" "--on 3: there are only 2 host" "$lab" --hosts 2 --on 3 true -- true
refused "a fault on one host" "need the wire" "$lab" --loss 5% -- true
refused "--kernel that is not a kernel" "--kernel .*: not a readable ROOT/boot/vmlinuz-VERSION" \
    env RDMALAB_QEMU=true "$lab" --kernel "$scratch/boot/vmlinuz-none" -- true

part rails
refused "--rails 1" "--rails must be 2, 3 or 4 \(one rail is the wire without --rails\), got '1'" \
    "$lab" --hosts 2 --rails 1 -- true
refused "--rails 5" "--rails must be 2, 3 or 4 .*, got '5'" "$lab" --hosts 2 --rails 5 -- true
refused "--rails two" "--rails must be 2, 3 or 4 .*, got 'two'" "$lab" --hosts 2 --rails=two -- true
refused "--rails without its number" "--rails needs a number of rails \(2 to 4\)" "$lab" --hosts 2 --rails
refused "--rails on one host" "--rails and --mtu set up the wire's links: they need --hosts N" \
    "$lab" --rails 2 -- true
refused "a loss on rail 3 of 2" "--loss 2\.3:5%: there are only 2 rails" \
    "$lab" --hosts 2 --rails 2 --loss 2.3:5% -- true
refused "a rate on rail 2 without rails" "--rate 2\.2:100mbit: there is only one rail \(--rails N gives more\)" \
    "$lab" --hosts 2 --rate 2.2:100mbit -- true
refused "a delay on rail 0" "--delay 1\.0:3: rails are numbered from 1" \
    "$lab" --hosts 2 --rails 2 --delay 1.0:3 -- true
refused "a rail of host 0" "--loss 0\.2:1%: hosts are numbered from 1" \
    "$lab" --hosts 2 --rails 2 --loss 0.2:1% -- true
refused "a rail fault on a host that is not there" "--loss 3:…: there are only 2 hosts" \
    "$lab" --hosts 2 --rails 2 --loss 3.2:1% -- true
refused "a link down on rail 4 of 3" "--link-down 2\.4@signal: there are only 3 rails" \
    "$lab" --hosts 2 --rails 3 --link-down 2.4@signal -- true
refused "a link down on rail 0" "--link-down 1\.0@2: rails are numbered from 1" \
    "$lab" --hosts 2 --rails 2 --link-down 1.0@2 -- true
refused "a link down on rail 2 without rails" "--link-down 2\.2@3\+1: there is only one rail" \
    "$lab" --hosts 2 --link-down 2.2@3+1 -- true
refused "a link down naming a rail badly" "--link-down must be HOST\[\.RAIL\]@SECONDS" \
    "$lab" --hosts 2 --rails 2 --link-down 2.x@3 -- true
refused "an AQM on rail 3 of 2" "--aqm 2\.3:20mbit: there are only 2 rails" \
    "$lab" --hosts 2 --rails 2 --aqm 2.3:20mbit -- true
refused "an AQM and netem on the same rail" "host 2 rail 2 has --aqm and --loss/--delay/--rate" \
    "$lab" --hosts 2 --rails 2 --aqm 2.2:20mbit --loss 2.2:1% -- true

part mtu
refused "--mtu 4096" "--mtu must be 1500 or 9000 \(rxe's active MTU 1024 or 4096\), got '4096'" \
    "$lab" --hosts 2 --mtu 4096 -- true
refused "--mtu 9001" "--mtu must be 1500 or 9000 .*, got '9001'" "$lab" --hosts 2 --rails 2 --mtu=9001 -- true
refused "--mtu jumbo" "--mtu must be 1500 or 9000 .*, got 'jumbo'" "$lab" --hosts 2 --mtu jumbo -- true
refused "--mtu without its value" "--mtu needs 1500 or 9000" "$lab" --hosts 2 --mtu
refused "--mtu on one host" "--rails and --mtu set up the wire's links: they need --hosts N" \
    "$lab" --mtu 9000 -- true
finish
