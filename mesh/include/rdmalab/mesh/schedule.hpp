// rdma-mesh's schedule: which pairs of ranks a run measures, in rounds where each rank is in at
// most one pair (so pairs of a round can run at the same time without sharing a rank). Every
// pair: a round-robin tournament (the circle method). At large N, fewer: a seeded random sample
// of partners per rank, each rank's nearest neighbours on a ring, or only the ranks of one rail.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rdmalab::mesh {

// One round: pairs (a, b) with a < b.
using Round = std::vector<std::pair<int, int>>;

// N−1 rounds for even N, N rounds for odd N (each rank sits out one: its bye). n < 2: none.
std::vector<Round> round_robin(int n);

// rank's partner in a round, or nullopt on its bye.
std::optional<int> partner_in(const Round& round, int rank);

// Every pair of the rounds, in order.
std::vector<std::pair<int, int>> pairs_of(const std::vector<Round>& rounds);
// The same pairs, each a round of its own (--serial: pairs never share the CPUs or the fabric).
std::vector<Round> one_pair_per_round(const std::vector<Round>& rounds);

// --pairs: which pairs to measure.
//   all        every pair (round_robin)
//   sample:K   K rounds of a tournament over the ranks in a seeded random order: every rank
//              gets at least K partners (all of them when K ≥ N−1), K (K+1 for odd N) rounds
//   ring:K     each rank with the K ranks after it and the K before it on the ring 0..N−1
//   rail       only ranks of the same rail (the same local rank: NIC i of every host), each
//              rail a tournament of its own, all rails in the same rounds
struct PairChoice {
    enum class Kind { kAll, kSample, kRing, kRail };
    Kind kind = Kind::kAll;
    int k = 0;  // sample:K, ring:K
};

// "all", "sample:K", "ring:K" (K ≥ 1) or "rail"; nullopt for anything else.
std::optional<PairChoice> parse_pairs(const std::string& text);
std::string to_string(const PairChoice& choice);

// The rounds of a run over n ranks. seed: sample's order (the same seed, the same pairs, on
// every machine: the generator and shuffle are written here, not the standard library's).
// rail_of[r]: rank r's rail (its local rank), read by rail only.
std::vector<Round> plan_rounds(int n, const PairChoice& choice, std::uint64_t seed,
                               const std::vector<int>& rail_of = {});

// Any set of pairs (a < b, no repeats) into rounds, each pair in the earliest round where
// neither rank is busy yet (at most 2·D−1 rounds when no rank is in more than D pairs).
std::vector<Round> pack_rounds(const std::vector<std::pair<int, int>>& pairs);

}  // namespace rdmalab::mesh
