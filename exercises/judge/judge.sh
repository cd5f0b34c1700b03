#!/usr/bin/env bash
# Judges one run of an exercise: what the lab part (exercises/judge/in-lab.sh) left in RUN_DIR,
# held against the exercise's rules (exercises/NN-name/rules.sh). One line per rule:
#   PASS|FAIL RULE: expected ...; saw ... [— hint: ... (chapter)]
# then "N of M rules hold". Exits 0 when every rule holds, 1 when one does not, 2 on bad input.
#   exercises/judge/judge.sh EXERCISE_DIR RUN_DIR BUILD_BIN_DIR
# What a run leaves: peer.out/peer.rc (the reference peer), reader.out/reader.err/reader.rc
# (the reader's program), observe.tsv (its registrations: exercises/support/observe.cpp),
# capture.pcapng (the link, captured on the peer's host). Packets are read through rdma-wire,
# the project's one packet reader.
set -uo pipefail
exercise_dir=${1:?usage: judge.sh EXERCISE_DIR RUN_DIR BUILD_BIN_DIR}
run=${2:?usage: judge.sh EXERCISE_DIR RUN_DIR BUILD_BIN_DIR}
bin=${3:?usage: judge.sh EXERCISE_DIR RUN_DIR BUILD_BIN_DIR}
[ -r "$exercise_dir/rules.sh" ] || { echo "judge: $exercise_dir has no rules.sh" >&2; exit 2; }
[ -d "$run" ] || { echo "judge: $run is not a run's folder" >&2; exit 2; }
held=0 rules=0

# verdict RULE OK EXPECTED SEEN HINT LINK: the rule's one line.
verdict() {
    rules=$((rules + 1))
    if [ "$2" = 1 ]; then
        held=$((held + 1))
        echo "PASS $1: $3; saw $4"
    else
        echo "FAIL $1: expected $3; saw $4 — hint: $5 (see $6)"
    fi
}

# The reader's exit status, and the first line it wrote on stderr.
reader_rc() { local rc=""; [ -r "$run/reader.rc" ] && read -r rc <"$run/reader.rc"; echo "${rc:-none}"; }
peer_last() {
    if [ "$(cat "$run/peer.rc" 2>/dev/null)" = killed ]; then
        echo "the peer was still waiting for you when your program ended"
    else
        grep '^peer: ' "$run/peer.out" 2>/dev/null | tail -n 1 | cut -c1-160
    fi
}

# The packets, once: rdma-wire writes the packet record, every rule reads it.
packets=$run/packets.json
if [ -s "$run/capture.pcapng" ] && [ ! -s "$packets" ]; then
    "$bin/rdma-wire" "$run/capture.pcapng" --json "$packets" --quiet >/dev/null 2>"$run/wire.err" ||
        echo "judge: rdma-wire could not read the capture: $(head -n 1 "$run/wire.err")" >&2
fi
# count_packets WHERE...: packets matching every --where condition; RC packets unless a
# condition names the transport.
count_packets() {
    [ -s "$packets" ] || { echo 0; return; }
    local args=() condition
    [[ " $* " == *" transport="* ]] || args=(--where transport=RC)
    for condition in "$@"; do args+=(--where "$condition"); done
    "$bin/rdma-wire" "$packets" --count "${args[@]}" 2>/dev/null || echo 0
}

# observed KIND FIELD...: the FIELDs of every KIND line of observe.tsv (reg, send, wc, ...), in
# that order, tab-separated, a line each. A field is found by its name in the file's "#KIND"
# header line (exercises/support/observe.cpp), never by its column; a name the header lacks is
# refused (exit 2, a line on stderr).
observed() {
    local kind=$1
    shift
    awk -F'\t' -v kind="$kind" -v want="$*" '
        BEGIN { n = split(want, names, " ") }
        $1 == "#" kind {
            for (i = 2; i <= NF; i++) at[$i] = i
            for (j = 1; j <= n; j++)
                if (!(names[j] in at)) {
                    print "judge: observe.tsv: " kind " lines have no field " names[j] > "/dev/stderr"
                    exit 2
                }
            header = 1; next
        }
        $1 == kind && header {
            line = $(at[names[1]])
            for (j = 2; j <= n; j++) line = line "\t" $(at[names[j]])
            print line
        }' "$run/observe.tsv"
}

# ---- The rules an exercise's rules.sh uses ----------------------------------------------------

# rule_exits HINT LINK: the reader's program exits 0.
rule_exits() {
    local rc err
    rc=$(reader_rc)
    err=$(grep -m 1 . "$run/reader.err" 2>/dev/null | cut -c1-140)
    verdict exits "$([ "$rc" = 0 ] && echo 1)" "your program exits 0" \
        "exit $rc${err:+ (\"$err\")}" "$1" "$2"
}

