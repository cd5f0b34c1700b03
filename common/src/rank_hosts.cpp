// The ranks of a job that lists its hosts itself (see rank_hosts.hpp).
#include "rdmalab/rank_hosts.hpp"

#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string_view>

namespace rdmalab {

std::vector<std::string> split_hosts(const std::string& list) {
    std::vector<std::string> hosts;
    for (std::size_t start = 0; start <= list.size();) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        hosts.push_back(list.substr(start, comma - start));
        start = comma + 1;
    }
    return hosts;
}

int launcher_rank() {
    for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) {
        const char* value = std::getenv(name);
        if (!value) continue;
        // The launcher's word, checked like any input: a rank misread as 0 would pair two
        // processes as rank 0 and hang the ring.
        const std::string_view text{value};
        int rank = -1;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), rank);
        if (error != std::errc{} || end != text.data() + text.size() || rank < 0)
            fail(fmt::format("{}='{}' is not a rank (a whole number from 0)", name, text));
        return rank;
    }
    return -1;
}

}  // namespace rdmalab
