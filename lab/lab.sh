#!/usr/bin/env bash
# The lab: run a command where an RDMA device exists. Natively when this host has one;
# otherwise inside a QEMU guest running Debian's kernel with Soft-RoCE (rdma_rxe).
# Usage: lab/lab.sh [--vm|--native] [--accel auto|kvm|tcg] [--timeout SEC] [--verbose] -- CMD [ARGS...]
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lab_dir=$repo/lab
cache_dir=$repo/build/lab
guest_address=198.51.100.1   # TEST-NET-2, only ever inside the guest

mode=${RDMALAB_LAB_MODE:-auto}
timeout_s=${RDMALAB_LAB_TIMEOUT:-600}
verbose=${RDMALAB_LAB_VERBOSE:-0}
accel_request=${RDMALAB_LAB_ACCEL:-auto}
qemu=${RDMALAB_QEMU:-qemu-system-x86_64}          # tests put a stand-in here
kvm_device=${RDMALAB_LAB_KVM_DEVICE:-/dev/kvm}    # likewise
usage="usage: rdmalab lab [--vm|--native] [--accel auto|kvm|tcg] [--timeout SEC] [--verbose] -- CMD [ARGS...]"

die() { echo "lab: $*" >&2; exit 2; }
note() { echo "lab: $*" >&2; }

while [ $# -gt 0 ]; do
    case "$1" in
        --vm) mode=vm ;;
        --native) mode=native ;;
        --verbose|-v) verbose=1 ;;
        --timeout) [ $# -ge 2 ] || die "--timeout needs a number of seconds"; timeout_s=$2; shift ;;
        --timeout=*) timeout_s=${1#--timeout=} ;;
        --accel) [ $# -ge 2 ] || die "--accel needs auto, kvm or tcg"; accel_request=$2; shift ;;
        --accel=*) accel_request=${1#--accel=} ;;
        --) shift; break ;;
        -*) die "unknown option '$1' ($usage)" ;;
        *) break ;;
    esac
    shift
done
[ $# -gt 0 ] || die "no command given ($usage)"
[[ $timeout_s =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a whole number of seconds, got '$timeout_s'"
case "$mode" in auto|vm|native) ;; *) die "RDMALAB_LAB_MODE must be auto, vm or native, got '$mode'" ;; esac
case "$accel_request" in auto|kvm|tcg) ;; *) die "--accel (RDMALAB_LAB_ACCEL) must be auto, kvm or tcg, got '$accel_request'" ;; esac

host_has_rdma_device() {
    if command -v ibv_devices >/dev/null 2>&1; then
        # ibv_devices prints two header lines, then one line per device.
        [ "$(ibv_devices 2>/dev/null | tail -n +3 | grep -c .)" -gt 0 ]
    else
        compgen -G '/sys/class/infiniband/*' >/dev/null
    fi
}

# The IPv4 address of the first RDMA device's netdev: what lessons and tests connect to natively.
native_address() {
    local netdev
    netdev=$(rdma link show 2>/dev/null | awk '/netdev/ { for (i = 1; i < NF; i++) if ($i == "netdev") { print $(i + 1); exit } }')
    [ -n "$netdev" ] && ip -4 -o addr show dev "$netdev" 2>/dev/null | awk '{ split($4, a, "/"); print a[1]; exit }'
}

if [ "$mode" = auto ]; then
    if host_has_rdma_device; then mode=native; else mode=vm; fi
fi

if [ "$mode" = native ]; then
    host_has_rdma_device || die "--native: no RDMA device on this host (ibv_devices lists none)"
    [ "$verbose" = 1 ] && note "RDMA device found on this host: running natively"
    RDMALAB_ADDR=${RDMALAB_ADDR:-$(native_address || true)} RDMALAB_IN_LAB=native exec timeout --kill-after=5 "$timeout_s" "$@"
fi

# ---- The Soft-RoCE guest ------------------------------------------------------------------
command -v "$qemu" >/dev/null ||
    die "$qemu is missing: install it with 'apt-get install qemu-system-x86' (or run ./rdmalab deps)"
kernel=$(ls -1 /boot/vmlinuz-* 2>/dev/null | sort -V | tail -n 1 || true)
[ -n "$kernel" ] ||
    die "no Debian kernel in /boot: install one with 'apt-get install linux-image-amd64' (or run ./rdmalab deps)"
