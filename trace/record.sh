#!/usr/bin/env bash
# `./rdmalab trace`: one lesson run across the lab's two hosts (server on host 1, client on
# host 2) with --trace on both sides and a packet capture inside each guest, merged into one
# timeline (trace-merge) that the site's viewer plays. Exits 1 if the run or a causal check
# fails (the timeline is still written), 2 on bad usage.
#   trace/record.sh [--bin DIR] [FAULTS...] -o OUT.json LESSON [SERVER_ARGS...] [-- CLIENT_ARGS...]
# FAULTS are the lab's, passed to it as they are (lab/lab.sh --help): --loss [I:]P%,
# --delay [I:]MS, --rate [I:]RATE, --link-down I@SEC[+SEC] or I@signal[+SEC]; and
# --signal-on TEXT: give the link-down signal once the client prints a line containing TEXT.
# --ranks N (2..4): a collective lesson instead (ring-allreduce, recursive-doubling), one rank on
# each of N lab hosts, rank R on host R+1, its ARGS given to every rank (trace/guest-ranks.sh).
# The environment (kernel, QEMU, rdma-core, tshark, commit, date, faults) goes into "meta".
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: rdmalab trace [--bin DIR] [--loss [I:]P%] [--delay [I:]MS] [--rate [I:]RATE] [--link-down I@WHEN[+SEC]] [--signal-on TEXT] -o OUT.json LESSON [SERVER_ARGS...] [-- CLIENT_ARGS...]
       rdmalab trace [--bin DIR] [--loss|--delay|--rate …] --ranks N -o OUT.json LESSON [ARGS...]"
die() { echo "trace: $*" >&2; exit 2; }

bin=$repo/build/bin
out=""
faults=()      # the lab's fault options, as given (lab.sh checks their values)
signal_on=""   # the client's line that gives the link-down signal
ranks=""       # --ranks N: a collective lesson, one rank per lab host
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) [ $# -ge 2 ] || die "--bin needs a folder"; bin=$2; shift 2 ;;
        --loss|--delay|--rate|--link-down)
            [ $# -ge 2 ] || die "$1 needs a value ($usage)"; faults+=("$1" "$2"); shift 2 ;;
        --signal-on) [ $# -ge 2 ] && [ -n "$2" ] || die "--signal-on needs the text of a client's line"
            signal_on=$2; shift 2 ;;
        --ranks) [ $# -ge 2 ] && [[ $2 =~ ^[2-4]$ ]] || die "--ranks needs a number of ranks from 2 to 4 (the lab's hosts)"
            ranks=$2; shift 2 ;;
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
[ -z "$ranks" ] || [ -z "$signal_on" ] || die "--signal-on watches a client's output: a run of --ranks has none"
hosts=${ranks:-2}
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
guest=(bash "$repo/trace/guest.sh" "${guest_options[@]}" "$bin" "$work" "$lesson" "${args[@]}")
[ -z "$ranks" ] || guest=(bash "$repo/trace/guest-ranks.sh" "$bin" "$work" "$lesson" "${args[@]}")
rc=0
"$repo/lab/lab.sh" --hosts "$hosts" --timeout 180 "${faults[@]}" -- "${guest[@]}" \
    >"$work/lab.out" 2>"$work/lab.err" || rc=$?
if [ "$rc" != 0 ]; then
    echo "trace: the run failed (lab exit $rc):" >&2
    tail -n 5 "$work/lab.err" "$work"/run/*.out 2>/dev/null >&2
    exit 1
fi
for ((h = 1; h <= hosts; h++)); do
    [ -s "$work/host$h.events.jsonl" ] || { echo "trace: host $h wrote no trace" >&2; exit 1; }
    "$bin/rdma-wire" "$work/host$h.pcap" --json "$work/host$h.packets.json" --quiet || exit 1
done

# The run and its environment, which trace-merge writes into the file's "meta" (trace/story.hpp).
kernel=$(basename "$(ls /boot/vmlinuz-* | sort -V | tail -n 1)")
if [ "$hosts" = 2 ]; then links="a virtual link"; else links="a star of virtual links whose centre, host 1, bridges them"; fi
meta=(--lesson "$lesson")
# "=": the text may start with a dash; none at all when there are no arguments.
[ "${#args[@]}" = 0 ] || meta+=(--arguments="${args[*]}")
[ -z "$ranks" ] || meta+=(--ranks "$ranks")
meta+=(--environment "recorded=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    --environment "commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    --environment "guest_kernel=${kernel#vmlinuz-}"
    --environment "qemu=$(qemu-system-x86_64 --version | head -n 1)"
    --environment "rdma_core=$(dpkg-query -W -f='${Version}' rdma-core 2>/dev/null || echo unknown)"
    --environment "tshark=$(tshark --version | head -n 1)"
    --environment "faults=$(sed -n 's/^lab: faults: //p' "$work/lab.err" | head -n 1)"
    --environment "lab=$hosts QEMU guests (software emulation, one vCPU each) on $links, Soft-RoCE (rdma_rxe) on each; packets captured inside each guest with dumpcap")
merge_hosts=()
for ((h = 1; h <= hosts; h++)); do
    merge_hosts+=(--host "host$h" "198.51.100.$h" "$work/host$h.events.jsonl" "$work/host$h.packets.json")
done
"$bin/trace-merge" -o "$out" "${meta[@]}" "${merge_hosts[@]}"
