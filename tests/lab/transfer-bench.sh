# Lab test: transfer-bench, the transfer engine's bench, on the lab host's one device (one rail):
# WRITE and READ batches with every byte checked (the client's record read through its type),
# four QPs on the rail (--qps 4), the bytes through the GPU memory layer (--mem host), two
# initiators at once into one target (--clients 2), ranks under mpirun (job: pairs, and
# many-to-one), and what a peer may send it that it must refuse — a plan that is not one, a
# client that leaves mid-run — each ended with one line and a non-zero exit, within its limit.
# The sanitizer shard runs this on its ASan build too: nothing leaked on any of these paths.
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/../../lab/guest-wait.sh"  # wait_for_line
# transfer NAME RECORD_CHECKS -- CLIENT_ARGS: one pairwise run, the client's record in NAME/run.json;
# both sides exit 0, and each "PATH=REGEX" of RECORD_CHECKS holds in the record.
transfer() {
    local name=$1 dir=$scratch/$1 before=$failures
    shift
    local fields=()
    while [ "$1" != -- ]; do fields+=("$1"); shift; done
    shift
    pair_run "$dir" transfer-bench -- "$@" --json "$dir/run.json"
    check "$name: client exits 0" rc_is "$dir/client.rc" 0
    check "$name: server exits 0" rc_is "$dir/server.rc" 0
    for field in "${fields[@]}"; do
        check "$name: the record's ${field%%=*} is ${field#*=}" record_has "$dir/run.json" "${field%%=*}" "${field#*=}"
    done
    [ $failures -eq $before ] || show_on_failure "$dir"
}
part batches
transfer write config/op='^write$' result/bytes='^4194304$' result/verified='^true$' \
    -- -s 64K --batch 4 --batches 16 --check
check "write: the server verified the 16 batches itself" \
    bash -c "[ \"\$(grep '^record side=server' '$scratch/write/server.out' | tr ' ' '\n' | sed -n 's/^verified=//p')\" = 16 ]"
transfer read config/op='^read$' result/bytes='^4194304$' result/verified='^true$' \
    -- --op read -s 64K --batch 4 --batches 16 --check
# Four QPs on the one rail: the slices take them in turn, every byte still checked.
transfer qps config/qps_per_rail='^4$' result/verified='^true$' 'result/rails/0/bytes=^4194304$' \
    -- -s 64K --batch 8 --batches 8 --check --qps 4
check "qps: the server connected the rail's 4 QPs" has_line "$scratch/qps/server.out" ' 1 rails of 4 QP\(s\) connected'
group_run "$scratch/many" transfer-bench 2 --clients 2 -- -s 64K --batch 4 --batches 8 --check
check "many: both clients verified their batches" \
    bash -c "[ \"\$(cat '$scratch/many/client1.rc')\" = 0 ] && [ \"\$(cat '$scratch/many/client2.rc')\" = 0 ]"
check "many: the server took both at once: 16 batches verified, 4 MiB in" \
    bash -c "[ \"\$(cat '$scratch/many/server.rc')\" = 0 ] && grep -q '^record side=server clients=2 bytes=4194304 .* verified=16$' '$scratch/many/server.out'"
show_on_failure "$scratch/many"

part memory
# The bytes through the GPU memory layer's registration ladder (--mem, --path; gpu/memory.hpp):
# host memory here, and the rung that took it in the record. The staging rung is refused (a
# bounce buffer per rail would move other bytes); a GPU the host lacks is one line.
transfer mem-host config/mem='^host$' config/registration='^host$' result/verified='^true$' \
    -- -s 64K --batch 4 --batches 4 --check --mem host
expect_failure staging 1 'the staging rung copies through a bounce buffer per rail' \
    "$bin/transfer-bench" client "$addr" --path staging --timeout 5
timeout -k 2 30 "$bin/transfer-bench" client "$addr" --mem cuda --timeout 5 \
    >"$scratch/no-gpu.out" 2>"$scratch/no-gpu.err"
echo $? >"$scratch/no-gpu.rc"
check "no GPU: --mem cuda exits 1 or 2 ($(cat "$scratch/no-gpu.rc")), not by its time limit" \
    bash -c "[ \"\$(cat '$scratch/no-gpu.rc')\" = 1 ] || [ \"\$(cat '$scratch/no-gpu.rc')\" = 2 ]"
check "no GPU: one line, naming --mem cuda: $(head -c 120 "$scratch/no-gpu.err")" \
    bash -c "[ \$(wc -l <'$scratch/no-gpu.err') = 1 ] && grep -q -- '--mem cuda' '$scratch/no-gpu.err'"

part job
# Under mpirun, in this guest: four ranks as two pairs (each target its own port), then three
# ranks into rank 0 (many-to-one); the rank each takes is the launcher's.
mpi=(timeout -k 5 120 mpirun --allow-run-as-root --oversubscribe --mca btl self,tcp --mca pml ob1)
dir=$scratch/job
mkdir -p "$dir"
"${mpi[@]}" -np 4 "$bin/transfer-bench" job --hosts "$addr,$addr,$addr,$addr" -s 64K --batch 4 \
    --batches 8 --check --json "$dir/pairs-{rank}.json" >"$dir/pairs.out" 2>&1
echo $? >"$dir/pairs.rc"
check "pairs: mpirun exits 0" rc_is "$dir/pairs.rc" 0
for rank in 1 3; do
    check "pairs: rank $rank's record: every byte verified" record_has "$dir/pairs-$rank.json" result/verified '^true$'
    check "pairs: rank $rank's record: 2 MiB moved" record_has "$dir/pairs-$rank.json" result/bytes '^2097152$'
done
check "pairs: no record from the targets (ranks 0 and 2)" \
    bash -c "[ ! -e '$dir/pairs-0.json' ] && [ ! -e '$dir/pairs-2.json' ]"
check "pairs: two targets, each verified its initiator's 8 batches" \
    count_is 2 "$dir/pairs.out" '^record side=server clients=1 bytes=2097152 .* verified=8$'
"${mpi[@]}" -np 3 "$bin/transfer-bench" job --hosts "$addr,$addr,$addr" --pattern many-to-one \
    -s 64K --batch 4 --batches 8 --check --json "$dir/many-{rank}.json" >"$dir/many.out" 2>&1
echo $? >"$dir/many.rc"
check "many-to-one: mpirun exits 0" rc_is "$dir/many.rc" 0
for rank in 1 2; do
    check "many-to-one: rank $rank's record: every byte verified" record_has "$dir/many-$rank.json" result/verified '^true$'
done
check "many-to-one: rank 0 took both and verified all 16 batches" \
    count_is 1 "$dir/many.out" '^record side=server clients=2 bytes=4194304 .* verified=16$'
[ $failures -eq 0 ] || { cat "$dir/pairs.out" "$dir/many.out"; }

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
