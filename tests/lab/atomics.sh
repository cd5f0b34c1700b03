# Lab test: atomics — several clients fetch-and-add one server counter and increment a second word
# under a CAS spin lock; the server checks both totals exactly, and sees updates lost without the lock.
source "$(dirname "$0")/lib.sh" "$@"

# all_clients DIR COUNT RC REGEX: every client exited RC and printed REGEX.
all_clients() {
    local i
    for i in $(seq "$2"); do
        rc_is "$1/client$i.rc" "$3" && has_line "$1/client$i.out" "$4" || return 1
    done
}

group_run "$scratch/default" atomics 2 --accept-timeout 20 --
check "default: server exits 0" rc_is "$scratch/default/server.rc" 0
check "default: server counted 2 x 100 exactly, locked word too" has_line "$scratch/default/server.out" \
    '^server: verified: 2 clients x 100 fetch-and-adds = 200, and 200 increments under the remote CAS lock, none lost'
check "default: the device's atomic_cap is reported" has_line "$scratch/default/server.out" 'atomic_cap: ATOMIC_(HCA|GLOB)'
check "default: both clients exit 0 and say done" all_clients "$scratch/default" 2 0 \
    '^client [12]: done: 100 fetch-and-adds and 100 read-modify-writes'
show_on_failure "$scratch/default"

group_run "$scratch/three" atomics 3 --clients 3 --accept-timeout 20 -n 300 -- -n 300
check "three: server exits 0" rc_is "$scratch/three/server.rc" 0
check "three: server counted 3 x 300 exactly" has_line "$scratch/three/server.out" \
    '^server: verified: 3 clients x 300 fetch-and-adds = 900, and 900 increments'
check "three: all clients exit 0" all_clients "$scratch/three" 3 0 '^client [123]: done'
check "three: each client got its own lock id" \
    bash -c "cat '$scratch'/three/client*.out | grep -oE '^client [0-9]+: done' | sort -u | wc -l | grep -qx 3"
show_on_failure "$scratch/three"

# Without the lock, the READ-add-WRITE of two clients interleaves and updates are lost: the
# server's exact count must catch it (the fetch-and-add counter stays exact).
group_run "$scratch/no-lock" atomics 2 --clients 2 --accept-timeout 20 -n 1000 -- -n 1000 --no-lock
check "no-lock: server exits 1" rc_is "$scratch/no-lock/server.rc" 1
check "no-lock: counter still exact" has_line "$scratch/no-lock/server.out" '^server: counter = 2000,'
check "no-lock: server reports lost updates" has_line "$scratch/no-lock/server.out" \
    '^server: check FAILED: the lock-protected word is [0-9]+, not 2000: [0-9]+ updates were lost'
show_on_failure "$scratch/no-lock"

# A server still waiting for a second client: the first client's wait for "go" is bounded. (The
# server waits 5 s: the first client must have connected by then even under ASan in the lab.)
group_run "$scratch/missing" atomics 1 --clients 2 --accept-timeout 5 -- --timeout 2
check "missing: client exits 1" rc_is "$scratch/missing/client1.rc" 1
check "missing: client says what it waited for" has_line "$scratch/missing/client1.out" \
    "the server's go message: no completion within 2.0 s"
check "missing: server gives up on the second client" has_line "$scratch/missing/server.out" \
    'CONNECT_REQUEST.*no rdma_cm event within 5.0 s'
show_on_failure "$scratch/missing"

expect_failure clients-zero 2 'clients' "$bin/atomics" server --clients 0
expect_failure iters-zero 2 'iters' "$bin/atomics" client "$addr" -n 0
finish
