#!/usr/bin/env bash
# The lab: run a command where an RDMA device exists. Natively when this host has one;
# otherwise inside QEMU guests running Debian's kernel with Soft-RoCE (rdma_rxe): one guest by
# default, or --hosts N guests joined by a virtual link (the wire), captured and faulted at will.
# Usage: lab/lab.sh [OPTIONS] -- CMD [ARGS...]      (lab/lab.sh --help lists the options)
set -eEuo pipefail
# A command that fails where nothing expects it ends the lab: say which, never exit silently.
trap '[[ $BASH_COMMAND == exit* ]] || echo "lab: internal error: line $LINENO: $BASH_COMMAND failed" >&2' ERR

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lab_dir=$repo/lab
cache_dir=$repo/build/lab
subnet=198.51.100   # TEST-NET-2, only ever inside the guests: host i is $subnet.i
# Rails 2-4 (--rails N): TEST-NET-3 split into /26s, likewise only inside the guests: host i on
# rail R is 203.0.113.(64 (R - 2) + i), rail 2 203.0.113.0/26, rail 3 .64/26, rail 4 .128/26.
rail_net=203.0.113

mode=${RDMALAB_LAB_MODE:-auto}
timeout_s=${RDMALAB_LAB_TIMEOUT:-600}
verbose=${RDMALAB_LAB_VERBOSE:-0}
accel_request=${RDMALAB_LAB_ACCEL:-auto}
qemu=${RDMALAB_QEMU:-qemu-system-x86_64}          # tests put a stand-in here
kvm_device=${RDMALAB_LAB_KVM_DEVICE:-/dev/kvm}    # likewise
usage="usage: rdmalab lab [--vm|--native] [--hosts N] [--on I CMD]... [--capture FILE.pcap] [--loss [I[.R]:]P%] [--delay [I[.R]:]MS] [--rate [I[.R]:]RATE] [--aqm I[.R]:RATE[:red|:droptail]] [--show-aqm RATE] [--link-down I[.R]@SEC[+SEC]] [--rails N] [--mtu 1500|9000] [--accel auto|kvm|tcg] [--kernel FILE] [--timeout SEC] [--verbose] -- CMD [ARGS...]"
help="$usage

One guest (the default): CMD runs with one rxe device on a veth, 198.51.100.1 (server and
client both use it; rxe loops the packets back).

--hosts N (2..4): N guests, host I at 198.51.100.I with its own rxe on its own virtio NIC,
joined by links that exist only as unix sockets here (N > 2: a star whose centre, host 1,
bridges its ports). Each host runs CMD (it reads RDMALAB_HOST, RDMALAB_HOSTS, RDMALAB_ADDR,
RDMALAB_ADDR_1..N and RDMALAB_ADDRS, all N comma-separated in host order: the ranks' list),
or its own command given with --on I 'CMD'. Output lines carry [hostI];
the exit status is the first failure's. RDMALAB_SHARED names a folder every host can write.
  --capture FILE.pcap   every frame on the links, as QEMU saw them, merged in time order
                        (a star: also each link apart, FILE.link-I.pcap for host I's link)
  --loss [I:]P%         netem on host I's egress (all hosts without I:), likewise:
  --delay [I:]MS        added delay in milliseconds
  --rate [I:]RATE       a rate limit (e.g. 100mbit, 10kbit)
  --aqm I:RATE[:red|:droptail]  a switch port's queue on host I's egress (the star's centre: its
                        port to each host): htb holds the port to RATE; packets with DSCP 26
                        (RoCE's usual class) get their own queue, RED marking ECN-capable
                        packets CE from 5 ms of queue at RATE (min) to 15 ms (max), probability
                        0.1 (red, the default), or a plain 20 ms FIFO (droptail); all other
                        traffic (ARP, TCP) a queue of its own that goes first. Not with --loss,
                        --delay or --rate on the same host. The tc commands: docs/congestion.md
  --show-aqm RATE[:red|:droptail]  print the tc commands --aqm gives one port (eth0), boot nothing
  --link-down I@T[+D]   host I takes its link down T seconds after its command starts (and up
                        again after D more seconds)
  --link-down I@signal[+D]  …or when any host's command creates \$RDMALAB_SHARED/link-down-I
  --rails N (2..4)      N links instead of one: every host gets N NICs, rail R on a link (N > 2
                        hosts: a star, host 1 bridging) of its own, a subnet of its own and an
                        rxe of its own, rxe(R-1); rail 1 is the wire above (198.51.100.I, rxe0),
                        rail R > 1 is 203.0.113.(64(R-2)+I)/26. Each command reads RDMALAB_RAILS,
                        RDMALAB_RAIL_ADDR_R, RDMALAB_RAIL_DEV_R, RDMALAB_RAIL_NETDEV_R (its own, on
                        rail R), RDMALAB_ADDR_I_R and RDMALAB_RAIL_ADDRS_R (every host's). A fault
                        names a host and a rail, I.R (--loss 2.2:5%, --link-down 2.2@signal: it
                        waits for link-down-2.2); I alone is I.1; no host: every host, every rail.
                        --capture F.pcap: rail 1 as above, rail R in F.rail-R.pcap (and
                        F.rail-R.link-I.pcap in a star)
  --mtu 1500|9000       the links' MTU (every rail); 9000 makes rxe's active MTU 4096, 1500
                        (the default) 1024
--kernel ROOT/boot/vmlinuz-VER: boot this Debian kernel (a linux-image package unpacked with
dpkg-deb -x, modules in ROOT/lib/modules/VER) instead of the newest one in /boot, which the
suite is tested on (docs/memory-registration.md#odp-rxe tried Debian's 6.12 this way)"

die() { echo "lab: $*" >&2; exit 2; }
note() { echo "lab: $*" >&2; }

hosts=1
capture=""
lab_kernel=""
declare -A on_command=()
faults=()      # "KIND|[HOST:]VALUE", as given
link_downs=()  # "HOST@WHEN[+FOR]", as given
show_aqm=""    # --show-aqm RATE: print one port's tc commands and exit
rails_arg=""   # --rails N, as given (rails: how many; 1 without it)
mtu=""         # --mtu 1500|9000, as given
while [ $# -gt 0 ]; do
    case "$1" in
        --vm) mode=vm ;;
        --native) mode=native ;;
        --verbose|-v) verbose=1 ;;
        --timeout) [ $# -ge 2 ] || die "--timeout needs a number of seconds"; timeout_s=$2; shift ;;
        --timeout=*) timeout_s=${1#--timeout=} ;;
        --accel) [ $# -ge 2 ] || die "--accel needs auto, kvm or tcg"; accel_request=$2; shift ;;
        --accel=*) accel_request=${1#--accel=} ;;
        --kernel) [ $# -ge 2 ] || die "--kernel needs a file, ROOT/boot/vmlinuz-VERSION"; lab_kernel=$2; shift ;;
        --kernel=*) lab_kernel=${1#--kernel=} ;;
        --hosts) [ $# -ge 2 ] || die "--hosts needs a number of hosts (1 to 4)"; hosts=$2; shift ;;
        --hosts=*) hosts=${1#--hosts=} ;;
        --on) [ $# -ge 3 ] || die "--on needs a host number and a command (--on 2 'CMD')"
              [[ $2 =~ ^[1-9]$ ]] || die "--on: '$2' is not a host number"
              [ -n "$3" ] || die "--on $2: the command is empty"
              on_command[$2]=$3; shift 2 ;;
        --capture) [ $# -ge 2 ] || die "--capture needs a file name"; capture=$2; shift ;;
        --loss|--delay|--rate|--aqm) [ $# -ge 2 ] || die "$1 needs a value"; faults+=("${1#--}|$2"); shift ;;
        --show-aqm) [ $# -ge 2 ] || die "--show-aqm needs a rate (20mbit, 20mbit:red, 5mbit:droptail)"; show_aqm=$2; shift ;;
        --link-down) [ $# -ge 2 ] || die "--link-down needs HOST@SECONDS[+SECONDS]"; link_downs+=("$2"); shift ;;
        --rails) [ $# -ge 2 ] || die "--rails needs a number of rails (2 to 4)"; rails_arg=$2; shift ;;
        --rails=*) rails_arg=${1#--rails=} ;;
        --mtu) [ $# -ge 2 ] || die "--mtu needs 1500 or 9000"; mtu=$2; shift ;;
        --mtu=*) mtu=${1#--mtu=} ;;
        --help|-h) echo "$help"; exit 0 ;;
        --) shift; break ;;
        -*) die "unknown option '$1' ($usage)" ;;
        *) break ;;
    esac
    shift
