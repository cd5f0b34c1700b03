#!/usr/bin/env bash
# The lab: run a command where an RDMA device exists. Natively when this host has one;
# otherwise inside a QEMU guest running Debian's kernel with Soft-RoCE (rdma_rxe).
# Usage: lab/lab.sh [--vm|--native] [--timeout SEC] [--verbose] -- CMD [ARGS...]
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lab_dir=$repo/lab
cache_dir=$repo/build/lab
guest_address=198.51.100.1   # TEST-NET-2, only ever inside the guest

mode=${RDMALAB_LAB_MODE:-auto}
timeout_s=${RDMALAB_LAB_TIMEOUT:-600}
verbose=${RDMALAB_LAB_VERBOSE:-0}

die() { echo "lab: $*" >&2; exit 2; }
note() { echo "lab: $*" >&2; }

while [ $# -gt 0 ]; do
    case "$1" in
        --vm) mode=vm ;;
        --native) mode=native ;;
        --verbose|-v) verbose=1 ;;
        --timeout) [ $# -ge 2 ] || die "--timeout needs a number of seconds"; timeout_s=$2; shift ;;
        --timeout=*) timeout_s=${1#--timeout=} ;;
        --) shift; break ;;
        -*) die "unknown option '$1' (usage: rdmalab lab [--vm|--native] [--timeout SEC] [--verbose] -- CMD [ARGS...])" ;;
        *) break ;;
    esac
    shift
done
[ $# -gt 0 ] || die "no command given (usage: rdmalab lab [--vm|--native] [--timeout SEC] [--verbose] -- CMD [ARGS...])"
[[ $timeout_s =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a whole number of seconds, got '$timeout_s'"
case "$mode" in auto|vm|native) ;; *) die "RDMALAB_LAB_MODE must be auto, vm or native, got '$mode'" ;; esac

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
command -v qemu-system-x86_64 >/dev/null ||
    die "qemu-system-x86_64 is missing: install it with 'apt-get install qemu-system-x86' (or run ./rdmalab deps)"
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

# The run directory: the command script going in, the status coming out.
run_dir=$(mktemp -d "$cache_dir/run.XXXXXX")
run_rel=${run_dir#"$repo"/}
qemu_pid=""
copiers=""
cleanup() {
    set +e   # best effort: a failing kill here must not change the exit code
    [ -n "$qemu_pid" ] && kill -KILL "$qemu_pid" 2>/dev/null && wait "$qemu_pid" 2>/dev/null
    [ -n "$copiers" ] && kill $copiers 2>/dev/null
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

accel=(-accel tcg,thread=multi -cpu max)
accel_name=tcg
if [ -w /dev/kvm ]; then accel=(-accel kvm -cpu host); accel_name=kvm; fi
firmware=()
[ -r /usr/share/qemu/qboot.rom ] && firmware=(-bios /usr/share/qemu/qboot.rom)   # a minimal BIOS: boots faster

echo "lab: no RDMA device on this host: booting the Soft-RoCE lab (kernel $kver, $accel_name)…" >&2
# Skipped at boot: crypto self-tests, Spectre-style mitigations (a throwaway guest), timer
# checks and PS/2 probing. Each costs tenths of a second under emulation.
boot_speedups="mitigations=off cryptomgr.notests no_timer_check i8042.noaux i8042.nokbd i8042.nopnp tsc=reliable clocksource=tsc"
stdout_tty=0; [ -t 1 ] && stdout_tty=1
stderr_tty=0; [ -t 2 ] && stderr_tty=1
start_ns=$(date +%s%N)
# ttyS0: the guest kernel's console, kept in a log; ttyS1/ttyS2: the command's stdout/stderr,
# through FIFOs that `cat` copies to ours: that works whatever our stdout is (terminal, pipe,
# file, socket) and never truncates or overwrites a file the caller redirected into.
mkfifo "$run_dir/stdout.fifo" "$run_dir/stderr.fifo"
cat "$run_dir/stdout.fifo" &
copiers=$!
cat "$run_dir/stderr.fifo" >&2 &
copiers="$copiers $!"
qemu-system-x86_64 \
    "${accel[@]}" -smp 2 -m 2G "${firmware[@]}" \
    -nodefaults -no-user-config -display none -no-reboot -monitor none \
    -chardev file,id=console,path="$run_dir/console.log" -serial chardev:console \
    -chardev file,id=out,path="$run_dir/stdout.fifo" -serial chardev:out \
    -chardev file,id=err,path="$run_dir/stderr.fifo" -serial chardev:err \
    -nic none \
    -kernel "$boot_kernel" -initrd "$initramfs" \
    -append "console=ttyS0 quiet loglevel=1 panic=-1 $boot_speedups rdmalab.run=$run_rel rdmalab.verbose=$verbose rdmalab.stdout_tty=$stdout_tty rdmalab.stderr_tty=$stderr_tty" \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    -virtfs local,path="$repo",mount_tag=work,security_model=none,multidevs=remap \
    </dev/null &
qemu_pid=$!

# Every wait has a limit: the guest gets timeout_s seconds, then it is killed and reported.
deadline=$((start_ns / 1000000000 + timeout_s))
while kill -0 "$qemu_pid" 2>/dev/null; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
        kill -KILL "$qemu_pid" 2>/dev/null; wait "$qemu_pid" 2>/dev/null || true; qemu_pid=""
        wait $copiers
        note "the guest did not finish within $timeout_s s: killed it (raise the limit with --timeout SEC or RDMALAB_LAB_TIMEOUT)"
        exit 124
    fi
    sleep 0.1
done
qemu_rc=0; wait "$qemu_pid" || qemu_rc=$?; qemu_pid=""
wait $copiers
end_ns=$(date +%s%N)

if [ "$verbose" = 1 ] && [ -e "$run_dir/started" ]; then
    started_ns=$(stat -c %.9Y "$run_dir/started" | tr -d .)
    note "$(awk -v a="$start_ns" -v b="$started_ns" -v c="$end_ns" 'BEGIN { printf "boot to command %.2f s, whole run %.2f s", (b - a) / 1e9, (c - a) / 1e9 }')"
fi
if [ ! -s "$run_dir/status" ]; then
    note "the guest stopped without reporting a status (qemu exit code $qemu_rc); the end of its console:"
    tail -n 20 "$run_dir/console.log" >&2 2>/dev/null || true
    exit 2
fi
status=$(cat "$run_dir/status")
case "$status" in
    setup:*) die "guest setup failed: ${status#setup: }" ;;
    *[!0-9]*) die "unreadable status from the guest: '$status'" ;;
esac
exit "$status"
