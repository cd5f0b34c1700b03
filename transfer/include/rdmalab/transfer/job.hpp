// transfer-bench under a launcher (mpirun, srun): which rank is a target and which an initiator,
// who connects to whom and on which TCP port, from the rank, the number of ranks and the pattern
// (as nixlbench and Mooncake's tebench lay out their ranks). Pure logic, unit-tested; the rank
// itself comes from the launcher (rdmalab/rank_hosts.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace rdmalab::transfer {

enum class JobPattern {
    kPairwise,   // ranks 2k (target) and 2k + 1 (initiator): N/2 pairs at once, each its own port
    kManyToOne,  // rank 0 the target of every other rank, on one port
};

inline constexpr int kMaxJobInitiators = 64;  // a target's initiators at once

struct JobRole {
    bool target = false;
    int peer = 0;                  // an initiator's target rank
    std::uint32_t initiators = 0;  // a target's initiators
    std::uint16_t port = 0;        // the target's TCP port
};

// The role of `rank` among `ranks`, its target listening on base_port + its pair's index
// (pairwise) or on base_port; or why there is none (an odd number of ranks for pairs, fewer than
// two, more initiators than a target takes, a port past 65535).
std::variant<JobRole, std::string> job_role(JobPattern pattern, int rank, int ranks,
                                            std::uint16_t base_port);

// The initiators of a job of `ranks` (its records, one each): ranks / 2 pairwise, ranks - 1 into
// one target.
int job_initiators(JobPattern pattern, int ranks);

// A file name with "{rank}" replaced by the rank (each rank's record of its own).
std::string with_rank(std::string_view path, int rank);

}  // namespace rdmalab::transfer
