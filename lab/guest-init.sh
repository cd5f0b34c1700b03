#!/bin/sh
# PID 1 of the Soft-RoCE lab guest (busybox sh): load the RDMA modules, mount the host's root
# read-only and the repository writable, bring up rxe0 (on a veth when alone, on the NIC when
# one of several hosts on the wire; with rails, rxe0, rxe1, … one per rail), run the command,
# power off.
# The host side (lab/lab.sh) reads <run dir>/status afterwards: the command's exit code, or
# "setup: <what failed>".
PATH=/bin
export PATH
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# The host watches the console for this line: under KVM it tells a guest that runs from one
# that never started (lab/lab.sh then falls back to TCG emulation).
echo "rdmalab-guest: alive" >/dev/ttyS0
# ttyS0 is the kernel's console (a log file on the host); ttyS1 and ttyS2 are the command's
# stdout and stderr. Raw mode: bytes pass unchanged, as through a pipe.
stty raw -echo </dev/ttyS1
stty raw -echo </dev/ttyS2
exec >/dev/ttyS1 2>/dev/ttyS2

run_rel=""
host=1
hosts=1
rails=1
mtu=""
verbose=0
stdout_tty=1
stderr_tty=1
for word in $(cat /proc/cmdline); do
    case "$word" in
        rdmalab.run=*) run_rel=${word#rdmalab.run=} ;;
        rdmalab.host=*) host=${word#rdmalab.host=} ;;
        rdmalab.hosts=*) hosts=${word#rdmalab.hosts=} ;;
        rdmalab.rails=*) rails=${word#rdmalab.rails=} ;;
        rdmalab.mtu=*) mtu=${word#rdmalab.mtu=} ;;
        rdmalab.verbose=1) verbose=1 ;;
        rdmalab.stdout_tty=0) stdout_tty=0 ;;
        rdmalab.stderr_tty=0) stderr_tty=0 ;;
    esac
done

say() { [ "$verbose" = 1 ] && echo "lab-guest: [$(cut -d" " -f1 /proc/uptime) s] $*" >&2; }
fail() {
    echo "lab-guest: $*" >&2
    [ -w /lab/work/"$run_rel" ] && echo "setup: $*" >/lab/work/"$run_rel"/status
    sync
    poweroff -f
}

# Module order comes from the host's `modprobe --show-depends` (see lab/lab.sh).
while read -r module; do
    insmod /lab/modules/"$module" || fail "insmod $module failed"
done </lab/modules.order
if [ "$hosts" -gt 1 ]; then
    while read -r module; do
        insmod /lab/modules/"$module" || fail "insmod $module failed"
    done </lab/modules.wire
    # No IPv6 on the wire: its router and neighbour solicitations would only clutter captures.
    echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6
    echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6
fi

say "modules loaded"
mkdir -p /host /lab/work
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=524288 hostroot /host ||
    fail "mounting the host root over 9p failed"
mount -t 9p -o trans=virtio,version=9p2000.L,rw,msize=524288 work /lab/work ||
    fail "mounting the repository over 9p failed"
[ -n "$run_rel" ] && [ -d /lab/work/"$run_rel" ] || fail "run directory '$run_rel' not found"
run_dir=/lab/work/$run_rel
work_path=$(cat "$run_dir"/workdir) || fail "no workdir file in the run directory"

mount -t proc proc /host/proc
mount -t sysfs sysfs /host/sys
mount -t devtmpfs devtmpfs /host/dev
mkdir -p /host/dev/shm /host/dev/pts 2>/dev/null
mount -t tmpfs tmpfs /host/dev/shm
mount -t devpts devpts /host/dev/pts
mount -t tmpfs tmpfs /host/tmp
mount -t tmpfs tmpfs /host/run
mount -t tmpfs tmpfs /host/var/tmp
# The repository as the host root shows it: read-only and cached (cache=loose), where the
# writable share below is uncached, so each exec reads its binary over 9p again (a lesson built
# with ASan loads 6.7 MB: about half a second). Only for what nothing rewrites during the boot:
# tests/sanitize/lab.sh binds its build directories' bin/ from here.
if [ -d /host"$work_path" ]; then
    mkdir -p /host/run/rdmalab-repo-view
    mount -o bind /host"$work_path" /host/run/rdmalab-repo-view ||
        fail "bind-mounting the cached view of the repository failed"
