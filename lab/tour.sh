#!/usr/bin/env bash
# The tour: every lesson in turn, against real verbs, with one line on what each shows.
# Run by `./rdmalab tour` inside the lab; usage: lab/tour.sh BUILD_BIN_DIR
set -uo pipefail
export RDMALAB_BIN=${1:?usage: tour.sh BUILD_BIN_DIR}
export RDMALAB_ADDR=${RDMALAB_ADDR:?run the tour through ./rdmalab tour (the lab sets RDMALAB_ADDR)}
source "$(dirname "$0")/pair.sh" || exit 1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
shown=0
verified=0
failed_lessons=()

heading() {
    printf '\n\033[1m[%d] %s\033[0m — %s\n' "$((shown + 1))" "$1" "$2"
}
[ -t 1 ] || heading() { printf '\n[%d] %s — %s\n' "$((shown + 1))" "$1" "$2"; }

# lesson NAME "what it shows" [SERVER_ARGS...] -- [CLIENT_ARGS...]: run a client/server lesson.
lesson() {
    local name=$1 what=$2
    shift 2
    heading "$name" "$what"
    pair_run "$scratch/$name" "$name" "$@"
    sed 's/^/    /' "$scratch/$name/server.out" "$scratch/$name/client.out"
    finish_lesson "$name" "$(cat "$scratch/$name/server.rc")" "$(cat "$scratch/$name/client.rc")"
}

finish_lesson() {
    local name=$1
    shift
    shown=$((shown + 1))
    for rc in "$@"; do
        if [ "$rc" != 0 ]; then
            echo "    ✗ $name failed (exit codes: $*)"
            failed_lessons+=("$name")
            return
        fi
    done
    verified=$((verified + 1))
}

heading devices "what the lab offers: one Soft-RoCE device (rxe0) on a veth, its port, GIDs and limits"
"$RDMALAB_BIN/devices" >"$scratch/devices.out" 2>&1
devices_rc=$?
sed 's/^/    /' "$scratch/devices.out"
finish_lesson devices "$devices_rc"

lesson rdma-write "one-sided: the client writes into the server's memory; a final SEND says 'done'" \
    -s 64K -- -s 64K
lesson rdma-read "one-sided: the client reads the server's memory; the server only advertised it" \
    -s 64K -- -s 64K
lesson send-recv "two-sided: pre-posted receives; every SEND arrives whole, in order" -n 4 -- -n 4

echo
if [ ${#failed_lessons[@]} -eq 0 ]; then
    echo "tour: $verified of $shown lessons ran on real verbs (Soft-RoCE) and verified their data"
    exit 0
fi
echo "tour: ${#failed_lessons[@]} of $shown lessons failed: ${failed_lessons[*]}"
exit 1
