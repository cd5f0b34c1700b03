# Sourced by lab/lab.sh: the guest's boot files, prepared once and cached in build/lab.
#   $kernel, $kver      the newest Debian kernel in /boot (discovered, never hard-coded), or
#                       $lab_kernel when set (lab.sh --kernel FILE: a Debian kernel unpacked
#                       elsewhere, ROOT/boot/vmlinuz-VER with its modules in ROOT/lib/modules/VER)
#   $initramfs          busybox, lab/guest-init.sh as /init, and the modules in load order:
#                       lab/modules.order for every guest, lab/modules.wire for the wire's guests
#   $boot_kernel        the kernel unpacked to ELF (boots through PVH: no decompression per boot)
# Needs: $cache_dir, $lab_dir, die().

modules_root=""   # modprobe's -d: the tree holding lib/modules/$kver ("" means /)
if [ -n "${lab_kernel:-}" ]; then
    [[ $(basename "$lab_kernel") == vmlinuz-* ]] && [ -r "$lab_kernel" ] ||
        die "--kernel $lab_kernel: not a readable ROOT/boot/vmlinuz-VERSION (unpack a Debian linux-image package with dpkg-deb -x)"
    kernel=$(realpath "$lab_kernel")
    kver=${kernel##*/vmlinuz-}
    modules_root=$(dirname "$(dirname "$kernel")")
    [ -d "$modules_root/lib/modules/$kver" ] || die "--kernel $lab_kernel: $modules_root/lib/modules/$kver is missing"
    # An unpacked package has no modules.dep (the package's postinst makes it): make it once.
    [ -s "$modules_root/lib/modules/$kver/modules.dep" ] || depmod -b "$modules_root" "$kver" ||
        die "--kernel $lab_kernel: depmod -b $modules_root $kver failed"
else
    kernel=$(ls -1 /boot/vmlinuz-* 2>/dev/null | sort -V | tail -n 1 || true)
    [ -n "$kernel" ] ||
        die "no Debian kernel in /boot: install one with 'apt-get install linux-image-amd64' (or run ./rdmalab deps)"
    kver=${kernel#/boot/vmlinuz-}
    [ -r "$kernel" ] || die "$kernel is not readable by $(id -un): run as root, or make it readable (chmod 0644)"
    [ -d /lib/modules/$kver ] || die "/lib/modules/$kver is missing: reinstall linux-image-$kver"
fi
[ -x /bin/busybox ] || die "/bin/busybox is missing: install it with 'apt-get install busybox-static'"
for tool in modprobe cpio; do
    command -v $tool >/dev/null || die "$tool is missing: install it with 'apt-get install ${tool/modprobe/kmod}'"
done

# Every guest: 9p for the shares, rxe (which asks the crypto API for crc32), veth for the
# one-host lab. The wire's guests also: their NIC, netem for faults, a bridge for a star.
guest_modules=(virtio_pci 9pnet_virtio 9p crc32_generic rdma_rxe rdma_ucm veth)
wire_modules=(virtio_net sch_netem bridge)
mkdir -p "$cache_dir"
key=$( (echo "$kver ${guest_modules[*]} / ${wire_modules[*]}"; cat "$lab_dir/guest-init.sh") | sha256sum | cut -c1-16)
initramfs=$cache_dir/initramfs-$kver-$key.cpio

# add_modules LIST_FILE MODULE...: each module's dependencies first, every .ko once (modules
# already in an earlier list are not repeated).
add_modules() {
    local list=$1 module path name
    shift
    for module in "$@"; do
        modprobe ${modules_root:+-d "$modules_root"} -S "$kver" --show-depends "$module" >"$stage/deps.raw" 2>/dev/null ||
            die "modprobe cannot resolve module $module for kernel $kver"
        awk '$1 == "insmod" { print $2 }' "$stage/deps.raw" >"$stage/deps"
        [ -s "$stage/deps" ] || grep -q '^builtin' "$stage/deps.raw" || die "kernel $kver has no module $module"
        while read -r path; do
            name=$(basename "$path")
            case "$name" in
                *.ko) ;;
                *.ko.xz) name=${name%.xz} ;;
                *.ko.zst) name=${name%.zst} ;;
                *) die "unexpected module file $path" ;;
            esac
            [ -e "$stage/lab/modules/$name" ] && continue
            case "$path" in
                *.ko) cp "$path" "$stage/lab/modules/$name" ;;
                *.ko.xz) xz -dc "$path" >"$stage/lab/modules/$name" ;;
                *.ko.zst) zstd -qdc "$path" >"$stage/lab/modules/$name" ;;
            esac
            echo "$name" >>"$list"
        done <"$stage/deps"
    done
}

if [ ! -s "$initramfs" ]; then
    stage=$(mktemp -d "$cache_dir/stage.XXXXXX")
    trap 'rm -rf "$stage"' EXIT
    mkdir -p "$stage"/{bin,dev,proc,sys,lab/modules}
    cp /bin/busybox "$stage/bin/busybox"
    for applet in sh mount insmod cat cut grep usleep sleep stty hostname chroot mkdir mkfifo sync poweroff echo; do
        ln -s busybox "$stage/bin/$applet"
    done
    cp "$lab_dir/guest-init.sh" "$stage/init"
    : >"$stage/lab/modules.order"
    : >"$stage/lab/modules.wire"
    add_modules "$stage/lab/modules.order" "${guest_modules[@]}"
    add_modules "$stage/lab/modules.wire" "${wire_modules[@]}"
    grep -q rdma_rxe.ko "$stage/lab/modules.order" || die "kernel $kver has no rdma_rxe module"
    rm -f "$stage/deps" "$stage/deps.raw"
    (cd "$stage" && find . | cpio -o -H newc --quiet >"$initramfs.tmp") && mv "$initramfs.tmp" "$initramfs"
    find "$cache_dir" -maxdepth 1 -name "initramfs-$kver-*.cpio" ! -path "$initramfs" -delete   # stale versions
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
