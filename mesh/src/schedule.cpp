// The circle method: rank 0 (or a phantom "bye" rank when N is odd) stays put while the others
// rotate one place per round; each round pairs position i with position n−1−i.
#include "rdmalab/mesh/schedule.hpp"

#include <algorithm>

namespace rdmalab::mesh {

std::vector<Round> round_robin(int n) {
    std::vector<Round> rounds;
    if (n < 2) return rounds;
    const int slots = n % 2 == 0 ? n : n + 1;  // slot value n is the bye
    std::vector<int> ring(static_cast<std::size_t>(slots));
    for (int i = 0; i < slots; ++i) ring[static_cast<std::size_t>(i)] = i;
    for (int r = 0; r < slots - 1; ++r) {
        Round round;
        for (int i = 0; i < slots / 2; ++i) {
            int a = ring[static_cast<std::size_t>(i)];
            int b = ring[static_cast<std::size_t>(slots - 1 - i)];
            if (a >= n || b >= n) continue;  // a bye
            round.emplace_back(std::min(a, b), std::max(a, b));
        }
        rounds.push_back(std::move(round));
        // Rotate every slot but the first one place.
        std::rotate(ring.begin() + 1, ring.end() - 1, ring.end());
    }
    return rounds;
}

std::optional<int> partner_in(const Round& round, int rank) {
    for (const auto& [a, b] : round) {
        if (a == rank) return b;
        if (b == rank) return a;
    }
    return std::nullopt;
}

}  // namespace rdmalab::mesh
