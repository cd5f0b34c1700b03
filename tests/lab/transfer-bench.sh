# Lab test: transfer-bench, the transfer engine's bench, on the lab host's one device (one rail):
# WRITE and READ batches with every byte checked, two initiators at once into one target
# (--clients 2), and what a peer may send it that it must refuse — a plan that is not one, a
# client that leaves mid-run — each ended with one line and a non-zero exit, within its limit.
# The sanitizer shard runs this on its ASan build too: nothing leaked on any of these paths.
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/../../lab/guest-wait.sh"  # wait_for_line
part batches
pair_expect write transfer-bench '^server: 16 batches verified here$' \
    '^record op=write rails=1 block=65536 batch=4 batches=16 .* verified=1 ' \
    -- -s 64K --batch 4 --batches 16 --check
pair_expect read transfer-bench '^server: 0 batches verified here$' \
    '^record op=read rails=1 block=65536 batch=4 batches=16 .* verified=1 ' \
    -- --op read -s 64K --batch 4 --batches 16 --check
group_run "$scratch/many" transfer-bench 2 --clients 2 -- -s 64K --batch 4 --batches 8 --check
check "many: both clients verified their batches" \
    bash -c "[ \"\$(cat '$scratch/many/client1.rc')\" = 0 ] && [ \"\$(cat '$scratch/many/client2.rc')\" = 0 ]"
check "many: the server took both at once: 16 batches verified, 4 MiB in" \
    bash -c "[ \"\$(cat '$scratch/many/server.rc')\" = 0 ] && grep -q '^record side=server clients=2 bytes=4194304 .* verified=16$' '$scratch/many/server.out'"
show_on_failure "$scratch/many"

part hostile
# A "plan" of 5 bytes where 20 are due: the server refuses it, one line, exit 1.
dir=$scratch/bad-plan
mkdir -p "$dir"
timeout -k 2 30 "$bin/transfer-bench" server --accept-timeout 20 --timeout 5 >"$dir/server.out" 2>"$dir/server.err" &
server=$!
wait_for_line "$dir/server.out" '^server: listening' 10 $server
exec 3<>"/dev/tcp/$addr/18515" && printf '\000\000\000\005hello' >&3
wait $server
echo $? >"$dir/server.rc"
exec 3>&- 3<&-
check "bad plan: the server exits 1" rc_is "$dir/server.rc" 1
check "bad plan: one line says why" \
    bash -c "[ \$(wc -l <'$dir/server.err') = 1 ] && grep -q \"the client's plan has 5 bytes, not 20\" '$dir/server.err'"
# A client killed while its batches run: the server says it left, one line, exit 1.
dir=$scratch/left
mkdir -p "$dir"
timeout -k 2 60 "$bin/transfer-bench" server --accept-timeout 20 --timeout 10 >"$dir/server.out" 2>"$dir/server.err" &
server=$!
wait_for_line "$dir/server.out" '^server: listening' 10 $server
"$bin/transfer-bench" client "$addr" -s 64K --batch 4 --batches 2000 >"$dir/client.out" 2>&1 &
client=$!
wait_for_line "$dir/client.out" 'the batches start' 20 $client
sleep 0.5
kill -KILL $client
wait $client 2>/dev/null
wait $server
echo $? >"$dir/server.rc"
check "client gone: the server exits 1, not by its time limit" rc_is "$dir/server.rc" 1
check "client gone: one line says so: $(head -c 120 "$dir/server.err")" \
    bash -c "[ \$(wc -l <'$dir/server.err') = 1 ]"
finish
