#!/usr/bin/env bash
# ./rdmalab exercise: the exercises — the reader writes the RDMA code, the lab judges it on its
# completions, its packets and its registrations.
#   ./rdmalab exercise                 the exercises, and how far you got with each
#   ./rdmalab exercise start N         your copy of exercise N's starter (my-exercises/), and its task
#   ./rdmalab exercise task N          the task again
#   ./rdmalab exercise check N         build your copy, run it against the reference peer on two
#                                      lab hosts (captured), and judge it: one line per rule
#   ./rdmalab exercise check N --watch the same, again each time you save the file (Ctrl-C ends)
#   ./rdmalab exercise hint N          the next hint (the idea, then the calls, then the code)
#   ./rdmalab exercise selftest DIR [N...]  (the suite) every reference, starter and mutant
#                                      judged (of exercises N… only, when given)
# Progress is kept in my-exercises/progress.tsv: exercise, last verdict, hints shown.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${RDMALAB_BUILD_BIN:-$repo/build/bin}
mine=$repo/my-exercises
progress=$mine/progress.tsv
die() { echo "exercise: $*" >&2; exit 2; }

# The one compiler line an exercise program is built with (its page shows it), from the
# repository's root: compile_line prints it, compile runs it (quiet unless it fails).
export compile_flags="-std=c++20 -O1 -g -Wall -Wextra -I exercises/support" repo
compile_line() { echo "g++ $compile_flags -o $2 $1 -libverbs -lrdmacm"; }  # SOURCE OUTPUT
compile() {  # SOURCE OUTPUT
    # shellcheck disable=SC2086  # the flags are words
    (cd "$repo" && g++ $compile_flags -o "$2" "$1" -libverbs -lrdmacm)
}
export -f compile

exercise_dirs() { find "$repo/exercises" -maxdepth 1 -type d -name '[0-9][0-9]-*' | sort; }
# find_exercise N: the folder of exercise N (1, 01 or its name).
find_exercise() {
    local want=$1 dir
    [[ $want =~ ^[0-9]+$ ]] && want=$(printf '%02d' "$((10#$want))")
    for dir in $(exercise_dirs); do
        local name=${dir##*/}
        if [ "${name%%-*}" = "$want" ] || [ "${name#*-}" = "$want" ] || [ "$name" = "$want" ]; then
            echo "$dir"
            return 0
        fi
    done
    die "no exercise '$1' (./rdmalab exercise lists them)"
}
title_of() { sed -n '1s/^\/\/ Exercise [0-9]* — \([^.(]*\).*/\1/p' "$1/solution.cpp" | sed 's/ *$//'; }
progress_of() {  # progress_of NAME: "verdict hints" or "- 0"
    local line
    line=$(grep -m 1 "^$1"$'\t' "$progress" 2>/dev/null) || { echo "- 0"; return; }
    IFS=$'\t' read -r _ verdict hints <<<"$line"
    echo "$verdict ${hints:-0}"
}
set_progress() {  # set_progress NAME VERDICT HINTS
    mkdir -p "$mine"
    touch "$progress"
    grep -v "^$1"$'\t' "$progress" >"$progress.tmp" || true
    printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$progress.tmp"
    mv "$progress.tmp" "$progress"
}

cmd_list() {
    local dir name verdict hints
    printf '%-4s %-22s %-44s %s\n' "" exercise "" "your progress"
    for dir in $(exercise_dirs); do
        name=${dir##*/}
        read -r verdict hints <<<"$(progress_of "$name")"
        case $verdict in
            passed) verdict="passed" ;;
            failed) verdict="not yet passing" ;;
            *) if [ -e "$mine/$name.cpp" ]; then verdict="started"; else verdict="-"; fi ;;
        esac
        [ "$hints" = 0 ] || verdict+=" ($hints hint(s) seen)"
        printf '%-4s %-22s %-44s %s\n' "${name%%-*}" "${name#*-}" "$(title_of "$dir")" "$verdict"
    done
    echo "Start one with ./rdmalab exercise start N; the site's Exercises section has every task."
}

