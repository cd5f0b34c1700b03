#include "rdmalab/transfer/job.hpp"

#include <fmt/core.h>

namespace rdmalab::transfer {

int job_initiators(JobPattern pattern, int ranks) {
    return pattern == JobPattern::kManyToOne ? ranks - 1 : ranks / 2;
}

std::variant<JobRole, std::string> job_role(JobPattern pattern, int rank, int ranks,
                                            std::uint16_t base_port) {
    if (ranks < 2) return fmt::format("a job of {} rank(s): a transfer needs 2 or more", ranks);
    if (rank < 0 || rank >= ranks)
        return fmt::format("rank {} is not a place among {} ranks", rank, ranks);
    if (pattern == JobPattern::kManyToOne) {
        if (job_initiators(pattern, ranks) > kMaxJobInitiators)
            return fmt::format("{} ranks: a target takes at most {} initiators", ranks,
                               kMaxJobInitiators);
        if (rank == 0)
            return JobRole{.target = true,
                           .peer = 0,
                           .initiators = static_cast<std::uint32_t>(job_initiators(pattern, ranks)),
                           .port = base_port};
        return JobRole{.target = false, .peer = 0, .initiators = 0, .port = base_port};
    }
    if (ranks % 2 != 0)
        return fmt::format("{} ranks cannot be paired (pairwise: an even number)", ranks);
    const int pair = rank / 2;
    if (base_port + pair > 65535)
        return fmt::format("pair {} would listen on port {}, past 65535", pair, base_port + pair);
    const auto port = static_cast<std::uint16_t>(base_port + pair);
    if (rank % 2 == 0) return JobRole{.target = true, .peer = rank, .initiators = 1, .port = port};
    return JobRole{.target = false, .peer = rank - 1, .initiators = 0, .port = port};
}

std::string with_rank(std::string_view path, int rank) {
    std::string result(path);
    const std::string rank_text = std::to_string(rank);
    for (auto at = result.find("{rank}"); at != std::string::npos;
         at = result.find("{rank}", at + rank_text.size()))
        result.replace(at, 6, rank_text);
    return result;
}

}  // namespace rdmalab::transfer
