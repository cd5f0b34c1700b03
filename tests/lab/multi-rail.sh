# Lab test: multi-rail spreads one transfer's slices round-robin over two QPs (here both on the
# lab host's one device: the calls, not two links; tests/vm/transfer.sh runs it over two), each
# with the target's key for its own registration, and notifies the target only once every slice
# has completed: the server finds every byte in place when the notice arrives.
source "$(dirname "$0")/lib.sh" "$@"
part slices
pair_expect default multi-rail '^server: the notice arrived on rail 1; all 1048576 bytes verified$' \
    '^client: 16 slices of 65536 bytes over 2 rails \(rail 1: 524288 bytes, rail 2: 524288 bytes\); then the notice$' --
# An odd count of slices, the last one short: 5 slices for 13000 bytes, rail 1 taking the
# first, third and fifth (3000 + 3000 + 1000), rail 2 the others.
pair_expect odd multi-rail '^server: the notice arrived on rail 1; all 13000 bytes verified' \
    '^client: 5 slices of 3000 bytes over 2 rails \(rail 1: 7000 bytes, rail 2: 6000 bytes\)' \
    -s 13000 -- -s 13000 --slice 3000
check "each rail's connection names its device" \
    bash -c "grep -c '^client: rail [12] connected over rxe0 port 1' '$scratch/default/client.out' | grep -qx 2"

part refusals
expect_failure slice-zero 2 "--slice: '0' is not a size" "$bin/multi-rail" client "$addr" --slice 0
expect_failure slice-larger 2 'must be 1 byte to -s' "$bin/multi-rail" client "$addr" -s 4K --slice 8K
# A server's buffer smaller than the client's: the client refuses before writing anything.
pair_run "$scratch/too-small" multi-rail -s 4K --timeout 3 -- -s 8K --slice 4K --timeout 3
check "too-small: the client exits 1, the server gives up by itself" \
    bash -c "[ \"\$(cat '$scratch/too-small/client.rc')\" = 1 ] && [ \"\$(cat '$scratch/too-small/server.rc')\" = 1 ]"
show_on_failure "$scratch/too-small"
finish
