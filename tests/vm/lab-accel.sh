# Tests of the lab's accelerator choice and of every way QEMU can fail, from the host, with a
# QEMU stand-in (tests/vm/standin) that breaks KVM as broken machines do: the lab must fall back
# to TCG in the same run, remember that, refuse a forced KVM clearly, and return within seconds
# when QEMU dies at start, leaving nothing behind. Works with or without a real /dev/kvm: the
# stand-in's "KVM device" is a file made here.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
source "$repo/tests/checks.sh"
lab=$repo/lab/lab.sh
scratch=$(mktemp -d)
real_qemu=$(command -v qemu-system-x86_64) || { echo "qemu-system-x86_64 is missing"; exit 1; }
verdicts_before=$(ls "$repo"/build/lab/accel-* 2>/dev/null | sort)
new_verdicts() { comm -13 <(echo "$verdicts_before") <(ls "$repo"/build/lab/accel-* 2>/dev/null | sort) | grep . ; }
cleanup() {
    new_verdicts | xargs -r rm -f
    rm -rf "$scratch"
}
trap cleanup EXIT

export STANDIN_QEMU_REAL=$real_qemu STANDIN_QEMU_LOG=$scratch/accels
# The stand-in is copied per test run, so its verdict (keyed by QEMU's path) is this run's own.
cp "$repo/tests/vm/standin/qemu-system-x86_64" "$scratch/qemu-system-x86_64"
export RDMALAB_QEMU=$scratch/qemu-system-x86_64
: >"$scratch/kvm"
export RDMALAB_LAB_KVM_DEVICE=$scratch/kvm
unset RDMALAB_LAB_ACCEL

qemu_pids() { pgrep -f "[q]emu-system-x86_64 .*rdmalab.run=build/lab/run" | sort; }
run_folders() { ls -d "$repo"/build/lab/run.* 2>/dev/null | sort; }
qemu_before=$(qemu_pids)
folders_before=$(run_folders)
nothing_left() {
    check "$1: no qemu of ours left running" [ -z "$(comm -13 <(echo "$qemu_before") <(qemu_pids) | grep .)" ]
    check "$1: no run folder of ours left behind" [ -z "$(comm -13 <(echo "$folders_before") <(run_folders) | grep .)" ]
    check "$1: no stand-in left running" [ -z "$(pgrep -f "$scratch/qemu-system-x86_64")" ]
}

part kvm-aborts
# 1. KVM is offered but QEMU aborts under it: one line, then TCG in the same invocation.
: >"$scratch/accels"
rc=0
STANDIN_QEMU_MODE=kvm-aborts "$lab" --vm -- sh -c 'echo ran-in-guest; exit 3' >"$scratch/out" 2>"$scratch/err" || rc=$?
check "KVM aborts: the command's exit code comes back (3)" [ "$rc" = 3 ]
check "KVM aborts: the command ran once, under TCG" [ "$(cat "$scratch/out")" = ran-in-guest ]
check "KVM aborts: tried KVM first, then TCG" [ "$(tr '\n' ' ' <"$scratch/accels")" = "kvm tcg " ]
check "KVM aborts: says why in one line, with QEMU's own message" \
    grep -qx "lab: KVM is present but cannot run the guest (qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69; qemu exit code 134): using TCG emulation" "$scratch/err"
check "KVM aborts: QEMU's assertion is not dumped on the reader" bash -c "! grep -q Assertion '$scratch/err'"
check "KVM aborts: the verdict is remembered" bash -c "[ -n \"\$(grep -l '^tcg: ' $(new_verdicts | tr '\n' ' ') 2>/dev/null)\" ]"
sed -n '1,3p' "$scratch/err"
nothing_left "KVM aborts"

part verdict-reused
# 2. The next run reuses the verdict: no KVM attempt at all, and the boot line says why.
: >"$scratch/accels"
rc=0
STANDIN_QEMU_MODE=kvm-aborts "$lab" --vm -- true >"$scratch/out" 2>"$scratch/err" || rc=$?
check "verdict reused: exit 0" [ "$rc" = 0 ]
check "verdict reused: KVM not tried again" [ "$(tr '\n' ' ' <"$scratch/accels")" = "tcg " ]
check "verdict reused: the boot line names TCG and the reason" \
    grep -q 'booting the Soft-RoCE lab (kernel .*, TCG emulation: KVM could not run the guest here before (qemu-system-x86_64: error: failed to set MSR' "$scratch/err"

part forced-kvm
# 3. Asking for KVM explicitly on that machine is an error with the reason, not a fallback.
rm -f $(new_verdicts)
: >"$scratch/accels"
rc=0
start=$(date +%s)
STANDIN_QEMU_MODE=kvm-aborts RDMALAB_LAB_ACCEL=kvm "$lab" --vm -- true >"$scratch/out" 2>"$scratch/err" || rc=$?
check "forced KVM that fails: exit 2" [ "$rc" = 2 ]
check "forced KVM that fails: names the reason and that there is no fallback" \
    grep -q "KVM cannot run the guest (qemu-system-x86_64: error: failed to set MSR.*no fallback" "$scratch/err"
