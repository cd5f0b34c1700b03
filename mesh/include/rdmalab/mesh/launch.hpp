// Where a rank sits, read from the environment its launcher sets (Open MPI's mpirun, Slurm's
// srun, or a PMIx launcher): which rank on its host it is, so that several ranks on one host
// can each take their own NIC. Pure logic over a lookup, so it is tested without a launcher.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace rdmalab::mesh {

struct LaunchInfo {
    std::string launcher;  // "openmpi", "slurm", "pmix" or "unknown"
    int local_rank = 0;    // this rank's index among the ranks on its host
    int local_size = 1;    // ranks on its host
    std::string node;      // the launcher's name for the host ("" if it gives none)
};

// The lookup returns a variable's value, or nullopt when it is unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// Open MPI (OMPI_COMM_WORLD_LOCAL_RANK, _LOCAL_SIZE) first: mpirun inside a Slurm allocation
// sets both, and its own are the ones that describe this job step. Then Slurm's srun
// (SLURM_LOCALID; SLURM_NTASKS_PER_NODE, set only with --ntasks-per-node, else 1;
// SLURMD_NODENAME), then PMIx (PMIX_LOCAL_RANK, PMIX_LOCAL_SIZE). Values that are not
// non-negative integers are ignored, as if unset.
LaunchInfo read_launch_info(const EnvLookup& env);

// The process environment as an EnvLookup.
LaunchInfo read_launch_info_from_process();

// The device a rank takes: devices is one name ("" for the first device), or a comma list of
// which each rank takes the entry of its local rank (wrapping round when there are fewer).
std::string device_for_local_rank(const std::string& devices, int local_rank);

}  // namespace rdmalab::mesh
