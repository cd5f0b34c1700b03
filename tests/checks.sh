# Assertion helpers shared by the lab tests (tests/lab/lib.sh) and the native tests: each check
# prints "ok" or "FAIL" and one line; `finish` exits 0 only if none failed. Needs $scratch.
failures=0
expect_failure_limit=${expect_failure_limit:-60}  # seconds a command expected to fail may take

# Parts: a script whose one run (a lab boot) is costly holds several CTest tests' checks. `part
# NAME` starts a part; where RDMALAB_CHECK_RECORDS names a file, every check appends a record to
# it, "PART<TAB>ok|FAIL<TAB>DESCRIPTION", and `finish` ends the file with "#complete". CTest runs
# the script once (the fixture's setup, passed when it completed) and a test per part
# (tests/part-verdict.sh: that part's records, all ok); tests/CMakeLists.txt reads the part names
# from the script's `part` lines, so a part is a literal word there.
# The variable is taken out of the environment: a script this one starts that sources checks.sh
# too must not write into (or empty) these records.
check_part=""
check_records=${RDMALAB_CHECK_RECORDS:-}
unset RDMALAB_CHECK_RECORDS
part() { check_part=$1; }
[ -z "$check_records" ] || : >"$check_records"

# measured NAME VALUE: a figure the run measured, printed, and recorded ("#measured<TAB>NAME<TAB>
# VALUE") where checks are: tests/repeat-checks.sh gathers them over many runs, the spread a
# timing line is drawn from.
measured() {
    echo "measured: $1 = $2"
    [ -z "$check_records" ] || printf '#measured\t%s\t%s\n' "$1" "$2" >>"$check_records"
}

check() {  # check DESCRIPTION COMMAND...: run a condition, report it
    local description=$1 verdict=ok
    shift
    if "$@"; then
        echo "ok   - $description"
    else
        echo "FAIL - $description"
        failures=$((failures + 1))
        verdict=FAIL
    fi
    [ -z "$check_records" ] ||
        printf '%s\t%s\t%s\n' "${check_part:-(none)}" "$verdict" "${description//$'\t'/ }" >>"$check_records"
}
# Checks that start no process: in the emulated guest every grep or cat costs a fraction of a
# second. Patterns are extended regular expressions, matched line by line.
has_line() {  # has_line FILE REGEX: some line of FILE matches
    local line
    [ -r "$1" ] || return 1
    while IFS= read -r line || [ -n "$line" ]; do [[ $line =~ $2 ]] && return 0; done <"$1"
    return 1
}
count_is() {  # count_is N FILE REGEX: exactly N lines of FILE match
    local line n=0
    [ -r "$2" ] || return 1
    while IFS= read -r line || [ -n "$line" ]; do [[ $line =~ $3 ]] && n=$((n + 1)); done <"$2"
    [ $n -eq "$1" ]
}
# rdma-bench's result files (--json) are read with `rdma-bench records`, the reader its plots use,
# never by their text. These need $bin, the folder of the binaries; RDMALAB_RECORD_READER names
# another rdma-bench to read them with (the sanitizer pass reads with the default build's: the
# reader is the test's tool there, not what is under test, and under ASan each start is slow).
# record_values FILE PATH: PATH in every record (records/*/PATH: strings as they are, null where
# a record has none), one line each, into $scratch/record-values; a refusal is shown.
record_values() {
    "${RDMALAB_RECORD_READER:-$bin/rdma-bench}" records "$1" --raw --get "records/*/$2" >"$scratch/record-values" \
        2>"$scratch/record-values.err" && return 0
    cat "$scratch/record-values.err"
    return 1
}
records_match() { record_values "$2" "$3" && count_is "$1" "$scratch/record-values" "$4"; }  # N FILE PATH REGEX
record_has() { record_values "$1" "$2" && has_line "$scratch/record-values" "$3"; }  # FILE PATH REGEX
records_count_is() {  # records_count_is N FILE: FILE holds N records
    local n
    n=$("${RDMALAB_RECORD_READER:-$bin/rdma-bench}" records "$2" --count records) && [ "$n" = "$1" ]
}
# count_packets FILE CONDITION...: how many packets of a capture or packet file meet every
# condition (rdma-wire --where: NAME=TEXT, NAME~REGEX, NAME for a header the packet has).
count_packets() {
    local file=$1
    shift
    "$bin/rdma-wire" "$file" --count "${@/#/--where=}"
}
# record_field FILE KEY: KEY's value in the last `record KEY=VALUE ...` line a program printed
# (the lessons' and tools' one-line records: unordered-delivery, transfer-bench).
record_field() { grep '^record ' "$1" 2>/dev/null | tail -n 1 | tr ' ' '\n' | sed -n "s/^$2=//p"; }
rc_is() { local code=""; [ -r "$1" ] && read -r code <"$1"; [ "$code" = "$2" ]; }
one_line() { count_is 1 "$1" '.'; }

# expect_failure NAME RC REGEX COMMAND...: exits with RC, and stderr is exactly one line
# matching REGEX.
expect_failure() {
    local name=$1 rc=$2 regex=$3
    shift 3
    local out=$scratch/$name.stdout err=$scratch/$name.stderr actual=0
    timeout -k 5 "$expect_failure_limit" "$@" >"$out" 2>"$err" || actual=$?
    echo "$actual" >"$scratch/$name.rc"
    check "$name: exits $rc" rc_is "$scratch/$name.rc" "$rc"
    check "$name: one line on stderr" one_line "$err"
    check "$name: says: $regex" has_line "$err" "$regex"
    [ "$actual" = "$rc" ] && one_line "$err" || { echo "--- stderr:"; cat "$err"; }
}

finish() {
    if [ -n "$check_records" ] && grep -q -v -e $'^(none)\t' -e '^#' "$check_records"; then
        # In parts: each part's test gives the verdict; this run passes if it came to its end
        # with every check inside a part.
        echo "#complete" >>"$check_records"
        echo "$failures check(s) failed; each part's CTest test names its own"
        if grep -q $'^(none)\t' "$check_records"; then
            echo "FAIL - a check outside any part (give it one: part NAME)"
            exit 1
        fi
        exit 0
    fi
    [ -z "$check_records" ] || echo "#complete" >>"$check_records"
    if [ $failures -eq 0 ]; then echo "all checks passed"; exit 0; fi
    echo "$failures check(s) failed"
    exit 1
}