done
[[ $timeout_s =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a whole number of seconds, got '$timeout_s'"
[[ $hosts =~ ^[1-4]$ ]] || die "--hosts must be 1, 2, 3 or 4, got '$hosts'"
rails=1
if [ -n "$rails_arg" ]; then
    [[ $rails_arg =~ ^[2-4]$ ]] || die "--rails must be 2, 3 or 4 (one rail is the wire without --rails), got '$rails_arg'"
    rails=$rails_arg
fi
case "$mtu" in ""|1500|9000) ;; *) die "--mtu must be 1500 or 9000 (rxe's active MTU 1024 or 4096), got '$mtu'" ;; esac
case "$mode" in auto|vm|native) ;; *) die "RDMALAB_LAB_MODE must be auto, vm or native, got '$mode'" ;; esac
case "$accel_request" in auto|kvm|tcg) ;; *) die "--accel (RDMALAB_LAB_ACCEL) must be auto, kvm or tcg, got '$accel_request'" ;; esac
for i in "${!on_command[@]}"; do [ "$i" -le "$hosts" ] || die "--on $i: there are only $hosts host(s) (--hosts N)"; done
if [ $# -eq 0 ] && [ -z "$show_aqm" ]; then
    [ ${#on_command[@]} -gt 0 ] || die "no command given ($usage)"
    for ((i = 1; i <= hosts; i++)); do [ -n "${on_command[$i]:-}" ] || die "host $i has no command: give --on $i 'CMD' or a command after --"; done
fi
if [ "$hosts" = 1 ]; then
    [ ${#on_command[@]} -eq 0 ] || die "--on needs --hosts N (2 to 4)"
    [ -z "$rails_arg" ] && [ -z "$mtu" ] || die "--rails and --mtu set up the wire's links: they need --hosts N (2 to 4)"
    [ -z "$capture" ] && [ ${#faults[@]} -eq 0 ] && [ ${#link_downs[@]} -eq 0 ] ||
        die "--capture, --loss, --delay, --rate, --aqm and --link-down need the wire: --hosts N (2 to 4)"
fi

# The faults, checked and turned into what each guest applies (netem[HOST]: netem's words)
# and what the output and every record say (fault_text).
declare -A netem=() aqm=()
fault_text=""
# aqm_port_lines KBIT MODE DEV SUFFIX: the tc commands that make DEV such a port, each line ending
# in SUFFIX. RED's thresholds are in bytes of queue: 5 and 15 ms at the port's rate; avpkt is a
# RoCE frame at path MTU 1024 (1,024 bytes of payload and about 80 of headers).
aqm_port_lines() {
    local kbit=$1 mode=$2 dev=$3 suffix=$4
    local bytes_per_ms=$((kbit / 8)) roce=$((kbit * 9 / 10)) other=$((kbit / 10))
    local min=$((bytes_per_ms * 5)) max=$((bytes_per_ms * 15)) avpkt=1100
    [ $min -ge $((2 * avpkt)) ] || { min=$((2 * avpkt)); max=$((6 * avpkt)); }
    local queue="red limit $((max * 4)) min $min max $max avpkt $avpkt burst $(((2 * min + max) / (3 * avpkt) + 1)) bandwidth ${kbit}kbit probability 0.1 ecn"
    local fifo_packets=$(((bytes_per_ms * 20 + avpkt - 1) / avpkt))  # 20 ms of frames, at least 4
    [ "$mode" = droptail ] && queue="pfifo limit $((fifo_packets < 4 ? 4 : fifo_packets))"
    echo "tc qdisc add dev $dev root handle 1: htb default 20$suffix"
    echo "tc class add dev $dev parent 1: classid 1:1 htb rate ${kbit}kbit ceil ${kbit}kbit$suffix"
    echo "tc class add dev $dev parent 1:1 classid 1:10 htb rate ${roce}kbit ceil ${kbit}kbit prio 1$suffix"
    echo "tc class add dev $dev parent 1:1 classid 1:20 htb rate ${other}kbit ceil ${kbit}kbit prio 0$suffix"
    echo "tc qdisc add dev $dev parent 1:10 handle 10: $queue$suffix"
    echo "tc filter add dev $dev parent 1: protocol ip prio 1 u32 match ip dsfield 0x68 0xfc flowid 1:10$suffix"
}
# rail_nics RAIL: the guest's NICs on that rail, as a glob (rail 1's keep the kernel's names; the
# guest renames rail R's rRethM, lab/guest-init.sh).
rail_nics() { if [ "$1" = 1 ]; then echo '/sys/class/net/eth*'; else echo "/sys/class/net/r$1eth*"; fi; }
# aqm_commands HOST RAIL: the guest's tc commands for --aqm on every port of HOST on RAIL
# (aqm[HOST.RAIL]: "KBIT MODE").
aqm_commands() {
    local key=$1.$2
    echo "modprobe -a sch_htb sch_red cls_u32 || exit 125"
    echo "for nic in $(rail_nics "$2"); do n=\${nic##*/}"
    aqm_port_lines "${aqm[$key]% *}" "${aqm[$key]#* }" '$n' ' || exit 125' | sed 's/^/  /'
    echo "done"
}
# check_rail WHAT RAIL: RAIL is one of the lab's rails, or WHAT is refused.
check_rail() {
    [ "$2" -ge 1 ] || die "$1: rails are numbered from 1"
    [ "$2" -le "$rails" ] || [ "$rails" != 1 ] || die "$1: there is only one rail (--rails N gives more)"
    [ "$2" -le "$rails" ] || die "$1: there are only $rails rails"
}
# where_text HOST RAIL: how the output and the records name a fault's place (without --rails, as
# before there were rails; HOST 0: every host, and with rails every rail).
where_text() {
    if [ "$1" = 0 ]; then
        if [ "$rails" = 1 ]; then echo "every host"; else echo "every host, every rail,"; fi
    elif [ "$rails" = 1 ]; then
        echo "host $1"
    else
        echo "host $1 rail $2"
    fi
}
# parse_aqm_value RATE[:red|:droptail]: sets kbit and mode, or says what is wrong (status 1).
parse_aqm_value() {
    [[ $1 =~ ^([1-9][0-9]*)(kbit|mbit|gbit)(:(red|droptail))?$ ]] || return 1
    kbit=${BASH_REMATCH[1]}
    case ${BASH_REMATCH[2]} in mbit) kbit=$((kbit * 1000)) ;; gbit) kbit=$((kbit * 1000000)) ;; esac
    mode=${BASH_REMATCH[4]:-red}
}
# --show-aqm: one port's commands as the chapter shows them (eth0; a line longer than 96
# characters continued on the next), and nothing booted.
if [ -n "$show_aqm" ]; then
    parse_aqm_value "$show_aqm" || die "--show-aqm must be like 20mbit, 20mbit:red or 5mbit:droptail, got '$show_aqm'"
    [ "$kbit" -ge 100 ] || die "--show-aqm $show_aqm: the lab's queues start at 100kbit"
    aqm_port_lines "$kbit" "$mode" eth0 "" | while IFS= read -r line; do
        if [ ${#line} -le 96 ]; then echo "$line"; continue; fi
        head=${line:0:90}
        head=${head% *}
        # at an option's name, never between a name and its value
        until [[ ${line:${#head}+1} =~ ^[a-z] ]]; do head=${head% *}; done
        echo "$head \\"
        echo "    ${line:${#head}+1}"
    done
    exit 0
fi
for fault in "${faults[@]}"; do
    kind=${fault%%|*}
    value=${fault#*|}
    target=0 rail=1
    # HOST[.RAIL]: a host alone is its rail 1; no host is every host on every rail.
    if [[ $value =~ ^([0-9]+)(\.([0-9]+))?:(.*)$ ]]; then
        target=${BASH_REMATCH[1]}; rail=${BASH_REMATCH[3]:-1}; value=${BASH_REMATCH[4]}
        [ -z "${BASH_REMATCH[2]}" ] || [ "$target" != 0 ] || die "--$kind ${fault#*|}: hosts are numbered from 1"
    fi
    [ "$target" -le "$hosts" ] || die "--$kind $target:…: there are only $hosts hosts"
    check_rail "--$kind ${fault#*|}" "$rail"
    if [ "$kind" = aqm ]; then
        parse_aqm_value "$value" && [ "$target" != 0 ] ||
            die "--aqm must be like 2:20mbit, 2:20mbit:red or 2:5mbit:droptail (a host, a rate, a queue), got '${fault#*|}'"
        [ "$kbit" -ge 100 ] || die "--aqm $value: the lab's queues start at 100kbit"
        aqm[$target.$rail]="$kbit $mode"
        marks=""
        [ "$mode" = red ] && marks=", ECN marks"
        fault_text+="${fault_text:+, }$(where_text "$target" "$rail") egress AQM ${BASH_REMATCH[1]}${BASH_REMATCH[2]} $mode (DSCP 26's queue${marks})"
        continue
    fi
    case "$kind" in
        loss) [[ $value =~ ^([0-9]+(\.[0-9]+)?)%$ ]] || die "--loss must be a percentage such as 5% or 0.1%, got '$value'"
              awk -v p="${BASH_REMATCH[1]}" 'BEGIN { exit !(p <= 100) }' || die "--loss $value: a loss over 100% is not a loss"
              words="loss $value" ;;
        delay) [[ $value =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--delay must be milliseconds (a number), got '$value'"
               words="delay ${value}ms" ;;
        rate) [[ $value =~ ^[1-9][0-9]*(bit|kbit|mbit|gbit)$ ]] || die "--rate must be like 100mbit, 10kbit or 1gbit, got '$value'"
              words="rate $value" ;;
    esac
    for ((i = 1; i <= hosts; i++)); do
        [ "$target" = 0 ] || [ "$target" = "$i" ] || continue
        for ((r = 1; r <= rails; r++)); do
            [ "$target" = 0 ] || [ "$rail" = "$r" ] || continue
            netem[$i.$r]="${netem[$i.$r]:-} $words"
        done
    done
    fault_text+="${fault_text:+, }$(where_text "$target" "$rail") egress $words"
done
for key in "${!aqm[@]}"; do
    [ -z "${netem[$key]:-}" ] || die "host ${key%.*}$([ "${key#*.}" = 1 ] || echo " rail ${key#*.}") has --aqm and --loss/--delay/--rate: give it one of them"
done
# link_down_at[HOST.RAIL], link_down_for[HOST.RAIL]: when that link goes down, and for how long.
declare -A link_down_at=() link_down_for=()
for spec in "${link_downs[@]}"; do
    [[ $spec =~ ^([1-4])(\.([0-9]+))?@([0-9]+(\.[0-9]+)?|signal)(\+([0-9]+(\.[0-9]+)?))?$ ]] ||
        die "--link-down must be HOST[.RAIL]@SECONDS or HOST[.RAIL]@signal, then optionally +SECONDS (e.g. 2@1.5+3), got '$spec'"
    [ "${BASH_REMATCH[1]}" -le "$hosts" ] || die "--link-down $spec: there are only $hosts hosts"
    key=${BASH_REMATCH[1]}.${BASH_REMATCH[3]:-1}
    at=${BASH_REMATCH[4]} for=${BASH_REMATCH[7]}
    check_rail "--link-down $spec" "${key#*.}"
    link_down_at[$key]=$at
    link_down_for[$key]=$for
    when="at $at s"
    [ "$at" = signal ] && when="on a signal"
    fault_text+="${fault_text:+, }$(where_text "${key%.*}" "${key#*.}") link down $when${for:+ for $for s}"
done
if [ -n "$capture" ]; then
    capture_dir=$(dirname "$capture")
    [ -d "$capture_dir" ] && [ -w "$capture_dir" ] || die "--capture $capture: $capture_dir is not a writable folder"
    capture=$(cd "$capture_dir" && pwd)/$(basename "$capture")
    [ "$hosts" -le 2 ] || command -v mergecap >/dev/null ||
        die "--capture with more than two hosts merges the links' captures with mergecap: apt-get install wireshark-common"
    [ "$hosts" -le 2 ] || command -v editcap >/dev/null ||
        die "--capture with more than two hosts drops the frames the bridge copied with editcap: apt-get install wireshark-common"
fi

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

[ "$hosts" = 1 ] || [ "${RDMALAB_IN_LAB:-}" != vm ] ||
    die "--hosts: the wire boots its guests from the host machine, not from inside a lab guest"

if [ "$mode" = auto ]; then
    if [ "$hosts" -gt 1 ] || [ -n "$lab_kernel" ] || ! host_has_rdma_device; then mode=vm; else mode=native; fi
fi

if [ "$mode" = native ]; then
    [ "$hosts" = 1 ] || die "--native with --hosts: on real hosts, run each host's command on that host (see docs/lab.md#the-wire)"
    host_has_rdma_device || die "--native: no RDMA device on this host (ibv_devices lists none)"
    [ -z "$lab_kernel" ] || die "--kernel boots a lab guest: it cannot go with --native"
    [ "$verbose" = 1 ] && note "RDMA device found on this host: running natively"
    RDMALAB_ADDR=${RDMALAB_ADDR:-$(native_address || true)} RDMALAB_IN_LAB=native exec timeout --kill-after=5 "$timeout_s" "$@"
fi

# ---- The Soft-RoCE guests -----------------------------------------------------------------
command -v "$qemu" >/dev/null ||
    die "$qemu is missing: install it with 'apt-get install qemu-system-x86' (or run ./rdmalab deps)"
source "$lab_dir/guest-image.sh"

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

# The run directory: per host h1…hN (the command script going in; status, console and QEMU's
# messages coming out), shared/ for the hosts' own rendezvous. The links' sockets live in a
# short folder of their own (a unix socket path has at most 107 bytes).
run_dir=$(mktemp -d "$cache_dir/run.XXXXXX")
run_rel=${run_dir#"$repo"/}
socket_dir=""
declare -A qemu_pids=()
copiers=""

# Unblocks a copier still waiting to open its FIFO (QEMU never opened it) and lets every copier
# end: opening a FIFO read-write never blocks, and closing it again leaves readers at EOF.
release_copiers() {
    local fifo fd
    for fifo in "$run_dir"/h*/stdout.fifo "$run_dir"/h*/stderr.fifo; do
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
    rm -f "$run_dir"/h*/stdout.fifo "$run_dir"/h*/stderr.fifo
}

stop_qemus() {
    local i
    for i in "${!qemu_pids[@]}"; do
        kill -KILL "${qemu_pids[$i]}" 2>/dev/null || true
        wait "${qemu_pids[$i]}" 2>/dev/null || true
    done
    qemu_pids=()
}

cleanup() {
    set +e   # best effort: a failing kill here must not change the exit code
    stop_qemus
    release_copiers
    rm -rf "$run_dir"
    [ -n "$socket_dir" ] && rm -rf "$socket_dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$run_dir/shared"
[[ $PWD != "$repo" && $PWD != "$repo"/* ]] && guest_hides "$PWD" &&
    note "the working directory $PWD is a fresh tmpfs inside the guest: running from $repo"
# rail_address RAIL HOST: the host's address on that rail; rail_netdev RAIL HOST: the netdev its
# rxe sits on there (the star's centre: the rail's bridge).
rail_address() { if [ "$1" = 1 ]; then echo "$subnet.$2"; else echo "$rail_net.$((64 * ($1 - 2) + $2))"; fi; }
rail_netdev() {
    local prefix=""
    [ "$1" = 1 ] || prefix=r$1
    if [ "$hosts" -gt 2 ] && [ "$2" = 1 ]; then echo "${prefix}br0"; else echo "${prefix:-eth}${prefix:+eth}0"; fi
}
# rail_environment HOST: the rails' variables for that host's command.
rail_environment() {
    local r j
    echo "export RDMALAB_RAILS=$rails"
    for ((r = 1; r <= rails; r++)); do
        echo "export RDMALAB_RAIL_ADDR_$r=$(rail_address "$r" "$1") RDMALAB_RAIL_DEV_$r=rxe$((r - 1)) RDMALAB_RAIL_NETDEV_$r=$(rail_netdev "$r" "$1")"
        for ((j = 1; j <= hosts; j++)); do echo "export RDMALAB_ADDR_${j}_$r=$(rail_address "$r" "$j")"; done
        echo "export RDMALAB_RAIL_ADDRS_$r=$(for ((j = 1; j <= hosts; j++)); do rail_address "$r" "$j"; done | paste -sd,)"
    done
}
# link_down_script HOST RAIL: the guest's part of --link-down HOST.RAIL.
link_down_script() {
    local i=$1 r=$2 key=$1.$2 name=$1 nics what="host $1"
    nics=$(rail_nics "$r")
    [ "$r" = 1 ] || name=$key
    [ "$rails" = 1 ] || what+=" rail $r"
    # A background shell takes the link down and up; it holds the guest's output pipes, so it must
    # end with the command (whose pid is this script's: exec), even when its signal never comes:
    # every wait of its own polls whether that is alive.
    echo "( main=\$\$"
    # alive_for SEC: a sleep timed by one sleep process (a counted loop of short sleeps runs far
    # too long under TCG emulation), cut short when the command ends.
    echo "  alive_for() { sleep \"\$1\" & local timer=\$!; while kill -0 \$timer 2>/dev/null; do kill -0 \$main 2>/dev/null || { kill \$timer; return 1; }; sleep 0.1; done; }"
    if [ "${link_down_at[$key]}" = signal ]; then
        # Any host's command says when: it creates this file (polled every 50 ms).
        echo "  until [ -e \"\$RDMALAB_SHARED/link-down-$name\" ]; do kill -0 \$main 2>/dev/null || exit 0; sleep 0.05; done"
    else
        echo "  alive_for ${link_down_at[$key]} || exit 0"
    fi
    echo "  for nic in $nics; do ip link set \${nic##*/} down; done; echo \"lab: $what: link down (guest uptime \$(cut -d\" \" -f1 /proc/uptime) s)\" >&2"
    # The link comes back when its time is up, or at once when the command ends earlier: the other
    # hosts' commands may still need it.
    [ -n "${link_down_for[$key]}" ] &&
        echo "  alive_for ${link_down_for[$key]}; for nic in $nics; do ip link set \${nic##*/} up; done; echo \"lab: $what: link up (guest uptime \$(cut -d\" \" -f1 /proc/uptime) s)\" >&2"
    echo ") &"
}
for ((i = 1; i <= hosts; i++)); do
    mkdir -p "$run_dir/h$i"
    echo "$repo" >"$run_dir/h$i/workdir"
    {
        echo '# Written by lab/lab.sh: the environment and command to run inside the guest.'
        export -p | grep -vE '^declare -x (BASH_[A-Z_]*|SHLVL|OLDPWD|PWD|_)=' || true
        echo "export RDMALAB_IN_LAB=vm RDMALAB_ADDR=$subnet.$i"
        if [ "$hosts" -gt 1 ]; then
            echo "export RDMALAB_HOST=$i RDMALAB_HOSTS=$hosts RDMALAB_SHARED=$run_dir/shared"
            for ((j = 1; j <= hosts; j++)); do echo "export RDMALAB_ADDR_$j=$subnet.$j"; done
            echo "export RDMALAB_ADDRS=$(seq -s , -f "$subnet.%g" 1 "$hosts")"
            printf 'export RDMALAB_FAULTS=%q\n' "$fault_text"
            [ -z "$mtu" ] || echo "export RDMALAB_MTU=$mtu"
            [ "$rails" = 1 ] || rail_environment "$i"
            # The faults, on this host's egress on each rail: every port it has there (the star's
            # centre has several).
            for ((r = 1; r <= rails; r++)); do
                [ -z "${aqm[$i.$r]:-}" ] || aqm_commands "$i" "$r"
                if [ -n "${netem[$i.$r]:-}" ]; then
                    echo "for nic in $(rail_nics "$r"); do tc qdisc add dev \${nic##*/} root netem${netem[$i.$r]} || exit 125; done"
                fi
                [ -z "${link_down_at[$i.$r]:-}" ] || link_down_script "$i" "$r"
            done
        fi
        if [[ $PWD == "$repo" || $PWD == "$repo"/* ]] || ! guest_hides "$PWD"; then
            printf 'cd %q || exit 126\n' "$PWD"
        else
            printf 'cd %q || exit 126\n' "$repo"
        fi
        if [ -n "${on_command[$i]:-}" ]; then
            printf 'exec bash -c %q\n' "${on_command[$i]}"
        else
            printf 'exec'; printf ' %q' "$@"; printf '\n'
        fi
    } >"$run_dir/h$i/command.sh"
done

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
# Under TCG the guest's TSC counts the host's (QEMU answers the guest's RDTSC with it), and the
# guest calibrates its frequency against an emulated timer: on a loaded machine that went wrong
# several times over (a guest's `sleep 2` lasted 22 s of its clock while the whole boot took 30 s
# of the host's, 2026-11-29), and every timeout in the guest with it. Where the host's TSC
# frequency can be read (the kernel's log, or /proc/cpuinfo in a VM whose TSC frequency is
# known), the guest is given it instead of calibrating (tsc_early_khz).
host_tsc_khz() {
    local mhz
    mhz=$(dmesg 2>/dev/null | sed -n -e 's/.*tsc: Refined TSC clocksource calibration: \([0-9.]*\) MHz.*/\1/p' \
        -e 's/.*tsc: Detected \([0-9.]*\) MHz processor.*/\1/p' | tail -n 1)
    if [ -z "$mhz" ] && grep -qw tsc_known_freq /proc/cpuinfo && grep -qw hypervisor /proc/cpuinfo; then
        mhz=$(awk -F': *' '/^cpu MHz/ { print $2; exit }' /proc/cpuinfo)
    fi
    [[ $mhz =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v mhz="$mhz" 'BEGIN { printf "%d\n", mhz * 1000 }'
}
tsc_khz=$(host_tsc_khz || true)
stdout_tty=0; [ -t 1 ] && stdout_tty=1
stderr_tty=0; [ -t 2 ] && stderr_tty=1
# How long KVM may take to reach the guest's /init before it counts as not working: KVM boots
# in well under a second; TCG, which is not judged this way, needs about 2.5 s.
kvm_sign_of_life_s=${RDMALAB_LAB_KVM_PROBE_S:-8}
# One guest gets both cores; on the wire each guest gets one.
cpus=2
[ "$hosts" -gt 1 ] && cpus=1

# QEMU's first line of complaint, for one-line reports.
qemu_complaint() {
    local err=$1 line
    line=$(grep -m 1 -iE 'error|assert|fail|abort|cannot|denied|invalid' "$err" 2>/dev/null ||
           grep -m 1 . "$err" 2>/dev/null || true)
    echo "${line:-no message from QEMU}"
}

# The wire's QEMU arguments for host $1: host 1 listens on one unix socket per other host (and
# bridges them), every other host connects to its own. Each NIC gets its own MAC (with the same
# MAC on both ends, ARP works but RoCE traffic never crosses). With --capture, host 1's side of
# every link is dumped: it sees each frame of the wire exactly once. With rails, every rail has
# links of its own, rail 1's first (so its NICs keep the names eth0, eth1, …); a NIC's MAC names
# its rail, 52:54:00:5e:… on rail 1 and 52:54:00:6R:… on rail R, which is how the guest tells
# them apart (lab/guest-init.sh).
link_name() { if [ "$2" = 1 ]; then echo "link-$1"; else echo "rail-$2-link-$1"; fi; }  # HOST RAIL
wire_args() {
    local i=$1 j r id link byte
    wire=()
    for ((r = 1; r <= rails; r++)); do
        byte=5e
        [ "$r" = 1 ] || byte=6$r
        # rx_queue_size=1024 (QEMU's default: 256): a guest slow to take its frames (a router
        # under emulation) makes its QEMU stop reading the link's socket, and the host writing
        # to it then waits; a wait of that kind has stopped a host's transmit queue for good
        # (docs/lab.md#when-the-lab-fails). Four times the receive buffers make such waits rare.
        if [ "$i" = 1 ]; then
            for ((j = 2; j <= hosts; j++)); do
                id=n$j
                [ "$r" = 1 ] || id=n${j}r$r
                link=$(link_name "$j" "$r")
                wire+=(-netdev "stream,id=$id,server=on,addr.type=unix,addr.path=$socket_dir/$link.sock"
                       -device "virtio-net-pci,netdev=$id,mac=52:54:00:$byte:01:0$j,rx_queue_size=1024")
                if [ -n "$capture" ]; then
                    wire+=(-object "filter-dump,id=d${id#n},netdev=$id,file=$run_dir/$link.pcap")
                fi
            done
        else
            id=n1
            [ "$r" = 1 ] || id=n1r$r
            wire+=(-netdev "stream,id=$id,server=off,addr.type=unix,addr.path=$socket_dir/$(link_name "$i" "$r").sock"
                   -device "virtio-net-pci,netdev=$id,mac=52:54:00:$byte:0$i:01,rx_queue_size=1024")
        fi
    done
}

# start_guest HOST ACCEL: one QEMU in the background, its output copiers beside it.
start_guest() {
    local i=$1 accel_args dir=$run_dir/h$1 prefix=""
    # Under TCG the plain x86-64 model (qemu64), not -cpu max: with max, glibc picks its AVX2 string
    # routines, which TCG emulates slowly; the same lab tests took 28 % less time with qemu64
    # (lab.rdma-bench and lab.uc: 45 s against 62 s; five lesson tests: 63 s against 71-76 s).
    if [ "$2" = kvm ]; then accel_args=(-accel kvm -cpu host); else accel_args=(-accel tcg,thread=multi -cpu qemu64); fi
    rm -f "$dir/started" "$dir/ready" "$dir/status" "$dir/console.log" "$dir/qemu.err"
    # ttyS0: the guest kernel's console, kept in a log; ttyS1/ttyS2: the command's stdout/stderr,
    # through FIFOs that `cat` copies to ours: that works whatever our stdout is (terminal, pipe,
    # file, socket) and never truncates or overwrites a file the caller redirected into. On the
    # wire every line says which host printed it.
    mkfifo "$dir/stdout.fifo" "$dir/stderr.fifo"
    if [ "$hosts" = 1 ]; then
        cat "$dir/stdout.fifo" &
        copiers="$copiers $!"
        cat "$dir/stderr.fifo" >&2 &
        copiers="$copiers $!"
    else
        prefix="[host$i] "
        sed -u "s/^/$prefix/" "$dir/stdout.fifo" &
        copiers="$copiers $!"
        sed -u "s/^/$prefix/" "$dir/stderr.fifo" >&2 &
        copiers="$copiers $!"
    fi
    local network=(-nic none) clock="" links=""
    if [ "$hosts" -gt 1 ]; then wire_args "$i"; network=("${wire[@]}"); fi
    [ "$2" = tcg ] && [ -n "$tsc_khz" ] && clock=" tsc_early_khz=$tsc_khz"
    [ "$rails" = 1 ] || links+=" rdmalab.rails=$rails"
    [ -z "$mtu" ] || links+=" rdmalab.mtu=$mtu"
    [ "$verbose" = 1 ] && [ "$i" = 1 ] && [ -n "$clock" ] &&
        note "the guests' TSC runs at the host's: $tsc_khz kHz, given to them (tsc_early_khz)"
    "$qemu" \
        "${accel_args[@]}" -smp "$cpus" -m 2G "${firmware[@]}" \
        -nodefaults -no-user-config -display none -no-reboot -monitor none \
        -chardev file,id=console,path="$dir/console.log" -serial chardev:console \
        -chardev file,id=out,path="$dir/stdout.fifo" -serial chardev:out \
        -chardev file,id=err,path="$dir/stderr.fifo" -serial chardev:err \
        "${network[@]}" \
        -kernel "$boot_kernel" -initrd "$initramfs" \
        -append "console=ttyS0 quiet loglevel=1 panic=-1 $boot_speedups$clock rdmalab.run=$run_rel/h$i rdmalab.host=$i rdmalab.hosts=$hosts$links rdmalab.verbose=$verbose rdmalab.stdout_tty=$stdout_tty rdmalab.stderr_tty=$stderr_tty" \
        -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
        -virtfs local,path="$repo",mount_tag=work,security_model=none,multidevs=remap \
        </dev/null 2>"$dir/qemu.err" &
    qemu_pids[$i]=$!
}

# boot ACCEL: boots every guest and waits for all of them. Sets outcome to finished (every QEMU
# exited after its command started), no-start (a QEMU exited, or showed no sign of life, before
# its command started: worth retrying with TCG; no_start_why says which and why), or timeout;
# qemu_rc[HOST] to each QEMU's exit code.
boot() {
    local accel_name=$1 i
    start_s=$(date +%s)
    start_ns=$(date +%s%N)
    declare -gA qemu_rc=()
    outcome=finished
    no_start_why=""
    if [ "$hosts" -gt 1 ]; then
        [ -n "$socket_dir" ] && rm -rf "$socket_dir"
        socket_dir=$(mktemp -d /tmp/rdmalab-wire.XXXXXX)
        rm -f "$run_dir"/link-*.pcap "$run_dir"/rail-*.pcap
    fi
    start_guest 1 "$accel_name"
    if [ "$hosts" -gt 1 ]; then
        # Host 1 listens; the others may connect only once its sockets exist.
        local waited=0
        until [ "$(ls "$socket_dir" | grep -c '\.sock$')" -eq $(((hosts - 1) * rails)) ]; do
            if ! kill -0 "${qemu_pids[1]}" 2>/dev/null || [ $waited -ge 100 ]; then break; fi
            sleep 0.05
            waited=$((waited + 1))
        done
        for ((i = 2; i <= hosts; i++)); do start_guest "$i" "$accel_name"; done
    fi

    # Every wait has a limit: the guests get timeout_s seconds, then they are killed and reported.
    local deadline=$((start_s + timeout_s)) probe_deadline=$((start_s + kvm_sign_of_life_s)) now
    rm -f "$run_dir/go" "$run_dir/done"
    while [ ${#qemu_pids[@]} -gt 0 ]; do
        now=$(date +%s)
        if [ "$now" -ge "$deadline" ]; then outcome=timeout; break; fi
        # The wire's barrier: every guest waits for "go" until all have said "ready".
        if [ "$hosts" -gt 1 ] && [ ! -e "$run_dir/go" ]; then
            local ready=0
            for ((i = 1; i <= hosts; i++)); do [ -e "$run_dir/h$i/ready" ] && ready=$((ready + 1)); done
            [ "$ready" -lt "$hosts" ] || : >"$run_dir/go"
        fi
        # …and stays up until every command has ended (a star's centre carries the others).
        if [ "$hosts" -gt 1 ] && [ ! -e "$run_dir/done" ]; then
            local ended=0
            for ((i = 1; i <= hosts; i++)); do
                [ -s "$run_dir/h$i/status" ] || [ -z "${qemu_pids[$i]:-}" ] && ended=$((ended + 1))
            done
            [ "$ended" -lt "$hosts" ] || : >"$run_dir/done"
        fi
        for i in "${!qemu_pids[@]}"; do
            local dir=$run_dir/h$i
            if kill -0 "${qemu_pids[$i]}" 2>/dev/null; then
                if [ "$accel_name" = kvm ] && [ "$now" -ge "$probe_deadline" ] && [ ! -e "$dir/started" ] &&
                    ! grep -q '^rdmalab-guest: alive' "$dir/console.log" 2>/dev/null; then
                    outcome=no-start
                    no_start_why="no sign of life from the guest within $kvm_sign_of_life_s s"
                    grep -q 'KVM internal error' "$dir/qemu.err" 2>/dev/null && no_start_why=$(qemu_complaint "$dir/qemu.err")
                fi
                continue
            fi
            local rc=0
            wait "${qemu_pids[$i]}" || rc=$?
            unset "qemu_pids[$i]"
            qemu_rc[$i]=$rc
            if [ ! -e "$dir/started" ] && [ ! -s "$dir/status" ] && [ "$outcome" = finished ]; then
                outcome=no-start
                no_start_why="$(qemu_complaint "$dir/qemu.err"); qemu exit code $rc"
                [ "$hosts" -gt 1 ] && no_start_why="host $i: $no_start_why"
            fi
        done
        [ "$outcome" = finished ] || break
        sleep 0.1
    done
    stop_qemus
    release_copiers
    end_ns=$(date +%s%N)
}

remember() { echo "$1" >"$verdict_file.tmp" && mv "$verdict_file.tmp" "$verdict_file"; }

accel_label() { if [ "$1" = kvm ]; then echo KVM; else echo "TCG emulation"; fi; }
if [ "$hosts" = 1 ]; then
    note "no RDMA device on this host: booting the Soft-RoCE lab (kernel $kver, $(accel_label "$accel_plan"): $accel_why)…"
else
    note "booting $hosts Soft-RoCE hosts on a virtual link, $subnet.1–$subnet.$hosts (kernel $kver, $(accel_label "$accel_plan"): $accel_why)…"
    for ((r = 2; r <= rails; r++)); do
        note "rail $r: a link of its own, $(rail_address "$r" 1)–$(rail_address "$r" "$hosts"), rxe$((r - 1))"
    done
    [ -n "$mtu" ] && note "the links' MTU: $mtu"
    [ -n "$fault_text" ] && note "faults: $fault_text"
    [ -n "$capture" ] && note "capturing every frame on the link into $capture$([ "$rails" = 1 ] || echo " (rail 1; rail R: ${capture%.pcap}.rail-R.pcap)")"
fi
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
elif [ "$accel_plan" = kvm ] && [ -e "$run_dir/h1/started" ] && [ "$remembered" != kvm ]; then
    remember kvm
fi

# The capture: host 1's side of each link; several links merged in time order. In a star a
# frame between two outer hosts crosses two links, so it is in two dumps byte for byte: the
# copy is dropped (editcap -D). A retransmission is never byte-identical: rxe gives every packet
# it sends a new IPv4 ID. A frame the centre changed on its way (--aqm marked it CE) is not
# byte for byte either: both copies stay in the merged file, so each link's own dump is kept
# beside it as FILE.link-I.pcap (I: the outer host on that link), what that host's port saw.
# Each rail apart: rail 1 as FILE.pcap, rail R as FILE.rail-R.pcap (and FILE.rail-R.link-I.pcap).
# collect_capture OUT LINK.pcap...: one rail's links into OUT.
collect_capture() {
    local out=$1 link link_host
    shift
    if [ ! -e "$1" ]; then
        note "--capture: QEMU wrote no capture"
    elif [ $# -eq 1 ]; then
        mv "$1" "$out"
    else
        mergecap -w "$run_dir/merged.pcap" "$@" 2>"$run_dir/merge.err" &&
            editcap -D 1000 "$run_dir/merged.pcap" "$out" >/dev/null 2>>"$run_dir/merge.err" ||
            note "--capture: merging the links' captures failed: $(grep -m 1 . "$run_dir/merge.err")"
        for link in "$@"; do
            link_host=${link##*link-}
            mv "$link" "${out%.pcap}.link-${link_host%.pcap}.pcap"
        done
    fi
}
if [ -n "$capture" ]; then
    collect_capture "$capture" "$run_dir"/link-*.pcap
    for ((r = 2; r <= rails; r++)); do
        collect_capture "${capture%.pcap}.rail-$r.pcap" "$run_dir"/rail-$r-link-*.pcap
    done
fi

case "$outcome" in
    timeout)
        note "the guest did not finish within $timeout_s s: killed it (raise the limit with --timeout SEC or RDMALAB_LAB_TIMEOUT)"
        exit 124 ;;
    no-start)
        note "the guest did not start under $(accel_label "$accel_plan"): $no_start_why"
        for ((i = 1; i <= hosts; i++)); do
            [ -s "$run_dir/h$i/qemu.err" ] && sed 's/^/lab: qemu: /' "$run_dir/h$i/qemu.err" | tail -n 5 >&2
        done
        exit 2 ;;
esac

if [ "$verbose" = 1 ]; then
    for ((i = 1; i <= hosts; i++)); do
        [ -s "$run_dir/h$i/qemu.err" ] && sed 's/^/lab: qemu: /' "$run_dir/h$i/qemu.err" >&2
    done
    last_started=""
    for ((i = 1; i <= hosts; i++)); do
        [ -e "$run_dir/h$i/started" ] || continue
        t=$(stat -c %.9Y "$run_dir/h$i/started" | tr -d .)
        [ -z "$last_started" ] || [ "$t" -gt "$last_started" ] && last_started=$t
    done
    if [ -n "$last_started" ]; then
        note "$(awk -v a="$start_ns" -v b="$last_started" -v c="$end_ns" -v accel="$(accel_label "$accel_plan")" -v n="$hosts" \
            'BEGIN { printf "boot to command %.2f s%s, whole run %.2f s (%s)", (b - a) / 1e9, (n > 1 ? " (the last of " n " hosts)" : ""), (c - a) / 1e9, accel }')"
    fi
fi

# The exit status: the first failure's, in the order the commands ended (each status file is
# written when its command ends; on the wire every guest then waits for the others, so the
# order QEMUs exit in says nothing). Guests that reported nothing come last.
finish_order=()
while read -r _ i; do finish_order+=("$i"); done < <(
    for ((i = 1; i <= hosts; i++)); do
        if [ -s "$run_dir/h$i/status" ]; then echo "$(stat -c %.9Y "$run_dir/h$i/status") $i"; else echo "inf $i"; fi
    done | sort -k1,1 -g)
first_failure=0
for i in "${finish_order[@]}"; do
    dir=$run_dir/h$i
    label=""
    [ "$hosts" -gt 1 ] && label="host $i: "
    if [ ! -s "$dir/status" ]; then
        note "${label}the guest stopped without reporting a status (qemu exit code ${qemu_rc[$i]}: $(qemu_complaint "$dir/qemu.err")); the end of its console:"
        tail -n 20 "$dir/console.log" >&2 2>/dev/null || true
        [ "$first_failure" = 0 ] && first_failure=2
        continue
    fi
    status=$(cat "$dir/status")
    case "$status" in
        setup:*) note "${label}guest setup failed: ${status#setup: }"; [ "$first_failure" = 0 ] && first_failure=2 ;;
        *[!0-9]*) note "${label}unreadable status from the guest: '$status'"; [ "$first_failure" = 0 ] && first_failure=2 ;;
        0) ;;
        *) [ "$hosts" -gt 1 ] && note "host $i: the command exited $status"
           [ "$first_failure" = 0 ] && first_failure=$status ;;
    esac
done
exit "$first_failure"
