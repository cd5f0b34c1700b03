# Lab test: qp-state-machine connects two RC QPs by hand (no rdma_cm): every transition printed and
# confirmed, the PSNs really exchanged, the data verified; bad records and bad options refused.
source "$(dirname "$0")/lib.sh" "$@"

lesson=qp-state-machine

part default
pair_expect default $lesson '^server: verified 4096 bytes RDMA-written over an RC QP connected by hand' \
    '^client: wrote 4096 bytes .*the server verified them' --
out=$scratch/default
for side in server client; do
    check "default: $side: RESET -> INIT with its mask" has_line "$out/$side.out" \
        "^$side: RESET -> INIT: ibv_modify_qp\(IBV_QP_STATE \| IBV_QP_PKEY_INDEX \| IBV_QP_PORT \| IBV_QP_ACCESS_FLAGS\)$"
    check "default: $side: INIT -> RTR with its mask" has_line "$out/$side.out" \
        "^$side: INIT -> RTR: ibv_modify_qp\(IBV_QP_STATE \| IBV_QP_AV \| IBV_QP_PATH_MTU \| IBV_QP_DEST_QPN \| IBV_QP_RQ_PSN \| IBV_QP_MAX_DEST_RD_ATOMIC \| IBV_QP_MIN_RNR_TIMER\)$"
    check "default: $side: RTR -> RTS with its mask" has_line "$out/$side.out" \
        "^$side: RTR -> RTS: ibv_modify_qp\(IBV_QP_STATE \| IBV_QP_SQ_PSN \| IBV_QP_TIMEOUT \| IBV_QP_RETRY_CNT \| IBV_QP_RNR_RETRY \| IBV_QP_MAX_QP_RD_ATOMIC\)$"
    for state in RESET INIT RTR RTS; do
        check "default: $side: ibv_query_qp confirms $state" has_line "$out/$side.out" \
            "^$side: +ibv_query_qp: qp_state $state"
    done
    check "default: $side: chose the RoCE v2 GID with an IPv4 address" has_line "$out/$side.out" \
        "^$side: rxe[0-9]+ port 1, GID index [0-9]+ \(RoCE v2 ::ffff:"
done
part access-and-psns
check "default: only the server's QP grants REMOTE_WRITE" has_line "$out/server.out" 'qp_access_flags REMOTE_WRITE'
check "default: the client's QP grants nothing" has_line "$out/client.out" 'qp_access_flags none'
# The PSN each side sent is the rq_psn the other side set, and its own sq_psn.
sent_psn() {  # sent_psn SIDE: the PSN SIDE says it sent
    local line
    while IFS= read -r line; do
        [[ $line =~ ^$1:\ sent\ QPN\ 0x[0-9a-f]+,\ PSN\ (0x[0-9a-f]+) ]] && { psn=${BASH_REMATCH[1]}; return; }
    done <"$out/$1.out"
    psn=none
}
sent_psn client
client_psn=$psn
sent_psn server
server_psn=$psn
check "default: the client's PSN is the server's rq_psn" has_line "$out/server.out" "rq_psn ${client_psn:-none}\$"
check "default: the server's PSN is the client's rq_psn" has_line "$out/client.out" "rq_psn ${server_psn:-none}\$"
check "default: the client sends from its own PSN" has_line "$out/client.out" "sq_psn ${client_psn:-none},"

part partial-and-gid
# Sizes: a smaller write into a larger buffer, whose rest must stay untouched (the server checks).
pair_expect partial $lesson '^server: verified 100 bytes' '^client: wrote 100 bytes' -s 1M -- -s 100
# An explicit GID: index 0 is the link-local IPv6 GID, also RoCE v2.
pair_expect gid-index-0 $lesson '^server: verified 4096 bytes' '^client: wrote 4096 bytes' \
    --gid-index 0 -- --gid-index 0
check "gid-index-0: uses GID index 0" has_line "$scratch/gid-index-0/client.out" '^client: rxe[0-9]+ port 1, GID index 0 '

part bad-peers
# The client refuses to write past the buffer the server advertised.
pair_run "$scratch/too-big" $lesson --timeout 1 -- -s 8K
check "too-big: client exits 1" rc_is "$scratch/too-big/client.rc" 1
check "too-big: client says why" has_line "$scratch/too-big/client.out" "server's buffer holds 4096 bytes; cannot write 8192"
check "too-big: server gives up (exit 1)" rc_is "$scratch/too-big/server.rc" 1

# A peer that sends something other than a valid endpoint record (bash's /dev/tcp as the client).
fake_client() {  # fake_client NAME PORT BYTES REGEX: the server must refuse BYTES with one line
    local name=$1 port=$2 bytes=$3 regex=$4 pid
    timeout 30 "$bin/$lesson" server -p "$port" --accept-timeout 10 >"$scratch/$name.out" 2>"$scratch/$name.err" &
    pid=$!
    for _ in {1..100}; do has_line "$scratch/$name.out" '^server: listening' && break; sleep 0.05; done
    # Read the server's own record before closing: closing with unread data would send a reset.
    (exec 3<>"/dev/tcp/$addr/$port" && printf "$bytes" >&3 && timeout 10 head -c 56 <&3 >/dev/null) 2>/dev/null
    wait $pid
    echo $? >"$scratch/$name.rc"
    check "$name: server exits 1" rc_is "$scratch/$name.rc" 1
    check "$name: one line on stderr" count_is 1 "$scratch/$name.err" .
    check "$name: says: $regex" has_line "$scratch/$name.err" "$regex"
}
fake_client bad-magic 18611 "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX" 'not an rdmalab QP record \(bad magic\)'

# The other lesson's QP type on the other end: both sides refuse.
timeout 30 "$bin/uc" server -p 18616 --accept-timeout 10 >"$scratch/mixed.out" 2>&1 &
uc_server=$!
for _ in {1..100}; do has_line "$scratch/mixed.out" '^server: listening' && break; sleep 0.05; done
expect_failure mixed-transports 1 "the peer's QP is UC \(type 3\), this one is RC: run the same lesson on both sides" \
    "$bin/$lesson" client "$addr" -p 18616
wait $uc_server
check "mixed-transports: the UC server refuses too" has_line "$scratch/mixed.out" "the peer's QP is RC"

part refusals
expect_failure absent-server 1 'connect to .* port 18999 failed: Connection refused \(is the server running\?\)' \
    "$bin/$lesson" client "$addr" -p 18999
expect_failure empty-gid 1 'GID index 5 of rxe[0-9]+ port 1 is empty or does not exist' \
    "$bin/$lesson" client "$addr" --gid-index 5
expect_failure no-such-port 1 'rxe[0-9]+ has 1 port\(s\): there is no port 2' "$bin/$lesson" server -i 2
expect_failure too-large 1 'size 68719476736 is larger than one message on rxe[0-9]+ may be' \
    "$bin/$lesson" client "$addr" -s 64G
expect_failure accept-timeout 1 'waiting for a client: nothing within 1.0 s' "$bin/$lesson" server --accept-timeout 1
finish