fi
# The repository appears at its own path inside the chroot, writable; the rest is read-only.
# Mounted last, so a repository under /tmp is not hidden by the fresh /tmp (mkdir makes the
# mount point there; elsewhere it exists already on the read-only root).
mkdir -p /host"$work_path" 2>/dev/null
mount -o bind /lab/work /host"$work_path" || fail "bind-mounting the repository at $work_path failed"
hostname rdmalab-lab
say "host root mounted"

in_root() { chroot /host /usr/bin/env PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
address=198.51.100.$host
if [ "$hosts" = 1 ]; then
    # One rxe device on one end of a veth pair. Server and client both use its one address:
    # rxe loops the packets back. No NIC exists (-nic none): nothing leaves this guest.
    netdev=veth0
    # One `ip` process for all five steps: every exec reads its libraries over 9p.
    in_root ip -batch - <<'IP' || fail "setting up lo and the veth pair (198.51.100.1/24 on veth0) failed"
link set lo up
link add veth0 type veth peer name veth1
addr add 198.51.100.1/24 dev veth0
link set veth1 up
link set veth0 up
IP
    in_root rdma link add rxe0 type rxe netdev $netdev || fail "rdma link add rxe0 type rxe netdev $netdev failed"
    netdevs=$netdev
else
    # The wire: the NICs are the guest's only links, to the other hosts and nowhere else (no
    # default route). The star's centre (host 1 when there are more than two) bridges its ports
    # and puts its address and rxe on the bridge. With rails (rdmalab.rails=N) every rail is such
    # a wire of its own: a NIC's MAC names its rail (52:54:00:5e:… rail 1, 52:54:00:6R:… rail R,
    # lab/lab.sh), rail 1's NICs keep their names (eth0, …; br0 at the centre) and rail R's are
    # renamed rRethM (rRbr0), M the centre's port to host M+2 (0 on the other hosts).
    # rail_ports RAIL: that rail's NICs, by the names they will have.
    rail_ports() {
        for nic in /sys/class/net/eth* /sys/class/net/r[2-4]eth*; do
            [ -e "$nic" ] || continue
            read -r mac <"$nic/address"
            case $mac in
                52:54:00:5e:*) [ "$1" = 1 ] && echo "${nic##*/}" ;;
                52:54:00:6$1:*)
                    last=${mac##*:}
                    if [ "$host" = 1 ]; then echo "r$1eth$((${last#0} - 2))"; else echo "r$1eth0"; fi ;;
            esac
        done
    }
    # Rail R's address: 198.51.100.HOST/24 on rail 1, 203.0.113.(64 (R - 2) + HOST)/26 on the others.
    rail_address() { if [ "$1" = 1 ]; then echo "$address/24"; else echo "203.0.113.$((64 * ($1 - 2) + host))/26"; fi; }
    {
        echo "link set lo up"
        for nic in /sys/class/net/eth*; do
            read -r mac <"$nic/address"
            case $mac in
                52:54:00:6[2-4]:*)
                    rail=${mac#52:54:00:6}
                    last=${mac##*:}
                    if [ "$host" = 1 ]; then m=$((${last#0} - 2)); else m=0; fi
                    echo "link set ${nic##*/} name r${rail%%:*}eth$m" ;;
            esac
        done
        rail=1
        while [ $rail -le "$rails" ]; do
            ports=$(rail_ports $rail)
            [ -n "$ports" ] || fail "no NIC for rail $rail of the wire"
            prefix=""
            [ $rail = 1 ] || prefix=r$rail
            set -- $ports
            if [ $# -gt 1 ]; then
                echo "link add ${prefix}br0 type bridge"
                for nic in $ports; do
                    [ -z "$mtu" ] || echo "link set $nic mtu $mtu"
                    echo "link set $nic master ${prefix}br0"
                    echo "link set $nic up"
                done
                [ -z "$mtu" ] || echo "link set ${prefix}br0 mtu $mtu"
                echo "addr add $(rail_address $rail) dev ${prefix}br0"
                echo "link set ${prefix}br0 up"
            else
                [ -z "$mtu" ] || echo "link set $1 mtu $mtu"
                echo "addr add $(rail_address $rail) dev $1"
                echo "link set $1 up"
            fi
            rail=$((rail + 1))
        done
    } >/wire.ip
    in_root ip -batch - </wire.ip || fail "setting up the wire ($(tr '\n' ';' </wire.ip)) failed"
    # The links are up once the other ends are connected: wait for the carrier (at most 5 s).
    for nic in /sys/class/net/eth* /sys/class/net/r[2-4]eth*; do
        [ -e "$nic" ] || continue
        tries=0
        until [ "$(cat $nic/carrier 2>/dev/null)" = 1 ]; do
            tries=$((tries + 1))
            [ $tries -gt 100 ] && fail "${nic##*/} has no carrier after 5 s: the other end of the link never connected"
            usleep 50000
        done
    done
    # One rxe device per rail: rxe0 on rail 1, rxe(R-1) on rail R.
    netdevs=""
    rail=1
    while [ $rail -le "$rails" ]; do
        set -- $(rail_ports $rail)
        prefix=""
        [ $rail = 1 ] || prefix=r$rail
        netdev=$1
        [ $# -gt 1 ] && netdev=${prefix}br0
        in_root rdma link add rxe$((rail - 1)) type rxe netdev $netdev ||
            fail "rdma link add rxe$((rail - 1)) type rxe netdev $netdev failed"
        netdevs="$netdevs $netdev"
        rail=$((rail + 1))
    done
fi
device=0
for netdev in $netdevs; do
    tries=0
    until grep -q ACTIVE /sys/class/infiniband/rxe$device/ports/1/state 2>/dev/null; do
        tries=$((tries + 1))
        [ $tries -gt 100 ] && fail "rxe$device port 1 did not become ACTIVE within 5 s"
        usleep 50000
    done
    say "rxe$device is ACTIVE on $netdev"
    device=$((device + 1))
done

# Where the host's stdout/stderr is no terminal, the command gets a pipe there too, so it
# behaves as it would on the host (no colours, no progress bars in a CI log).
out=/dev/ttyS1
err=/dev/ttyS2
copiers=""
if [ "$stdout_tty" = 0 ]; then
    mkfifo /stdout.pipe || fail "mkfifo /stdout.pipe failed"
    cat /stdout.pipe >/dev/ttyS1 &
    copiers="$copiers $!"
    out=/stdout.pipe
fi
if [ "$stderr_tty" = 0 ]; then
    mkfifo /stderr.pipe || fail "mkfifo /stderr.pipe failed"
    cat /stderr.pipe >/dev/ttyS2 &
    copiers="$copiers $!"
    err=/stderr.pipe
fi

# On the wire every host starts its command at once, when all are ready: a command must not
# reach for a peer whose link or bridge is not up yet. The host side (lab.sh) creates "go" in
# the run's folder once every host has said "ready".
if [ "$hosts" -gt 1 ]; then
    : >"$run_dir"/ready
    tries=0
    until [ -e "$run_dir"/../go ]; do
        tries=$((tries + 1))
        [ $tries -gt 1200 ] && fail "the other hosts were not ready within 60 s"
        usleep 20000
    done
    say "all $hosts hosts are ready"
fi

# The command itself: a bash script the host wrote, run inside the host's root.
: >"$run_dir"/started
chroot /host /bin/bash "$work_path/$run_rel/command.sh" </dev/null >"$out" 2>"$err"
status=$?
[ -n "$copiers" ] && wait $copiers
echo $status >"$run_dir"/status
sync
# On the wire this host's link (and, at a star's centre, the bridge) stays up until every
# host's command has ended: lab.sh creates "done" then.
if [ "$hosts" -gt 1 ]; then
    until [ -e "$run_dir"/../done ]; do usleep 50000; done
fi
poweroff -f
