# Sourced by the scripts that run on several lab hosts at once and keep them in step through
# files in a folder they share (tests/vm/*/, the bench scripts' guest parts): the two waits
# they all need, each with its limit.
#   wait_for FILE [SECONDS]   until FILE exists, at most SECONDS (60); 1 if it never did
#   wait_for_line FILE REGEX [SECONDS [PID]]
#                             until FILE has a line matching REGEX (a program's "listening" or
#                             "the batches start"), at most SECONDS (60), and no longer than PID,
#                             the process writing it, lives; 1 if it never came
#   listening PORT...         until each PORT has a TCP listener here, at most 30 s; 1 if not
wait_for() {
    local tick
    for ((tick = 0; tick < ${2:-60} * 20; tick++)); do [ -e "$1" ] && return 0; sleep 0.05; done
    return 1
}
wait_for_line() {
    local tick
    for ((tick = 0; tick < ${3:-60} * 10; tick++)); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        [ -z "${4:-}" ] || kill -0 "$4" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
listening() {
    local tick port missing
    for ((tick = 0; tick < 300; tick++)); do
        missing=0
        for port in "$@"; do ss -ltn 2>/dev/null | grep -q ":$port " || missing=1; done
        [ $missing = 0 ] && return 0
        sleep 0.1
    done
    return 1
}