# rule_peer_verified HINT LINK: the reference peer checked the data and said so.
rule_peer_verified() {
    local line ok=""
    line=$(peer_last)
    grep -q '^peer: verified' "$run/peer.out" 2>/dev/null && [ "$(cat "$run/peer.rc" 2>/dev/null)" = 0 ] && ok=1
    verdict peer-verified "$ok" "the peer verifies the data" "${line:-the peer said nothing}" "$1" "$2"
}

# rule_packets NAME N DESCRIPTION HINT LINK WHERE...: exactly N RC packets match WHERE.
rule_packets() {
    local name=$1 want=$2 what=$3 hint=$4 link=$5 n
    shift 5
    n=$(count_packets "$@")
    verdict "$name" "$([ "$n" = "$want" ] && echo 1)" "$want $what on the wire" "$n" "$hint" "$link"
}

# rule_clean_wire HINT LINK: no NAK of any kind and nothing sent twice (RC retransmits only
# what was lost or refused).
rule_clean_wire() {
    local naks again
    naks=$(count_packets 'aeth.meaning~NAK')
    again=$(count_packets 'sent_again=true')
    verdict clean-wire "$([ "$naks" = 0 ] && [ "$again" = 0 ] && echo 1)" \
        "no NAK and no packet sent again" "$naks NAK(s), $again packet(s) sent again" "$1" "$2"
}

# rule_psn_continuity HINT LINK: the requests your side sent (host 2's RC packets other than
# ACKs) carry consecutive PSNs, each one more than the last (modulo 2^24), none sent again.
rule_psn_continuity() {
    local seen=0 gaps=0 previous="" psn again
    if [ -s "$packets" ]; then
        while IFS=$'\t' read -r psn again; do
            seen=$((seen + 1))
            [ "$again" = true ] && { gaps=$((gaps + 1)); continue; }
            [ -z "$previous" ] || [ "$psn" = $(((previous + 1) % 16777216)) ] || gaps=$((gaps + 1))
            previous=$psn
        done < <("$bin/rdma-wire" "$packets" --print psn,sent_again --where transport=RC \
                     --where 'src~\.2$' --where 'opcode_name~^(SEND|RDMA|FetchAdd|CmpSwap)' 2>/dev/null)
    fi
    verdict psn-continuity "$([ "$seen" -gt 0 ] && [ "$gaps" = 0 ] && echo 1)" \
        "your packets' PSNs consecutive, none sent again" "$seen packet(s), $gaps out of sequence or sent again" "$1" "$2"
}

# rule_access SPEC HINT LINK: the access flags of every registration the program made (one per
# reg line of observe.tsv). SPEC is either FLAGS — every registration has exactly these (as
# access_flag_names writes them, or none) — or LENGTH=FLAGS ... — each registration of LENGTH
# bytes has its FLAGS, and no other length was registered.
rule_access() {
    local spec=$1 seen="" bad=0 length access want expected
    while IFS=$'\t' read -r length access; do
        seen+="${seen:+, }$access on $length bytes"
        if [[ $spec == *=* ]]; then
            want=$(tr ' ' '\n' <<<"$spec" | sed -n "s/^$length=//p")
        else
            want=$spec
        fi
        [ -n "$want" ] && [ "$access" = "$want" ] || bad=1
    done < <(observed reg length access)
    [ -n "$seen" ] || { seen="no registration"; bad=1; }
    if [[ $spec == *=* ]]; then
        expected="registrations with only the access they need ($spec bytes=flags)"
    else
        expected="every registration with access $spec"
    fi
    verdict least-privilege "$([ $bad = 0 ] && echo 1)" "$expected" "$seen" "$2" "$3"
}

# rule_released HINT LINK: every registration was deregistered (ibv_dereg_mr returned 0).
rule_released() {
    local registered deregistered
    registered=$(observed reg handle | grep -c '^0x')
    deregistered=$(observed dereg result | grep -cx 0)
    verdict released "$([ "$registered" = "$deregistered" ] && echo 1)" \
        "every registration released (ibv_dereg_mr)" "${registered:-0} registered, ${deregistered:-0} released" "$1" "$2"
}

# rule_completions HINT LINK: every completion the program polled was a success (and it polled
# at least one).
rule_completions() {
    local total failed first
    total=$(observed wc status | wc -l)
    failed=$(observed wc status | grep -vcx success)
    first=$(observed wc status opcode | grep -v $'^success\t' | head -n 1 | tr '\t' ' ')
    verdict completions "$([ "$total" -gt 0 ] && [ "$failed" = 0 ] && echo 1)" \
        "every completion you polled a success" "$total polled, $failed failed${first:+ (first: $first)}" "$1" "$2"
}

