# Every command block a reader is told to run, in README.md and the site's chapters (docs/*.md),
# runs as written and does what the text says, so an example cannot rot. Two halves, one script:
#   tests/doc-commands.sh lab BUILD_BIN_DIR    inside the lab (tests/lab/doc-commands.sh): the
#       run and two-hosts blocks, and the checks on the documents themselves
#   tests/doc-commands.sh host BUILD_BIN_DIR   on the host (tests/vm/doc-commands.sh): the host
#       blocks, which boot the lab themselves (the tour, the wire)
#
# Each ```sh block is preceded by a marker that says how it runs:
#   <!-- doc-test: run -->        the block is one bash script (set -e): every command must exit 0,
#                                 and so must anything it started in the background
#   <!-- doc-test: two-hosts -->  `hostA$ CMD` lines start in the background (the harness waits
#                                 for their "listening" line; a later hostA$ line first waits for
#                                 the earlier ones to end), `hostB$ CMD` lines run in the
#                                 foreground; here both hosts are this one: every process must exit 0
#   <!-- doc-test: host -->       as run, but from the host machine: for commands that boot the lab
#                                 (./rdmalab tour, ./rdmalab lab --hosts N)
#   <!-- doc-test: skip; why: REASON -->
# After the mode, `; FROM => TO` replaces text before running (an address, a device name, a size
# that would take minutes under emulation); `; why: ...` says why. A block without a marker fails.
# Commands run in a scratch folder; `./rdmalab`, `build/`, `docs/`, `bench/`, `lab/` and `lessons/` at the
# start of a word mean the repository's. `./rdmalab test` is this suite itself and is not run
# inside itself; `./rdmalab tour`, `./rdmalab build` and a plain `./rdmalab lab -- CMD` (no shell
# syntax in CMD) run once however often they appear.
side=${1:?usage: doc-commands.sh lab|host BUILD_BIN_DIR}
shift
case "$side" in
    lab) source "$(dirname "$0")/lab/lib.sh" "$@" ;;
    host)
        scratch=$(mktemp -d)
        trap 'rm -rf "$scratch"' EXIT
        source "$(dirname "$0")/checks.sh" ;;
    *) echo "doc-commands.sh: lab or host, not '$side'" >&2; exit 2 ;;
esac
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$scratch/work
mkdir -p "$work" "$scratch/blocks"

# ---- The blocks, each as NNN.sh (its text) and NNN.meta (FILE:LINE, then the marker's body).
awk -v out="$scratch/blocks" '
    FNR == 1 { marker = ""; inside = 0 }
    inside && /^```/ { inside = 0; close(file); next }
    inside { print >> file; next }
    /^```sh[[:space:]]*$/ {
        n++; file = sprintf("%s/%03d.sh", out, n)
        printf "" > file
        printf "%s:%d\t%s\n", FILENAME, FNR, marker > sprintf("%s/%03d.meta", out, n)
        close(sprintf("%s/%03d.meta", out, n))
        inside = 1; marker = ""; next
    }
    /^<!-- doc-test:.*-->[[:space:]]*$/ {
        marker = $0; sub(/^<!-- doc-test:[[:space:]]*/, "", marker); sub(/[[:space:]]*-->[[:space:]]*$/, "", marker)
        next
    }
    /[^[:space:]]/ { marker = "" }
' "$repo/README.md" "$repo"/docs/*.md

