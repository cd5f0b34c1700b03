# Lab test: solicited-events — the server, asleep in epoll_wait on a CQ armed for solicited
# completions only, is woken by the 2 solicited SENDs and by none of the 3 plain ones.
source "$(dirname "$0")/lib.sh" "$@"

pair_expect solicited-default solicited-events \
    '^server: verified: the 2 solicited SENDs woke the channel, the 3 plain ones did not$' \
    '^client: sent 5 SENDs in 3 steps, notes 4 and 5 with IBV_SEND_SOLICITED$' --
server_out=$scratch/solicited-default/server.out
check "solicited: 2 plain SENDs raised no event" has_line "$server_out" \
    '^server: step 1, 2 plain SENDs: 0 event\(s\), [0-9]+ epoll_wait timeouts, then polled$'
check "solicited: a plain then a solicited SEND: one event, both in the CQ" has_line "$server_out" \
    '^server: step 2, a plain then a solicited SEND: 1 event\(s\), 2 notes in the CQ$'
check "solicited: after re-arming, a solicited SEND: one event" has_line "$server_out" \
    '^server: step 3, re-armed, one solicited SEND: 1 event\(s\)$'
finish