kver=${kernel#/boot/vmlinuz-}
[ -r "$kernel" ] || die "$kernel is not readable by $(id -un): run as root, or make it readable (chmod 0644)"
[ -d /lib/modules/$kver ] || die "/lib/modules/$kver is missing: reinstall linux-image-$kver"
[ -x /bin/busybox ] || die "/bin/busybox is missing: install it with 'apt-get install busybox-static'"
for tool in modprobe cpio; do
    command -v $tool >/dev/null || die "$tool is missing: install it with 'apt-get install ${tool/modprobe/kmod}'"
done

# The initramfs: busybox, the init script and the modules, cached per kernel and init script.
guest_modules=(virtio_pci 9pnet_virtio 9p crc32_generic rdma_rxe rdma_ucm veth)
mkdir -p "$cache_dir"
key=$( (echo "$kver ${guest_modules[*]}"; cat "$lab_dir/guest-init.sh") | sha256sum | cut -c1-16)
initramfs=$cache_dir/initramfs-$kver-$key.cpio
if [ ! -s "$initramfs" ]; then
    stage=$(mktemp -d "$cache_dir/stage.XXXXXX")
    trap 'rm -rf "$stage"' EXIT
    mkdir -p "$stage"/{bin,dev,proc,sys,lab/modules}
    cp /bin/busybox "$stage/bin/busybox"
    for applet in sh mount insmod cat cut grep usleep stty hostname chroot mkdir mkfifo sync poweroff echo; do
        ln -s busybox "$stage/bin/$applet"
    done
    cp "$lab_dir/guest-init.sh" "$stage/init"
    : >"$stage/lab/modules.order"
    for module in "${guest_modules[@]}"; do
        modprobe -S "$kver" --show-depends "$module" 2>/dev/null | awk '$1 == "insmod" { print $2 }' >>"$stage/lab/modules.list" ||
            die "modprobe cannot resolve module $module for kernel $kver"
    done
    # Keep the first occurrence of each module: that order satisfies every dependency.
    while read -r path; do
        name=$(basename "$path")
        case "$name" in
            *.ko) cp "$path" "$stage/lab/modules/$name" ;;
            *.ko.xz) name=${name%.xz}; xz -dc "$path" >"$stage/lab/modules/$name" ;;
            *.ko.zst) name=${name%.zst}; zstd -qdc "$path" >"$stage/lab/modules/$name" ;;
            *) die "unexpected module file $path" ;;
        esac
        grep -qx "$name" "$stage/lab/modules.order" || echo "$name" >>"$stage/lab/modules.order"
    done <"$stage/lab/modules.list"
    grep -q rdma_rxe.ko "$stage/lab/modules.order" || die "kernel $kver has no rdma_rxe module"
    (cd "$stage" && find . | cpio -o -H newc --quiet >"$initramfs.tmp") && mv "$initramfs.tmp" "$initramfs"
    find "$cache_dir" -maxdepth 1 -name 'initramfs-*.cpio' ! -path "$initramfs" -delete   # stale versions
    rm -rf "$stage"
    trap - EXIT
fi

# The kernel ships xz-compressed; decompressing it under emulation costs ~2.5 s of every boot.
# Unpacked once here, the ELF image boots through its PVH entry point instead.
boot_kernel=$cache_dir/vmlinux-$kver
if [ ! -s "$boot_kernel" ]; then
    offset=$(grep -abo $'\xfd7zXZ\x00' "$kernel" | head -n 1 | cut -d: -f1 || true)
    if [ -n "$offset" ] && tail -c +$((offset + 1)) "$kernel" | xz -dc >"$boot_kernel.tmp" 2>/dev/null ||
        [ "$(head -c 4 "$boot_kernel.tmp" 2>/dev/null)" = $'\x7fELF' ]; then
        mv "$boot_kernel.tmp" "$boot_kernel"
    else
        rm -f "$boot_kernel.tmp"
        boot_kernel=$kernel
    fi
fi

