# Tests of the lab runner itself, from the host: each boots a Soft-RoCE guest.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
lab=$repo/lab/lab.sh
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
check() {
    local description=$1
    shift
    if "$@"; then echo "ok   - $description"; else echo "FAIL - $description"; failures=$((failures + 1)); fi
}

# One boot: the device exists, stdout and stderr stay apart, the exit code comes back.
rc=0
"$lab" --vm --verbose -- sh -c 'ibv_devinfo; echo to-stderr >&2; exit 7' >"$scratch/out" 2>"$scratch/err" || rc=$?
check "exit code of the command is returned (7)" [ "$rc" = 7 ]
check "ibv_devinfo in the guest shows rxe0" grep -q '^hca_id:.*rxe0' "$scratch/out"
check "the port is active" grep -q 'PORT_ACTIVE' "$scratch/out"
check "stderr of the command reaches stderr" grep -qx 'to-stderr' "$scratch/err"
check "stderr text does not leak into stdout" bash -c "! grep -q to-stderr '$scratch/out'"
check "says it boots the lab, naming the kernel" grep -q 'booting the Soft-RoCE lab (kernel [0-9]' "$scratch/err"
check "--verbose reports the boot time" grep -qE 'boot to command [0-9.]+ s' "$scratch/err"
grep -E 'boot to command' "$scratch/err"

# The guest's clock keeps the host's pace: a `sleep 5` of the guest's clock lasts about 5 s of the
# host's. Under emulation a guest calibrates its TSC against an emulated timer, and on a loaded
# machine once got it wrong several times over; lab.sh gives it the host's TSC frequency where
# it can read it. Measured from the host: the guest creates a file before and after its sleep,
# and the host notes when each appears.
clock_dir=$(mktemp -d "$repo/build/lab-clock.XXXXXX")
"$lab" --vm --verbose -- sh -c "touch '$clock_dir/before'; sleep 5; touch '$clock_dir/after'" \
    >/dev/null 2>"$scratch/clock.err" &
lab_pid=$!
before="" after=""
while [ -z "$after" ]; do
    [ -z "$before" ] && [ -e "$clock_dir/before" ] && before=$(date +%s.%N)
    [ -e "$clock_dir/after" ] && after=$(date +%s.%N)
    kill -0 "$lab_pid" 2>/dev/null || break
    sleep 0.02
done
wait "$lab_pid"
slept=$(awk -v a="$before" -v b="$after" 'BEGIN { if (a == "" || b == "") print "none"; else printf "%.2f", b - a }')
check "a guest's sleep 5 lasted 3.5 to 10 s of the host's clock ($slept s)" \
    awk -v s="$slept" 'BEGIN { exit !(s != "none" && s >= 3.5 && s <= 10) }'
grep -h "TSC runs at" "$scratch/clock.err" | sed 's/^/    /'
rm -rf "$clock_dir"

# A guest that runs too long is killed and reported; nothing is left running. (Other labs may
# run beside this test: only qemu processes and run folders that appear during it count.)
qemu_pids() { pgrep -f '[q]emu-system-x86_64 .*rdmalab.run=build/lab/run' | sort; }
run_folders() { ls -d "$repo"/build/lab/run.* 2>/dev/null | sort; }
qemu_before=$(qemu_pids)
folders_before=$(run_folders)
start=$(date +%s)
rc=0
"$lab" --vm --timeout 15 -- sleep 600 >"$scratch/out" 2>"$scratch/err" || rc=$?
check "a guest over its time limit exits 124" [ "$rc" = 124 ]
check "and says so" grep -q 'did not finish within 15 s: killed it' "$scratch/err"
check "within the limit plus a little" [ $(($(date +%s) - start)) -lt 30 ]
new_qemus=$(comm -13 <(echo "$qemu_before") <(qemu_pids) | grep . || true)
new_folders=$(comm -13 <(echo "$folders_before") <(run_folders) | grep . || true)
check "no qemu of ours left running" [ -z "$new_qemus" ]
check "no run folder of ours left behind" [ -z "$new_folders" ]

# Bad usage: one line, non-zero, no guest booted.
rc=0
"$lab" --timeout abc -- true 2>"$scratch/err" || rc=$?
check "bad --timeout is refused with exit 2" [ "$rc" = 2 ]
check "with one line" [ "$(grep -c . "$scratch/err")" = 1 ]
rc=0
"$lab" 2>"$scratch/err" || rc=$?
check "no command is refused with exit 2" [ "$rc" = 2 ]

if [ $failures -eq 0 ]; then echo "all checks passed"; exit 0; fi
echo "$failures check(s) failed"
exit 1
