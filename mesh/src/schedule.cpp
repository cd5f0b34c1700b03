// The circle method: rank 0 (or a phantom "bye" rank when N is odd) stays put while the others
// rotate one place per round; each round pairs position i with position n−1−i. The reduced
// plans (sample, ring, rail) are built from it or packed greedily.
#include "rdmalab/mesh/schedule.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

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

std::vector<std::pair<int, int>> pairs_of(const std::vector<Round>& rounds) {
    std::vector<std::pair<int, int>> pairs;
    for (const Round& round : rounds) pairs.insert(pairs.end(), round.begin(), round.end());
    return pairs;
}

std::vector<Round> one_pair_per_round(const std::vector<Round>& rounds) {
    std::vector<Round> plan;
    for (const auto& pair : pairs_of(rounds)) plan.push_back(Round{pair});
    return plan;
}

std::optional<PairChoice> parse_pairs(const std::string& text) {
    if (text == "all") return PairChoice{PairChoice::Kind::kAll, 0};
    if (text == "rail") return PairChoice{PairChoice::Kind::kRail, 0};
    for (auto [prefix, kind] : {std::pair{"sample:", PairChoice::Kind::kSample},
                                std::pair{"ring:", PairChoice::Kind::kRing}}) {
        const std::string p = prefix;
        if (text.rfind(p, 0) != 0) continue;
        const char* first = text.data() + p.size();
        const char* last = text.data() + text.size();
        int k = 0;
        auto [end, error] = std::from_chars(first, last, k);
        if (error != std::errc() || end != last || first == last || k < 1 || k > 1'000'000)
            return std::nullopt;
        return PairChoice{kind, k};
    }
    return std::nullopt;
}

std::string to_string(const PairChoice& choice) {
    switch (choice.kind) {
        case PairChoice::Kind::kSample:
            return "sample:" + std::to_string(choice.k);
        case PairChoice::Kind::kRing:
            return "ring:" + std::to_string(choice.k);
        case PairChoice::Kind::kRail:
            return "rail";
        case PairChoice::Kind::kAll:
            break;
    }
    return "all";
}

namespace {

// splitmix64: a small generator whose every output is fixed by the seed, on any platform.
struct SplitMix {
    std::uint64_t state;
    std::uint64_t next() {
        std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // Uniform in [0, bound) by rejection (no modulo bias).
    std::uint64_t below(std::uint64_t bound) {
        const std::uint64_t limit = ~0ull - (~0ull % bound);
        for (;;)
            if (std::uint64_t x = next(); x < limit) return x % bound;
    }
};

template <typename T>
void shuffle(std::vector<T>& items, SplitMix& random) {
    for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[random.below(i)]);
}

Round sorted_round(Round round) {
    std::sort(round.begin(), round.end());
    return round;
}

}  // namespace

std::vector<Round> pack_rounds(const std::vector<std::pair<int, int>>& pairs) {
    std::vector<Round> rounds;
    std::vector<std::set<int>> busy;
    for (const auto& pair : pairs) {
        std::size_t r = 0;
        while (r < rounds.size() && (busy[r].contains(pair.first) || busy[r].contains(pair.second)))
            ++r;
        if (r == rounds.size()) {
            rounds.emplace_back();
            busy.emplace_back();
        }
        rounds[r].push_back(pair);
        busy[r].insert(pair.first);
        busy[r].insert(pair.second);
    }
    return rounds;
}

std::vector<Round> plan_rounds(int n, const PairChoice& choice, std::uint64_t seed,
                               const std::vector<int>& rail_of) {
    if (n < 2) return {};
    switch (choice.kind) {
        case PairChoice::Kind::kAll:
            return round_robin(n);
        case PairChoice::Kind::kSample: {
            // A tournament over the ranks in random order: each of its rounds gives every rank
            // one new partner (but one bye per rank for odd N), so K rounds of it, picked at
            // random, give each rank K different random partners.
            SplitMix random{seed};
            std::vector<int> order(static_cast<std::size_t>(n));
            for (int i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
            shuffle(order, random);
            std::vector<Round> all = round_robin(n);
            shuffle(all, random);
            const std::size_t keep =
                std::min(all.size(), static_cast<std::size_t>(choice.k) + (n % 2 == 1 ? 1 : 0));
            std::vector<Round> rounds;
            for (std::size_t r = 0; r < keep; ++r) {
                Round round;
                for (const auto& [a, b] : all[r]) {
                    const int x = order[static_cast<std::size_t>(a)];
                    const int y = order[static_cast<std::size_t>(b)];
                    round.emplace_back(std::min(x, y), std::max(x, y));
                }
                rounds.push_back(sorted_round(std::move(round)));
            }
            return rounds;
        }
        case PairChoice::Kind::kRing: {
            std::set<std::pair<int, int>> pairs;
            for (int d = 1; d <= choice.k && d <= n / 2; ++d)
                for (int i = 0; i < n; ++i) {
                    const int j = (i + d) % n;
                    if (i != j) pairs.insert({std::min(i, j), std::max(i, j)});
                }
            // Nearest first: a ring's neighbours pack into few rounds.
            std::vector<std::pair<int, int>> list(pairs.begin(), pairs.end());
            std::stable_sort(list.begin(), list.end(), [n](const auto& x, const auto& y) {
                auto distance = [n](const std::pair<int, int>& p) {
                    return std::min(p.second - p.first, n - (p.second - p.first));
                };
                return distance(x) < distance(y);
            });
            return pack_rounds(list);
        }
        case PairChoice::Kind::kRail: {
            // Each rail's ranks, a tournament of their own; round r is every rail's round r.
            std::map<int, std::vector<int>> rails;
            for (int r = 0; r < n; ++r)
                rails[static_cast<std::size_t>(r) < rail_of.size()
                          ? rail_of[static_cast<std::size_t>(r)]
                          : 0]
                    .push_back(r);
            std::vector<Round> rounds;
            for (const auto& [rail, members] : rails) {
                const auto local = round_robin(static_cast<int>(members.size()));
                if (rounds.size() < local.size()) rounds.resize(local.size());
                for (std::size_t r = 0; r < local.size(); ++r)
                    for (const auto& [a, b] : local[r])
                        rounds[r].emplace_back(members[static_cast<std::size_t>(a)],
                                               members[static_cast<std::size_t>(b)]);
            }
            for (Round& round : rounds) round = sorted_round(std::move(round));
            return rounds;
        }
    }
    return round_robin(n);
}

}  // namespace rdmalab::mesh