cmd_task() {
    local dir=$1
    echo "Exercise ${dir##*/}: $(title_of "$dir")"
    echo
    cat "$dir/task.md"
}

cmd_start() {
    local dir=$1 name=${1##*/}
    mkdir -p "$mine"
    if [ -e "$mine/$name.cpp" ]; then
        echo "exercise: my-exercises/$name.cpp exists already: keeping it (delete it to start over)"
    else
        cp "$dir/exercise.cpp" "$mine/$name.cpp"
        echo "exercise: your copy is my-exercises/$name.cpp"
    fi
    cmd_task "$dir"
    echo
    echo "Edit my-exercises/$name.cpp, then: ./rdmalab exercise check ${name%%-*}"
}

# lab_runs RUNS_FILE LIMIT_S: every run the file lists, in one two-host lab boot; then each run's
# packets cut from the boot's one capture by the run's window (editcap).
lab_runs() {
    local capture=${1%/*}/link.pcapng rc=0 run start end
    "$repo/lab/lab.sh" --hosts 2 --timeout "${2:-300}" -- \
        bash "$repo/exercises/judge/in-lab.sh" "$bin" "$1" "$capture" || rc=$?
    while IFS=$'\t' read -r _ _ run; do
        [ -r "$run/window" ] && [ -s "$capture" ] || continue
        read -r start end <"$run/window"
        editcap -A "$start" -B "$end" "$capture" "$run/capture.pcapng" 2>>"$run/editcap.err" ||
            echo "exercise: cutting the capture for $run failed: $(head -n 1 "$run/editcap.err")" >&2
    done <"$1"
    return $rc
}

need_build() {
    local tool
    for tool in exercise-peer exercise-kv-clients exercise-slot-clients exercise-key-server libexercise-observe.so rdma-wire; do
        [ -e "$bin/$tool" ] && continue
        echo "exercise: building the project first (./rdmalab build)"
        "$repo/rdmalab" build || die "the build failed"
        return
    done
}

cmd_check_once() {
    local dir=$1 name=${1##*/} source=$mine/${1##*/}.cpp
    [ -e "$source" ] || die "my-exercises/$name.cpp does not exist yet: ./rdmalab exercise start ${name%%-*}"
    need_build
    local out=$repo/build/exercises/check/$name
    rm -rf "$out"
    mkdir -p "$out/run"
    echo "exercise: $(compile_line "my-exercises/$name.cpp" "build/exercises/check/$name/program")"
    if ! compile "$source" "$out/program" 2>"$out/compile.err"; then
        grep -m 5 -E 'error' "$out/compile.err" | sed "s|$repo/||"
        echo "FAIL builds: expected your file to compile; saw the errors above"
        set_progress "$name" failed "$(progress_of "$name" | cut -d' ' -f2)"
        return 1
    fi
    printf '%s\t%s\t%s\n' "$dir" "$out/program" "$out/run" >"$out/runs.tsv"
    echo "exercise: running it against the reference peer on two lab hosts (about 30 s)…"
    lab_runs "$out/runs.tsv" 200 >"$out/lab.log" 2>&1 ||
        { tail -n 5 "$out/lab.log"; die "the lab did not run (its log: build/exercises/check/$name/lab.log)"; }
    local rc=0
    bash "$repo/exercises/judge/judge.sh" "$dir" "$out/run" "$bin" || rc=$?
    [ -s "$out/run/reader.out" ] && { echo "--- your program printed:"; head -n 10 "$out/run/reader.out"; }
    local hints
    hints=$(progress_of "$name" | cut -d' ' -f2)
    if [ $rc = 0 ]; then
        set_progress "$name" passed "$hints"
        echo "exercise: ${name%%-*} passes. Well done: ./rdmalab exercise lists the next."
    else
        set_progress "$name" failed "$hints"
        echo "exercise: not yet. ./rdmalab exercise hint ${name%%-*} gives a hint."
    fi
    return $rc
}

cmd_check() {
    local dir=$1 watch=$2
    if [ "$watch" = 0 ]; then cmd_check_once "$dir"; return; fi
    local source=$mine/${dir##*/}.cpp stamp="" now
    [ -e "$source" ] || die "my-exercises/${dir##*/}.cpp does not exist yet: ./rdmalab exercise start ${dir##*/}"
    echo "exercise: checking my-exercises/${dir##*/}.cpp each time it is saved (Ctrl-C ends)"
    while :; do
        now=$(stat -c %Y "$source" 2>/dev/null || echo gone)
        if [ "$now" != "$stamp" ]; then
            stamp=$now
            cmd_check_once "$dir" || true
            echo "exercise: waiting for the next save…"
        fi
        sleep 1
    done
}

# hints.md: hint N is the list item that starts "N. " at the line's start, with the lines after it
# up to the next item. The site shows each in a block of its own through the HTML comments
# "<!-- #region hint-N -->" … "<!-- #endregion hint-N -->" around it (docs/exercises/*.md); those
# are not printed here, nor a code block's ``` fences (its lines are indented further instead),
# nor the blank lines that end an item.
cmd_hint() {
    local dir=$1 name=${1##*/} verdict hints levels next kind=""
    levels=$(grep -c '^[0-9]\. ' "$dir/hints.md")
    read -r verdict hints <<<"$(progress_of "$name")"
    next=$((hints + 1))
    [ $next -le "$levels" ] || next=$levels
    [ "$levels" = 3 ] && kind=$(echo "the idea,the calls,the code" | cut -d, -f"$next")
    echo "Hint $next of $levels${kind:+ ($kind)} for exercise $name:"
    awk -v n="$next" '/^<!-- #(end)?region / { next }
        /^[0-9]\. / { k = $1 + 0 }
        k != n { next }
        /^ *```/ { code = !code; next }
        /^$/ { blank++; next }
        { for (; blank > 0; blank--) print ""; print (code ? "    " : "") $0 }' "$dir/hints.md" | sed -E 's/^[0-9]\. /   /'
    set_progress "$name" "$verdict" "$next"
}

# The suite's self-test: for every exercise, the reference must pass, the starter must fail,
# and each mutant (mutants/NAME.diff against the reference; its first line names the rule meant
# to catch it) must be rejected by that rule, with its hint. One lab boot for all of them;
# DIR/verdicts.tsv gets a line per program: exercise, variant, expected, what the judge said, ok|FAIL.
cmd_selftest() {
    local out=$1 dir name variant dirs
    shift
    if [ $# -gt 0 ]; then
        dirs=$(for name in "$@"; do find_exercise "$name" || exit 2; done) || exit 2
    else
        dirs=$(exercise_dirs)
    fi
    need_build
    rm -rf "$out"
    mkdir -p "$out"
    : >"$out/runs.tsv"
    : >"$out/build.tsv"
    for dir in $dirs; do
        name=${dir##*/}
        mkdir -p "$out/$name"
        echo "reference $dir/solution.cpp" >>"$out/$name/variants"
        echo "starter $dir/exercise.cpp" >>"$out/$name/variants"
        for mutant in "$dir"/mutants/*.diff; do
            [ -e "$mutant" ] || continue
            variant=${mutant##*/}
            variant=mutant-${variant%.diff}
            patch -s -o "$out/$name/$variant.cpp" "$dir/solution.cpp" "$mutant" >"$out/$name/$variant.patch.log" 2>&1 ||
                echo "$name $variant: the mutant does not apply: $(head -n 1 "$out/$name/$variant.patch.log")" >&2
            echo "$variant $out/$name/$variant.cpp" >>"$out/$name/variants"
        done
        while read -r variant source; do
            mkdir -p "$out/$name/$variant.run"
            printf '%s\t%s\t%s\n' "$name" "$variant" "$source" >>"$out/build.tsv"
            printf '%s\t%s\t%s\n' "$dir" "$out/$name/$variant" "$out/$name/$variant.run" >>"$out/runs.tsv"
        done <"$out/$name/variants"
    done
    # The programs are compiled while the lab runs them, in the runs' order: two compilers at a
    # time (the machine has two cores), niced below the guests. PROGRAM.built says the compiler is
    # done with PROGRAM (built or not); both lab hosts wait for it before each run
    # (EXERCISE_BUILDING, exercises/judge/in-lab.sh). Compiling first took 160 of this test's
    # 538 s in CI (2026-11-27); the runs take twice as long as the compiles.
    local start=$SECONDS builder
    while IFS=$'\t' read -r name variant source; do
        printf '%s\0%s\0' "$source" "$out/$name/$variant"
    done <"$out/build.tsv" |
        nice -n 19 xargs -0 -n 2 -P 2 bash -c \
            'compile "$0" "$1" 2>"$1.build.err" || echo "does not build: $0" >&2; touch "$1.built"' &
    builder=$!
    trap 'kill "$builder" 2>/dev/null' EXIT   # an interrupted self-test leaves no compiler queue
    EXERCISE_BUILDING=1 lab_runs "$out/runs.tsv" 1200 >"$out/lab.log" 2>&1 ||
        echo "exercise: the lab ended badly: $(tail -n 1 "$out/lab.log")" >&2
    wait "$builder"
    trap - EXIT
    echo "selftest: $(wc -l <"$out/runs.tsv") programs built and run in the lab in $((SECONDS - start)) s"
    # Every run judged, two at a time; each judge's exit status kept beside its lines.
    while IFS=$'\t' read -r name variant _; do
        printf '%s\0%s\0%s\0' "$repo/exercises/$name" "$out/$name/$variant.run" "$out/$name/$variant.judged"
    done <"$out/build.tsv" |
        xargs -0 -n 3 -P 2 bash -c 'rc=0; bash "$0" "$2" "$3" "$1" >"$4" 2>&1 || rc=$?; echo $rc >"$4.rc"' \
            "$repo/exercises/judge/judge.sh" "$bin"
    : >"$out/verdicts.tsv"
    while IFS=$'\t' read -r name variant _; do
        local judged=$out/$name/$variant.judged rc=0 expected verdict=FAIL said
        read -r rc <"$judged.rc" 2>/dev/null || rc=none
        if [ ! -x "$out/$name/$variant" ]; then
            printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$variant" "builds" "does not build: $(grep -m 1 error "$out/$name/$variant.build.err")" FAIL >>"$out/verdicts.tsv"
            continue
        fi
        case $variant in
            reference) expected="every rule holds"; [ $rc = 0 ] && verdict=ok ;;
            starter) expected="rejected"; [ $rc = 1 ] && verdict=ok ;;
            mutant-*)
                local rule
                rule=$(sed -n '1s/^rule: //p' "$repo/exercises/$name/mutants/${variant#mutant-}.diff")
                expected="rejected by rule $rule"
                [ $rc = 1 ] && grep -q "^FAIL $rule: .* — hint: " "$judged" && verdict=ok ;;
        esac
        said=$(grep -c '^FAIL' "$judged")
        printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$variant" "$expected" "judge exit $rc, $said rule(s) failed: $(grep '^FAIL' "$judged" | cut -d: -f1 | sed 's/^FAIL //' | paste -sd, -)" "$verdict" >>"$out/verdicts.tsv"
    done <"$out/build.tsv"
    cat "$out/verdicts.tsv"
}

[ $# -gt 0 ] || { cmd_list; exit 0; }
command=$1
shift
case $command in
    list) cmd_list ;;
    task|start|hint)
        [ $# = 1 ] || die "usage: ./rdmalab exercise $command N"
        dir=$(find_exercise "$1") || exit 2
        "cmd_$command" "$dir" ;;
    check)
        [ $# -ge 1 ] || die "usage: ./rdmalab exercise check N [--watch]"
        dir=$(find_exercise "$1") || exit 2
        watch=0
        [ $# = 1 ] || { [ $# = 2 ] && [ "$2" = --watch ]; } || die "usage: ./rdmalab exercise check N [--watch]"
        [ $# = 2 ] && watch=1
        cmd_check "$dir" "$watch" ;;
    selftest) [ $# -ge 1 ] || die "usage: exercise.sh selftest OUT_DIR [N...]"; cmd_selftest "$@" ;;
    -h|--help|help) sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' ;;
    *) die "unknown command '$command' (./rdmalab exercise --help)" ;;
esac