# rule_posted NAME N OPCODE SIGNALED DESCRIPTION HINT LINK [SGES [INLINE]]: exactly N work
# requests of OPCODE (observe.cpp's names: RDMA_WRITE, SEND, ...) were posted with SIGNALED
# (signaled, unsignaled or any), and where given with SGES scatter/gather entries and INLINE
# (inline or -).
rule_posted() {
    local name=$1 want=$2 opcode=$3 signaled=$4 what=$5 n
    # The fields as asked for: 1 opcode, 2 signaled, 3 result, 4 sges, 5 inline.
    n=$(observed send opcode signaled result sges inline |
        awk -F'\t' -v o="$opcode" -v s="$signaled" -v g="${8:-any}" -v i="${9:-any}" \
            '$1 == o && $3 == 0 && (s == "any" || $2 == s) && (g == "any" || $4 == g) && (i == "any" || $5 == i)' | wc -l)
    verdict "$name" "$([ "$n" = "$want" ] && echo 1)" "$want $what" "$n" "$6" "$7"
}

# rule_post_calls NAME N LIST DESCRIPTION HINT LINK: exactly N ibv_post_send calls posted a list
# of LIST work requests (the line shows every call's list length).
rule_post_calls() {
    local name=$1 want=$2 list=$3 seen n
    n=$(observed post wrs | grep -cx "$list")
    seen=$(observed post wrs | awk '{ n[$1]++ } END { for (k in n) printf "%s%d call(s) of %d", (sep++ ? ", " : ""), n[k], k }')
    verdict "$name" "$([ "$n" = "$want" ] && echo 1)" "$want $4" "${seen:-no ibv_post_send}" "$5" "$6"
}

# rule_fenced NAME OPCODE HINT LINK: every posted WR of OPCODE carries IBV_SEND_FENCE.
rule_fenced() {
    local name=$1 opcode=$2 total fenced
    total=$(observed send opcode | grep -cxF "$opcode")
    fenced=$(observed send opcode fence | grep -cxF "$opcode"$'\tfence')
    verdict "$name" "$([ "$total" -gt 0 ] && [ "$total" = "$fenced" ] && echo 1)" "every $opcode fenced (IBV_SEND_FENCE)" \
        "$fenced of $total fenced" "$3" "$4"
}

# rule_no_registration HINT LINK: the program registered no memory at all.
rule_no_registration() {
    local seen
    seen=$(observed reg access length | awk -F'\t' '{ printf "%s%s on %s bytes", sep, $1, $2; sep = ", " }')
    verdict no-registration "$([ -z "$seen" ] && echo 1)" "no memory registered" "${seen:-none}" "$1" "$2"
}

# rule_transitions HINT LINK: ibv_modify_qp took the QP to INIT, RTR and RTS, in that order,
# each call succeeding.
rule_transitions() {
    local seen
    seen=$(observed modify state result |
        awk -F'\t' '{ printf "%s%s%s", sep, $1, ($2 == 0 ? "" : " (failed: " $2 ")"); sep = ", " }')
    verdict transitions "$([ "$seen" = "INIT, RTR, RTS" ] && echo 1)" "ibv_modify_qp to INIT, RTR, RTS, each succeeding" \
        "${seen:-no ibv_modify_qp}" "$1" "$2"
}

# rule_qp_access EXPECTED HINT LINK: the access the QP grants its peer (set at INIT).
rule_qp_access() {
    local seen
    seen=$(observed modify access | grep -vx -- - | paste -sd, -)
    verdict qp-least-privilege "$([ "$seen" = "$1" ] && echo 1)" "the QP grants the peer $1" "${seen:-no access set}" "$2" "$3"
}

# rule_case NAME HINT LINK: the reference clients' case NAME held (their line "peer: case NAME: ok").
rule_case() {
    local line ok=""
    line=$(grep -m 1 "^peer: case $1: " "$run/peer.out" 2>/dev/null | cut -c1-220)
    grep -q "^peer: case $1: ok" "$run/peer.out" 2>/dev/null && ok=1
    verdict "case-$1" "$ok" "the clients' case $1 holds" \
        "${line:-no line for it, the clients ended first: $(peer_last)}" "$2" "$3"
}

# rule_no_remote_access HINT LINK: no registration grants a peer any access (no REMOTE_* flag):
# a server that moves every value itself has nothing to open.
rule_no_remote_access() {
    local length access opened="" count=0
    while IFS=$'\t' read -r length access; do
        count=$((count + 1))
        [[ $access == *REMOTE* ]] && opened+="${opened:+, }$access on $length bytes"
    done < <(observed reg length access)
    verdict least-privilege "$([ "$count" -gt 0 ] && [ -z "$opened" ] && echo 1)" \
        "no registration open to a peer (no REMOTE_* access)" \
        "${opened:-$count registration(s), none opened}" "$1" "$2"
}

[ -e "$run/observe.tsv" ] || : >"$run/observe.tsv"
source "$exercise_dir/rules.sh"
judge_rules
echo "$held of $rules rules hold"
[ "$held" = "$rules" ] && [ "$rules" -gt 0 ]
