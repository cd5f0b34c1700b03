// The ranks of a job that lists its hosts itself (the ring-allreduce lesson): the list --hosts
// gives, and this process's rank from the launcher that started it (Open MPI's mpirun, a PMI
// launcher, Slurm's srun) when the command line gives none.
#pragma once

#include <string>
#include <vector>

namespace rdmalab {

// "a,b,c" → {"a", "b", "c"}, in order; empty names are kept ("a,,b" has three), for the caller
// to refuse.
std::vector<std::string> split_hosts(const std::string& list);

// This process's rank in its job: OMPI_COMM_WORLD_RANK, then PMI_RANK, then SLURM_PROCID;
// -1 when none is set. Throws Error, naming the variable, if its value is not a rank.
int launcher_rank();

}  // namespace rdmalab
