# Sourced by the scripts that run on several lab hosts at once and keep them in step through
# files in a folder they share (tests/vm/*/, the bench scripts' guest parts): the two waits
# they all need, each with its limit.
#   wait_for FILE [SECONDS]   until FILE exists, at most SECONDS (60); 1 if it never did
#   listening PORT...         until each PORT has a TCP listener here, at most 30 s; 1 if not
wait_for() {
    local tick
    for ((tick = 0; tick < ${2:-60} * 20; tick++)); do [ -e "$1" ] && return 0; sleep 0.05; done
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