check "forced KVM that fails: TCG never tried" [ "$(tr '\n' ' ' <"$scratch/accels")" = "kvm " ]
check "forced KVM that fails: returns within seconds" [ $(($(date +%s) - start)) -lt 10 ]
rc=0
RDMALAB_LAB_KVM_DEVICE=$scratch/no-such-kvm "$lab" --vm --accel kvm -- true 2>"$scratch/err" || rc=$?
check "--accel kvm without a KVM device: exit 2 in one line" \
    bash -c "[ $rc = 2 ] && [ \$(grep -c . '$scratch/err') = 1 ] && grep -q 'no-such-kvm is missing' '$scratch/err'"
rc=0
"$lab" --vm --accel fast -- true 2>"$scratch/err" || rc=$?
check "--accel with an unknown value: exit 2 in one line" bash -c "[ $rc = 2 ] && [ \$(grep -c . '$scratch/err') = 1 ]"

part kvm-stalls
# 4. KVM that leaves QEMU running but the guest dead ("KVM internal error"): no sign of life
# within the probe time, then TCG.
: >"$scratch/accels"
rc=0
start=$(date +%s)
STANDIN_QEMU_MODE=kvm-stalls RDMALAB_LAB_KVM_PROBE_S=3 "$lab" --vm -- sh -c 'exit 5' >"$scratch/out" 2>"$scratch/err" || rc=$?
check "KVM stalls: the command still runs (exit 5)" [ "$rc" = 5 ]
check "KVM stalls: says so with QEMU's message, then uses TCG" \
    grep -q "KVM is present but cannot run the guest (KVM internal error. Suberror: 1): using TCG emulation" "$scratch/err"
check "KVM stalls: kvm then tcg" [ "$(tr '\n' ' ' <"$scratch/accels")" = "kvm tcg " ]
nothing_left "KVM stalls"
rm -f $(new_verdicts)

part qemu-exits
# 5. A QEMU that exits at once, under any accelerator: the lab returns within seconds with
# QEMU's message and a non-zero exit (it used to wait forever for its output copiers).
for accel in auto tcg; do
    rc=0
    start=$(date +%s)
    STANDIN_QEMU_MODE=exits timeout 60 "$lab" --vm --accel $accel -- true >"$scratch/out" 2>"$scratch/err" || rc=$?
    check "QEMU exits at start ($accel): returns within 10 s" [ $(($(date +%s) - start)) -lt 10 ]
    check "QEMU exits at start ($accel): non-zero, not the hang guard's 124" bash -c "[ $rc != 0 ] && [ $rc != 124 ]"
    check "QEMU exits at start ($accel): QEMU's message is shown" grep -q 'failed to initialize kvm: Permission denied' "$scratch/err"
    nothing_left "QEMU exits at start ($accel)"
done
sed 's/^/    /' "$scratch/err"

part tour
# The tour on such a machine still ends with one summary that says what happened.
rc=0
STANDIN_QEMU_MODE=exits timeout 300 "$repo/rdmalab" tour >"$scratch/out" 2>"$scratch/err" || rc=$?
check "tour with a QEMU that cannot start: exit 1" [ "$rc" = 1 ]
check "tour with a QEMU that cannot start: says no verbs lesson ran, and why" \
    grep -qx "tour: 0 of $("$repo/lab/tour.sh" --steps lab | wc -w) verbs lessons ran: the lab did not start (the guest did not start under TCG emulation: qemu-system-x86_64: failed to initialize kvm: Permission denied; qemu exit code 1)" "$scratch/out"
check "tour with a QEMU that cannot start: one total at the end" \
    bash -c "[ \$(grep -c '^tour: [0-9]* of [0-9]* ran' '$scratch/out') = 1 ] && tail -n 1 '$scratch/out' | grep -q '^tour: 1 of .* ran and verified their data; [0-9]* did not run'"
tail -n 2 "$scratch/out"

part guest-paths
# 6. A path the guest would not see is refused before anything boots.
rc=0
"$lab" --vm -- build/bin/rdma-bench client 198.51.100.1 --json /tmp/out.json 2>"$scratch/err" || rc=$?
check "a /tmp path is refused: exit 2, one line naming it" \
    bash -c "[ $rc = 2 ] && [ \$(grep -c . '$scratch/err') = 1 ] && grep -q '/tmp/out.json is under /tmp' '$scratch/err'"
rc=0
"$lab" --vm -- cat --file=/var/tmp/x 2>"$scratch/err" || rc=$?
check "a --opt=/var/tmp path is refused too" bash -c "[ $rc = 2 ] && grep -q 'is under /var/tmp' '$scratch/err'"

finish
