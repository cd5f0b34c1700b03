# Lab test: mpi-allreduce, MPI_Allreduce timed as the allreduce lessons time themselves (what
# bench/allreduce-sweep.sh sets beside them): three ranks under mpirun in one guest, Open MPI over
# TCP, every sum of every allreduce verified on every rank, rank 0's record read back; bad input
# refused with one line before MPI starts.
source "$(dirname "$0")/lib.sh" "$@"
tool=$bin/mpi-allreduce
if [ ! -x "$tool" ]; then
    echo "SKIP: mpi-allreduce is not built (no MPI: apt-get install openmpi-bin libopenmpi-dev)"
    exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(timeout -k 5 120 mpirun --allow-run-as-root --oversubscribe --mca btl self,tcp --mca pml ob1)

# 1,000 bytes: 250 floats, which three ranks do not divide.
rc=0
"${mpi[@]}" -np 3 "$tool" -s 1000 -n 2 --json "$scratch/mpi.json" >"$scratch/mpi.out" 2>&1 || rc=$?
echo "$rc" >"$scratch/mpi.rc"
check "three ranks: mpirun exits 0" rc_is "$scratch/mpi.rc" 0
for r in 0 1 2; do
    check "rank $r verified all 250 sums, twice" \
        count_is 2 "$scratch/mpi.out" "^rank $r: allreduce [0-9]+: [0-9.]+ ms, all 250 sums verified$"
done
check "rank 0 reports algbw and busbw" has_line "$scratch/mpi.out" \
    "^rank 0: allreduce of 1000 bytes over 3 ranks: median [0-9.]+ ms of 2, algbw [0-9.e+-]+ MB/s, busbw [0-9.e+-]+ MB/s$"
check "the record is MPI_Allreduce's" record_has "$scratch/mpi.json" config/algorithm '^MPI_Allreduce$'
check "the record names the MPI library" record_has "$scratch/mpi.json" environment/mpi '^Open MPI'
check "the record holds both allreduce times" records_match 2 "$scratch/mpi.json" 'result/times_ms/*' '^[0-9]'
check "the record has busbw's spread" record_has "$scratch/mpi.json" result/busbw_min_mb_s '^[0-9]'
[ "$rc" = 0 ] || tail -n 20 "$scratch/mpi.out"

expect_failure bad-size 2 "'3X' is not a size" "$tool" -s 3X
expect_failure odd-size 1 '^mpi-allreduce: --size must be a positive multiple of 4 bytes' "$tool" -s 6
finish
