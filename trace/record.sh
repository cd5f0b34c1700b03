#!/usr/bin/env bash
# `./rdmalab trace`: one lesson run across the lab's two hosts (server on host 1, client on
# host 2) with --trace on both sides and a packet capture inside each guest, merged into one
# timeline (trace-merge) that the site's viewer plays. Exits 1 if the run or a causal check
# fails (the timeline is still written), 2 on bad usage.
#   trace/record.sh [--bin DIR] [FAULTS...] -o OUT.json LESSON [SERVER_ARGS...] [-- CLIENT_ARGS...]
# FAULTS are the lab's, passed to it as they are (lab/lab.sh --help): --loss [I:]P%,
# --delay [I:]MS, --rate [I:]RATE, --link-down I@SEC[+SEC] or I@signal[+SEC]; and
# --signal-on TEXT: give the link-down signal once the client prints a line containing TEXT.
# The environment (kernel, QEMU, rdma-core, tshark, commit, date, faults) goes into "meta".
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: rdmalab trace [--bin DIR] [--loss [I:]P%] [--delay [I:]MS] [--rate [I:]RATE] [--link-down I@WHEN[+SEC]] [--signal-on TEXT] -o OUT.json LESSON [SERVER_ARGS...] [-- CLIENT_ARGS...]"
die() { echo "trace: $*" >&2; exit 2; }

bin=$repo/build/bin
out=""
faults=()      # the lab's fault options, as given (lab.sh checks their values)
signal_on=""   # the client's line that gives the link-down signal
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) [ $# -ge 2 ] || die "--bin needs a folder"; bin=$2; shift 2 ;;
        --loss|--delay|--rate|--link-down)
            [ $# -ge 2 ] || die "$1 needs a value ($usage)"; faults+=("$1" "$2"); shift 2 ;;
        --signal-on) [ $# -ge 2 ] && [ -n "$2" ] || die "--signal-on needs the text of a client's line"
            signal_on=$2; shift 2 ;;
        -o|--output) [ $# -ge 2 ] || die "-o needs a file name"; out=$2; shift 2 ;;
        -h|--help) echo "$usage"; exit 0 ;;
        -*) die "unknown option '$1' ($usage)" ;;
        *) break ;;
    esac
done
lesson=${1:-}
[ -n "$lesson" ] || die "no lesson given ($usage)"
shift
[ -n "$out" ] || die "no output file: -o OUT.json ($usage)"
# The signal names the host whose link goes down: --link-down I@signal.
signal_host=""
for ((i = 0; i < ${#faults[@]}; i += 2)); do
    [ "${faults[i]}" = --link-down ] && [[ ${faults[i + 1]} =~ ^([1-2])@signal ]] && signal_host=${BASH_REMATCH[1]}
done
[ -z "$signal_on" ] || [ -n "$signal_host" ] || die "--signal-on needs --link-down 1@signal or 2@signal"
[ -n "$signal_on" ] || [ -z "$signal_host" ] || die "--link-down $signal_host@signal needs --signal-on TEXT (who gives the signal)"
[ -x "$bin/$lesson" ] || die "$bin/$lesson: no such lesson built (./rdmalab build)"
[ -x "$bin/trace-merge" ] || die "$bin/trace-merge is missing (./rdmalab build)"
[ -x "$bin/rdma-wire" ] || die "$bin/rdma-wire is missing (./rdmalab build)"
out_dir=$(dirname "$out")
[ -d "$out_dir" ] && [ -w "$out_dir" ] || die "-o $out: $out_dir is not a writable folder"
bin=$(cd "$bin" && pwd)

mkdir -p "$repo/build"
work=$(mktemp -d "$repo/build/trace-run.XXXXXX")  # in the repository: the guests write here
[ -n "${RDMALAB_TRACE_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
args=("$@")
guest_options=()
[ -z "$signal_on" ] || guest_options=(--signal-on "$signal_host" "$signal_on")
# A link that goes down ends a capture on it: with link faults each guest captures on "any".
for ((i = 0; i < ${#faults[@]}; i += 2)); do
    [ "${faults[i]}" = --link-down ] && guest_options+=(--any-interface) && break
done
rc=0
"$repo/lab/lab.sh" --hosts 2 --timeout 180 "${faults[@]}" -- \
    bash "$repo/trace/guest.sh" "${guest_options[@]}" "$bin" "$work" "$lesson" "${args[@]}" \
    >"$work/lab.out" 2>"$work/lab.err" || rc=$?
if [ "$rc" != 0 ]; then
    echo "trace: the run failed (lab exit $rc):" >&2
    tail -n 5 "$work/lab.err" "$work"/run/*.out 2>/dev/null >&2
    exit 1
fi
for h in 1 2; do
    [ -s "$work/host$h.events.jsonl" ] || { echo "trace: host $h wrote no trace" >&2; exit 1; }
    "$bin/rdma-wire" "$work/host$h.pcap" --json "$work/host$h.packets.json" --quiet || exit 1
done

# The environment, as JSON strings.
jstr() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; printf '"%s"' "$s"; }
kernel=$(basename "$(ls /boot/vmlinuz-* | sort -V | tail -n 1)")
{
    printf '{"lesson": %s, "arguments": %s, "server": "host1", "client": "host2",\n' \
        "$(jstr "$lesson")" "$(jstr "${args[*]}")"
    printf ' "environment": {"recorded": %s, "commit": %s, "guest_kernel": %s,\n' \
        "$(jstr "$(date -u +%Y-%m-%dT%H:%M:%SZ)")" \
        "$(jstr "$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)")" \
        "$(jstr "${kernel#vmlinuz-}")"
    printf '  "qemu": %s, "rdma_core": %s, "tshark": %s,\n' \
        "$(jstr "$(qemu-system-x86_64 --version | head -n 1)")" \
        "$(jstr "$(dpkg-query -W -f='${Version}' rdma-core 2>/dev/null || echo unknown)")" \
        "$(jstr "$(tshark --version | head -n 1)")"
    printf '  "faults": %s,\n' "$(jstr "$(sed -n 's/^lab: faults: //p' "$work/lab.err" | head -n 1)")"
    printf '  "lab": %s}}\n' \
        "$(jstr "two QEMU guests (software emulation, one vCPU each) on a virtual link, Soft-RoCE (rdma_rxe) on each; packets captured inside each guest with dumpcap")"
} >"$work/meta.json"
"$bin/trace-merge" -o "$out" --meta "$work/meta.json" \
    --host host1 198.51.100.1 "$work/host1.events.jsonl" "$work/host1.packets.json" \
    --host host2 198.51.100.2 "$work/host2.events.jsonl" "$work/host2.packets.json"
