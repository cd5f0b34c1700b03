// rdma-mesh's schedule: every pair of ranks exactly once, in rounds where each rank is in at
// most one pair (a round-robin tournament, the circle method), so pairs of a round can run at
// the same time without sharing a rank.
#pragma once

#include <optional>
#include <utility>
#include <vector>

namespace rdmalab::mesh {

// One round: pairs (a, b) with a < b.
using Round = std::vector<std::pair<int, int>>;

// N−1 rounds for even N, N rounds for odd N (each rank sits out one: its bye). n < 2: none.
std::vector<Round> round_robin(int n);

// rank's partner in a round, or nullopt on its bye.
std::optional<int> partner_in(const Round& round, int rank);

}  // namespace rdmalab::mesh