# Paths the guest covers with fresh tmpfs mounts: the host's files there are not visible.
guest_hides() { [[ $1 == /tmp || $1 == /tmp/* || $1 == /run || $1 == /run/* || $1 == /var/tmp || $1 == /var/tmp/* ]]; }

# A path the reader passes must mean the same file in the guest. Under /tmp, /run and /var/tmp
# it would not (a file written there vanishes with the guest, one read from there is missing):
# refused, unless it lies inside the repository, which the guest shares at its own path.
for arg in "$@"; do
    path=$arg
    [[ $arg == -*=/* ]] && path=${arg#*=}
    [[ $path == /* ]] || continue
    [[ $path == "$repo" || $path == "$repo"/* ]] && continue
    guest_hides "$path" || continue
    hidden=/tmp
    [[ $path == /run || $path == /run/* ]] && hidden=/run
    [[ $path == /var/tmp || $path == /var/tmp/* ]] && hidden=/var/tmp
    die "$path is under $hidden, which the guest covers with an empty tmpfs of its own: use a path inside the repository ($repo), the folder the guest shares writable"
done

# Unblocks a copier still waiting to open its FIFO (QEMU never opened it) and lets every copier
# end: opening a FIFO read-write never blocks, and closing it again leaves readers at EOF.
release_copiers() {
    local fifo fd
    for fifo in "$run_dir/stdout.fifo" "$run_dir/stderr.fifo"; do
        [ -p "$fifo" ] || continue
        exec {fd}<>"$fifo"
        exec {fd}>&-
    done
    local waited=0
    while [ -n "$copiers" ] && kill -0 $copiers 2>/dev/null && [ $waited -lt 50 ]; do
        sleep 0.1
        waited=$((waited + 1))
    done
    if [ -n "$copiers" ]; then
        kill $copiers 2>/dev/null || true
        wait $copiers 2>/dev/null || true
    fi
    copiers=""
    rm -f "$run_dir/stdout.fifo" "$run_dir/stderr.fifo"
}

stop_qemu() {
    [ -n "$qemu_pid" ] || return 0
    kill -KILL "$qemu_pid" 2>/dev/null || true
    wait "$qemu_pid" 2>/dev/null || true
    qemu_pid=""
}

# The run directory: the command script going in, the status coming out.
run_dir=$(mktemp -d "$cache_dir/run.XXXXXX")
run_rel=${run_dir#"$repo"/}
qemu_pid=""
copiers=""
cleanup() {
    set +e   # best effort: a failing kill here must not change the exit code
    stop_qemu
    release_copiers
    rm -rf "$run_dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "$repo" >"$run_dir/workdir"
{
    echo '# Written by lab/lab.sh: the environment and command to run inside the guest.'
    export -p | grep -vE '^declare -x (BASH_[A-Z_]*|SHLVL|OLDPWD|PWD|_)=' || true
    echo "export RDMALAB_IN_LAB=vm RDMALAB_ADDR=$guest_address"
    if [[ $PWD == "$repo" || $PWD == "$repo"/* ]] || ! guest_hides "$PWD"; then
        printf 'cd %q || exit 126\n' "$PWD"
    else
        printf 'cd %q || exit 126\n' "$repo"
    fi
    printf 'exec'; printf ' %q' "$@"; printf '\n'
} >"$run_dir/command.sh"
if [[ $PWD != "$repo" && $PWD != "$repo"/* ]] && guest_hides "$PWD"; then
    note "the working directory $PWD is a fresh tmpfs inside the guest: running from $repo"
fi


# ---- The accelerator: KVM where it works, TCG emulation otherwise --------------------------
# A /dev/kvm that exists is not proof that KVM can run this guest: nested and paravirtualised
# KVM (cloud and CI machines) may abort QEMU or stop the guest with an emulation failure. In
# auto mode the lab tries KVM, falls back to TCG in the same invocation when the guest shows
# no sign of life, and remembers that verdict for this host, kernel and QEMU.
qemu_version=$("$qemu" --version 2>/dev/null | head -n 1 || true)
[ -n "$qemu_version" ] || die "$qemu does not run ('$qemu --version' printed nothing): reinstall qemu-system-x86"
verdict_file=$cache_dir/accel-$(echo "$(hostname) $(uname -r) $(command -v "$qemu") $qemu_version" | sha256sum | cut -c1-16)
remembered=""
[ -s "$verdict_file" ] && remembered=$(head -n 1 "$verdict_file")
kvm_offered=0
[ -w "$kvm_device" ] && [ -r "$kvm_device" ] && kvm_offered=1
case "$accel_request" in
    kvm)
        [ "$kvm_offered" = 1 ] || die "--accel kvm: $kvm_device is missing or not read-writable by $(id -un)"
        accel_plan=kvm; accel_why="asked for" ;;
    tcg) accel_plan=tcg; accel_why="asked for" ;;
    auto)
        if [ "$kvm_offered" = 0 ]; then
            accel_plan=tcg; accel_why="no usable $kvm_device"
        elif [[ $remembered == tcg:* ]]; then
            accel_plan=tcg; accel_why="KVM could not run the guest here before (${remembered#tcg: }); RDMALAB_LAB_ACCEL=kvm retries it"
        else
            accel_plan=kvm; accel_why="$kvm_device is usable"
        fi ;;
esac

firmware=()
[ -r /usr/share/qemu/qboot.rom ] && firmware=(-bios /usr/share/qemu/qboot.rom)   # a minimal BIOS: boots faster
# Skipped at boot: crypto self-tests, Spectre-style mitigations (a throwaway guest), timer
# checks and PS/2 probing. Each costs tenths of a second under emulation.
boot_speedups="mitigations=off cryptomgr.notests no_timer_check i8042.noaux i8042.nokbd i8042.nopnp tsc=reliable clocksource=tsc"
stdout_tty=0; [ -t 1 ] && stdout_tty=1
stderr_tty=0; [ -t 2 ] && stderr_tty=1
# How long KVM may take to reach the guest's /init before it counts as not working: KVM boots
# in well under a second; TCG, which is not judged this way, needs about 2.5 s.
kvm_sign_of_life_s=${RDMALAB_LAB_KVM_PROBE_S:-8}

# QEMU's first line of complaint, for one-line reports.
qemu_complaint() {
    local line
    line=$(grep -m 1 -iE 'error|assert|fail|abort|cannot|denied|invalid' "$run_dir/qemu.err" 2>/dev/null ||
           grep -m 1 . "$run_dir/qemu.err" 2>/dev/null || true)
    echo "${line:-no message from QEMU}"
}

# boot ACCEL: one guest boot. Sets outcome to finished (QEMU exited after the command started,
# or at all when not probing), no-start (QEMU exited, or showed no sign of life, before the
# command started: worth retrying with TCG), or timeout; qemu_rc to QEMU's exit code.
boot() {
    local accel_name=$1 accel_args
    if [ "$accel_name" = kvm ]; then accel_args=(-accel kvm -cpu host); else accel_args=(-accel tcg,thread=multi -cpu max); fi
    rm -f "$run_dir/started" "$run_dir/status" "$run_dir/console.log" "$run_dir/qemu.err"
    local start_s
    start_s=$(date +%s)
    start_ns=$(date +%s%N)
    # ttyS0: the guest kernel's console, kept in a log; ttyS1/ttyS2: the command's stdout/stderr,
    # through FIFOs that `cat` copies to ours: that works whatever our stdout is (terminal, pipe,
    # file, socket) and never truncates or overwrites a file the caller redirected into.
    mkfifo "$run_dir/stdout.fifo" "$run_dir/stderr.fifo"
    cat "$run_dir/stdout.fifo" &
    copiers=$!
    cat "$run_dir/stderr.fifo" >&2 &
    copiers="$copiers $!"
    "$qemu" \
        "${accel_args[@]}" -smp 2 -m 2G "${firmware[@]}" \
        -nodefaults -no-user-config -display none -no-reboot -monitor none \
        -chardev file,id=console,path="$run_dir/console.log" -serial chardev:console \
        -chardev file,id=out,path="$run_dir/stdout.fifo" -serial chardev:out \
        -chardev file,id=err,path="$run_dir/stderr.fifo" -serial chardev:err \
        -nic none \
        -kernel "$boot_kernel" -initrd "$initramfs" \
        -append "console=ttyS0 quiet loglevel=1 panic=-1 $boot_speedups rdmalab.run=$run_rel rdmalab.verbose=$verbose rdmalab.stdout_tty=$stdout_tty rdmalab.stderr_tty=$stderr_tty" \
        -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
        -virtfs local,path="$repo",mount_tag=work,security_model=none,multidevs=remap \
        </dev/null 2>"$run_dir/qemu.err" &
    qemu_pid=$!

    # Every wait has a limit: the guest gets timeout_s seconds, then it is killed and reported.
    local deadline=$((start_s + timeout_s)) probe_deadline=$((start_s + kvm_sign_of_life_s))
    outcome=finished
    while kill -0 "$qemu_pid" 2>/dev/null; do
        local now
        now=$(date +%s)
        if [ "$now" -ge "$deadline" ]; then
            outcome=timeout
            break
        fi
        if [ "$accel_name" = kvm ] && [ "$now" -ge "$probe_deadline" ] && [ ! -e "$run_dir/started" ] &&
            ! grep -q '^rdmalab-guest: alive' "$run_dir/console.log" 2>/dev/null; then
            outcome=no-start
            no_start_why="no sign of life from the guest within $kvm_sign_of_life_s s"
            grep -q 'KVM internal error' "$run_dir/qemu.err" 2>/dev/null && no_start_why=$(qemu_complaint)
            break
        fi
        sleep 0.1
    done
    qemu_rc=0
    if [ "$outcome" = finished ]; then
        wait "$qemu_pid" || qemu_rc=$?
        qemu_pid=""
        if [ ! -e "$run_dir/started" ] && [ ! -s "$run_dir/status" ]; then
            outcome=no-start
            no_start_why="$(qemu_complaint); qemu exit code $qemu_rc"
        fi
    else
        stop_qemu
    fi
    release_copiers
    end_ns=$(date +%s%N)
}

remember() { echo "$1" >"$verdict_file.tmp" && mv "$verdict_file.tmp" "$verdict_file"; }

accel_label() { if [ "$1" = kvm ]; then echo KVM; else echo "TCG emulation"; fi; }
note "no RDMA device on this host: booting the Soft-RoCE lab (kernel $kver, $(accel_label "$accel_plan"): $accel_why)…"
boot "$accel_plan"
if [ "$outcome" = no-start ] && [ "$accel_plan" = kvm ]; then
    if [ "$accel_request" = kvm ]; then
        note "KVM cannot run the guest ($no_start_why); --accel kvm was asked for, so there is no fallback"
        exit 2
    fi
    note "KVM is present but cannot run the guest ($no_start_why): using TCG emulation"
    remember "tcg: $no_start_why"
    accel_plan=tcg
    boot tcg
elif [ "$accel_plan" = kvm ] && [ -e "$run_dir/started" ] && [ "$remembered" != kvm ]; then
    remember kvm
fi

case "$outcome" in
    timeout)
        note "the guest did not finish within $timeout_s s: killed it (raise the limit with --timeout SEC or RDMALAB_LAB_TIMEOUT)"
        exit 124 ;;
    no-start)
        note "the guest did not start under $(accel_label "$accel_plan"): $no_start_why"
        [ -s "$run_dir/qemu.err" ] && sed 's/^/lab: qemu: /' "$run_dir/qemu.err" | tail -n 5 >&2
        exit 2 ;;
esac

if [ "$verbose" = 1 ]; then
    [ -s "$run_dir/qemu.err" ] && sed 's/^/lab: qemu: /' "$run_dir/qemu.err" >&2
    if [ -e "$run_dir/started" ]; then
        started_ns=$(stat -c %.9Y "$run_dir/started" | tr -d .)
        note "$(awk -v a="$start_ns" -v b="$started_ns" -v c="$end_ns" -v accel="$(accel_label "$accel_plan")" 'BEGIN { printf "boot to command %.2f s, whole run %.2f s (%s)", (b - a) / 1e9, (c - a) / 1e9, accel }')"
    fi
fi
if [ ! -s "$run_dir/status" ]; then
    note "the guest stopped without reporting a status (qemu exit code $qemu_rc: $(qemu_complaint)); the end of its console:"
    tail -n 20 "$run_dir/console.log" >&2 2>/dev/null || true
    exit 2
fi
status=$(cat "$run_dir/status")
case "$status" in
    setup:*) die "guest setup failed: ${status#setup: }" ;;
    *[!0-9]*) die "unreadable status from the guest: '$status'" ;;
esac
exit "$status"