# Rewrites a command for the scratch folder and applies the marker's replacements.
rewrite() {
    local text=$1 i
    for ((i = 0; i < ${#from[@]}; i++)); do text=${text//"${from[i]}"/"${to[i]}"}; done
    printf '%s\n' "$text" | sed -E "s#(^|[[:space:];&|(])\\./rdmalab#\\1$repo/rdmalab#g;
        s#(^|[[:space:];&|('])(build|docs|bench|lab|lessons)/#\\1$repo/\\2/#g"
}

# two_hosts BLOCK_FILE: runs a hostA$/hostB$ block; returns non-zero if any process failed.
two_hosts() {
    local block=$1 line logical="" n=0 rc=0 servers=() outputs=()
    wait_servers() {
        local i code
        # After a failed hostB$ line its server would only wait out its accept limit.
        [ $rc = 0 ] || kill "${servers[@]}" 2>/dev/null
        for ((i = 0; i < ${#servers[@]}; i++)); do
            code=0
            wait "${servers[i]}" || code=$?
            if [ "$code" != 0 ]; then
                echo "    hostA exited $code: $(head -c 300 "${outputs[i]}" | tail -n 3)"
                rc=1
            fi
        done
        servers=()
        outputs=()
    }
    while IFS= read -r line || [ -n "$line" ]; do
        if [[ $line == *\\ ]]; then logical+="${line%\\} "; continue; fi
        logical+=$line
        line=$(sed -E 's/^[[:space:]]+//' <<<"$logical")
        logical=""
        [[ -z $line || $line == \#* ]] && continue
        n=$((n + 1))
        local command out=$work/host-$n.out
        command=$(rewrite "${line#host?\$ }")
        case "$line" in
            'hostA$ '*)
                wait_servers
                (cd "$work" && exec timeout -k 5 600 bash -c "$command") >"$out" 2>&1 &
                servers+=($!)
                outputs+=("$out")
                local waited=0
                until grep -q 'listening' "$out" 2>/dev/null || ! kill -0 "${servers[-1]}" 2>/dev/null ||
                    [ $waited -ge 200 ]; do
                    sleep 0.05
                    waited=$((waited + 1))
                done ;;
            'hostB$ '*)
                local code=0
                (cd "$work" && exec timeout -k 5 600 bash -c "$command") >"$out" 2>&1 || code=$?
                if [ "$code" != 0 ]; then
                    echo "    hostB exited $code: $command"
                    tail -n 5 "$out" | sed 's/^/      /'
                    rc=1
                fi ;;
            *) echo "    a line without hostA\$/hostB\$: $line"; rc=1 ;;
        esac
    done <"$block"
    wait_servers
    return $rc
}

# run_block BLOCK_FILE: the block as one bash script.
run_block() {
    local block=$1 script=$work/script.sh line command
    echo 'set -eo pipefail' >"$script"
    while IFS= read -r line || [ -n "$line" ]; do
        command=$(sed -E 's/[[:space:]]+#.*$//; s/[[:space:]]+$//' <<<"$line")
        if [[ $command =~ ^\./rdmalab\ test($|\ ) ]]; then
            echo "    not run inside itself: $command"
            continue
        fi
        # The tour, the build, and a plain command in the lab (no shell syntax: it depends on
        # nothing an earlier line of its block did) run once however often the documents show them.
        if [[ $command =~ ^\./rdmalab\ (tour|build)$ || $command =~ ^\./rdmalab\ lab\ --\ [][A-Za-z0-9_./=:,\ -]+$ ]]; then
            if grep -qxF "$command" "$scratch/ran-once" 2>/dev/null; then
                echo "    ran earlier in this test: $command"
                continue
            fi
            echo "$command" >>"$scratch/ran-once"
        fi
        rewrite "$line" >>"$script"
    done <"$block"
    # Background jobs count too: each must end, and end well.
    echo 'for job in $(jobs -p); do wait "$job"; done' >>"$script"
    local code=0
    (cd "$work" && exec timeout -k 5 900 bash "$script") >"$work/run.out" 2>&1 || code=$?
    if [ "$code" != 0 ]; then
        # The line that says why is often not among the last (a tour's failed step, a client that
        # failed while its server still printed): the lines that name a failure come first.
        echo "    exited $code; its lines that name a failure (at most 20):"
        grep -n -i -E 'fail|error|✗|timed out|no completion|refused|not ok' "$work/run.out" | head -n 20 | sed 's/^/      /'
        echo "    the end of its output:"
        tail -n 15 "$work/run.out" | sed 's/^/      /'
        return 1
    fi
}

blocks=0
for meta in "$scratch"/blocks/*.meta; do
    blocks=$((blocks + 1))
    block=${meta%.meta}.sh
    IFS=$'\t' read -r where marker <"$meta"
    where=${where#"$repo"/}
    # The marker: mode; FROM => TO; why: ...
    IFS=';' read -ra parts <<<"$marker"
    mode=$(echo "${parts[0]:-}" | xargs)
    from=()
    to=()
    why=""
    for part in "${parts[@]:1}"; do
        part=$(sed -E 's/^[[:space:]]+|[[:space:]]+$//g' <<<"$part")
        if [[ $part == why:* ]]; then why=${part#why: }
        elif [[ $part == *' => '* ]]; then from+=("${part%% => *}"); to+=("${part#* => }")
        else mode="bad part '$part'"
        fi
    done
    # Each side runs its own blocks and reports the other's as run elsewhere.
    if [ "$side" = host ]; then
        [ "$mode" = host ] || continue
        mode=run
    elif [ "$mode" = host ]; then
        check "$where: runs from the host machine (vm.doc-commands)" true
        continue
    fi
    case "$mode" in
        run|two-hosts)
            start=$SECONDS
            outcome=0
            if [ "$mode" = run ]; then run_block "$block" || outcome=1; else two_hosts "$block" || outcome=1; fi
            replaced=""
            [ ${#from[@]} -gt 0 ] && replaced=", with ${from[*]} replaced"
            check "$where: runs as written ($mode, $((SECONDS - start)) s$replaced)" [ $outcome = 0 ] ;;
        skip)
            check "$where: skipped, with a reason ($why)" [ -n "$why" ] ;;
        "")
            check "$where: a sh block without a <!-- doc-test: ... --> marker" false ;;
        *)
            check "$where: an unknown doc-test marker '$marker'" false ;;
    esac
done
check "found the command blocks ($blocks)" [ "$blocks" -ge 15 ]
[ "$side" = host ] && finish

# The tour runs the lessons in the README table's order (rdma-bench, not a lesson, after them).
table=$(awk -F'`' '/^\| \[`[a-z-]+`\]/ { printf "%s ", $2 }' "$repo/README.md")
# rdma-bench is a tour step, not a lesson.
tour="$("$repo/lab/tour.sh" --steps lab) $("$repo/lab/tour.sh" --steps wire) $("$repo/lab/tour.sh" --steps native)"
tour=$(sed -E 's/ rdma-bench//g' <<<"$tour")
check "the tour follows the README's lesson table" [ "$table" = "$tour " ]
[ "$table" = "$tour " ] || { echo "    README: $table"; echo "    tour:   $tour"; }
finish
