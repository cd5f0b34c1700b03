# Native test: efa-rdm moves and verifies SEND, WRITE and READ through libfabric on this host
# (providers tcp;ofi_rxm and shm on loopback; no RDMA device needed), and bad input fails clearly.
# Usage: bash tests/native/efa-rdm.sh BUILD_BIN_DIR
set -uo pipefail
bin=${1:?usage: $0 BUILD_BIN_DIR}
lesson=$bin/efa-rdm
if [ ! -x "$lesson" ]; then
    echo "SKIP: $lesson was not built (libfabric's development files are missing: libfabric-dev)"
    exit 77
fi
scratch=$(mktemp -d)
server_pid=""
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$scratch"' EXIT
expect_failure_limit=30
source "$(dirname "$0")/../checks.sh" || exit 1
source "$(dirname "$0")/../../lab/pair.sh" || exit 1
port=18770  # each pair gets its own port, so a server left behind cannot answer the next client

# pair NAME [SERVER_ARGS...] -- [CLIENT_ARGS...]: server and client on 127.0.0.1 through
# lab/pair.sh (each process limited to 30 s); leaves NAME/server.out, client.out, server.rc,
# client.rc.
pair() {
    local dir=$scratch/$1
    shift
    split_args "$@"
    port=$((port + 1))
    local server=("$lesson" server -p "$port" --accept-timeout 10 --timeout 10 "${server_args[@]}")
    local client=("$lesson" client 127.0.0.1 -p "$port" --timeout 10 "${client_args[@]}")
    pair_limit_s=30 pair_commands "$dir" "${server[@]}" -- "${client[@]}"
}

# pair_expect NAME BYTES PROVIDER [SERVER_ARGS...] -- [CLIENT_ARGS...]: all three verified.
pair_expect() {
    local name=$1 bytes=$2 provider=$3 before=$failures
    shift 3
    pair "$name" "$@"
    local dir=$scratch/$name
    check "$name: client exits 0" rc_is "$dir/client.rc" 0
    check "$name: server exits 0" rc_is "$dir/server.rc" 0
    check "$name: provider $provider chosen" has_line "$dir/client.out" "provider $provider,"
    check "$name: SEND verified by the server" \
        has_line "$dir/server.out" "^server: SEND: $bytes bytes received into a posted buffer, content verified"
    check "$name: WRITE verified by the server" \
        has_line "$dir/server.out" "^server: WRITE: $bytes bytes placed by the client's RMA write, content verified"
    check "$name: READ verified by the client" \
        has_line "$dir/client.out" "^client: READ: $bytes bytes read from the server's memory, content verified"
    check "$name: client's final line" \
        has_line "$dir/client.out" "^client: SEND, WRITE and READ of $bytes bytes verified over $provider "
    check "$name: server's final line" \
        has_line "$dir/server.out" "^server: verified the client's SEND and WRITE over $provider; .* verified \\($bytes bytes\\)"
    [ $failures -eq $before ] || { for f in "$dir"/*.out; do echo "--- $f"; cat "$f"; done; }
}

# expect_failure NAME RC REGEX COMMAND...: exits RC with exactly one line on stderr matching REGEX.
start=$(date +%s)
part tcp-default
# The default provider (tcp, layered as tcp;ofi_rxm): remote addresses are offsets, keys ours.
pair_expect tcp-default 4096 'tcp;ofi_rxm' --
check "tcp-default: IP providers pinned to loopback" \
    has_line "$scratch/tcp-default/server.out" '^server: IP providers use FI_TCP_IFACE=lo '
check "tcp-default: remote addresses are offsets" \
    has_line "$scratch/tcp-default/client.out" 'remote addresses are offsets'
part shm-partial
# shm: remote addresses are virtual addresses (FI_MR_VIRT_ADDR). A large transfer, smaller than
# the server's 1 MiB buffers: the rest of the write target must stay zero.
pair_expect shm-partial 1000000 shm --provider shm -s 1M -- --provider shm -s 1000000
check "shm-partial: remote addresses are virtual addresses" \
    has_line "$scratch/shm-partial/client.out" 'remote addresses are virtual addresses'

part refusals
# The client refuses to move more than the server's buffers hold; the server is told why.
pair too-big -- -s 8K
check "too-big: client exits 1" rc_is "$scratch/too-big/client.rc" 1
check "too-big: client says why" \
    has_line "$scratch/too-big/client.out" "server's buffers hold 4096 bytes; cannot move 8192"
check "too-big: server exits 1" rc_is "$scratch/too-big/server.rc" 1
check "too-big: server says the client left" has_line "$scratch/too-big/server.out" 'no hello from the client'

# Both sides must use the same provider.
pair mismatch --provider shm -- --provider tcp
check "mismatch: client exits 1" rc_is "$scratch/mismatch/client.rc" 1
check "mismatch: client names both providers" \
    has_line "$scratch/mismatch/client.out" "server uses provider 'shm'.*we use 'tcp;ofi_rxm'.*same --provider"
check "mismatch: server exits 1" rc_is "$scratch/mismatch/server.rc" 1

part unknown-provider
# Unknown providers and domains: one line naming it and what is offered instead.
expect_failure unknown-provider 1 "provider 'nosuch' here \\(offered: .*tcp;ofi_rxm on lo" \
    "$lesson" client 127.0.0.1 --provider nosuch
expect_failure no-efa-here 1 "provider 'efa' here \\(offered: .*shm on shm" "$lesson" server --provider efa
expect_failure unknown-domain 1 "provider 'shm' on domain 'nosuch' here \\(offered: " \
    "$lesson" server --provider shm -d nosuch

part absent-server
# No server: a clear line, quickly.
t0=$(date +%s)
expect_failure absent-server 1 'connect to 127.0.0.1 port 18999 failed: .*is the server running' \
    "$lesson" client 127.0.0.1 -p 18999
check "absent-server: fails within 10 s" [ $(($(date +%s) - t0)) -lt 10 ]

part verbs-options
# libfabric chooses addresses itself: the verbs lessons' --gid-index is not an option here.
expect_failure gid-index 2 'gid-index' "$lesson" server --gid-index 1
expect_failure tclass 2 'tclass' "$lesson" server --tclass 106

echo "($(($(date +%s) - start)) s)"
finish
