// Unit tests for rdma-mesh's pure logic: the round-robin schedule, the verdict (typical value,
// slow pairs, the host named as culprit), the launcher environment (Open MPI, Slurm, PMIx, the
// device a local rank takes) and the heatmap. Its results (rows, matrices, files):
// mesh_results_test.cpp.
#include "rdmalab/mesh/heatmap.hpp"
#include "rdmalab/mesh/launch.hpp"
#include "rdmalab/mesh/schedule.hpp"
#include "rdmalab/mesh/verdict.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace rdmalab::mesh;

namespace {

// Every pair exactly once, each rank at most once per round, and the number of rounds.
void check_schedule(int n) {
    const auto rounds = round_robin(n);
    ASSERT_EQ(static_cast<int>(rounds.size()), n % 2 == 0 ? n - 1 : n) << "n=" << n;
    std::set<std::pair<int, int>> seen;
    for (const Round& round : rounds) {
        std::set<int> busy;
        for (const auto& [a, b] : round) {
            ASSERT_LT(a, b);
            ASSERT_GE(a, 0);
            ASSERT_LT(b, n);
            EXPECT_TRUE(busy.insert(a).second) << "rank " << a << " twice in a round, n=" << n;
            EXPECT_TRUE(busy.insert(b).second) << "rank " << b << " twice in a round, n=" << n;
            EXPECT_TRUE(seen.insert({a, b}).second) << "pair measured twice, n=" << n;
        }
        // Even N: everyone plays every round; odd N: exactly one bye per round.
        EXPECT_EQ(static_cast<int>(busy.size()), n % 2 == 0 ? n : n - 1);
    }
    EXPECT_EQ(static_cast<int>(seen.size()), n * (n - 1) / 2);
}

}  // namespace

TEST(MeshSchedule, EveryPairOnceEachRankOncePerRound) {
    for (int n = 2; n <= 33; ++n) check_schedule(n);
    check_schedule(512);
}

TEST(MeshSchedule, OddSizesGiveEachRankOneBye) {
    const auto rounds = round_robin(5);
    std::map<int, int> byes;
    for (const Round& round : rounds)
        for (int r = 0; r < 5; ++r)
            if (!partner_in(round, r)) ++byes[r];
    for (int r = 0; r < 5; ++r) EXPECT_EQ(byes[r], 1) << "rank " << r;
}

TEST(MeshSchedule, TooFewRanksHaveNoRounds) {
    EXPECT_TRUE(round_robin(0).empty());
    EXPECT_TRUE(round_robin(1).empty());
    EXPECT_EQ(round_robin(2).size(), 1u);
}

namespace {

// A plan's rounds: pairs in range, a < b, no pair twice, no rank twice in a round. Returns each
// rank's partners.
std::vector<std::set<int>> check_plan(int n, const std::vector<Round>& rounds) {
    std::vector<std::set<int>> partners(static_cast<std::size_t>(n));
    std::set<std::pair<int, int>> seen;
    for (const Round& round : rounds) {
        std::set<int> busy;
        for (const auto& [a, b] : round) {
            EXPECT_LT(a, b);
            EXPECT_GE(a, 0);
            EXPECT_LT(b, n);
            EXPECT_TRUE(busy.insert(a).second) << "rank " << a << " twice in a round, n=" << n;
            EXPECT_TRUE(busy.insert(b).second) << "rank " << b << " twice in a round, n=" << n;
            EXPECT_TRUE(seen.insert({a, b}).second) << "pair " << a << "-" << b << " twice";
            if (a >= 0 && b < n && a < b) {
                partners[static_cast<std::size_t>(a)].insert(b);
                partners[static_cast<std::size_t>(b)].insert(a);
            }
        }
    }
    return partners;
}

PairChoice pairs(const char* text) {
    auto choice = parse_pairs(text);
    EXPECT_TRUE(choice) << text;
    return choice.value_or(PairChoice{});
}

}  // namespace

TEST(MeshPairs, ParsesEachFormAndRefusesTheRest) {
    EXPECT_EQ(to_string(pairs("all")), "all");
    EXPECT_EQ(to_string(pairs("rail")), "rail");
    EXPECT_EQ(pairs("sample:3").kind, PairChoice::Kind::kSample);
    EXPECT_EQ(pairs("sample:3").k, 3);
    EXPECT_EQ(to_string(pairs("ring:2")), "ring:2");
    for (const char* bad : {"", "All", "sample", "sample:", "sample:0", "sample:-1", "sample:2x",
                            "ring:", "ring:0", "rail:2", "sample: 2", "sample:99999999999"})
        EXPECT_FALSE(parse_pairs(bad)) << "'" << bad << "'";
}

TEST(MeshPairs, AllIsTheTournament) {
    EXPECT_EQ(plan_rounds(6, pairs("all"), 1), round_robin(6));
}

TEST(MeshPairs, SampleGivesEveryRankKPartnersInKRounds) {
    for (int n : {4, 5, 8, 9, 64, 65, 512}) {
        for (int k : {1, 2, 3, 5}) {
            const auto rounds = plan_rounds(n, pairs(("sample:" + std::to_string(k)).c_str()), 7);
            const int max_rounds = n % 2 == 0 ? n - 1 : n;
            const int expected_rounds = std::min(max_rounds, k + n % 2);
            EXPECT_EQ(static_cast<int>(rounds.size()), expected_rounds) << "n=" << n << " k=" << k;
            const auto partners = check_plan(n, rounds);
            for (int r = 0; r < n; ++r) {
                const int got = static_cast<int>(partners[static_cast<std::size_t>(r)].size());
                EXPECT_GE(got, std::min(k, n - 1)) << "rank " << r << " n=" << n << " k=" << k;
                EXPECT_LE(got, k + 1) << "rank " << r << " n=" << n << " k=" << k;
            }
        }
    }
}

TEST(MeshPairs, SampleIsFixedByItsSeedAndMovesWithIt) {
    const PairChoice choice = pairs("sample:2");
    EXPECT_EQ(plan_rounds(64, choice, 42), plan_rounds(64, choice, 42));
    EXPECT_NE(plan_rounds(64, choice, 42), plan_rounds(64, choice, 43));
    // Not the first rounds of the plain tournament: the ranks are in a random order.
    const auto plain = round_robin(64);
    const auto sampled = plan_rounds(64, choice, 42);
    EXPECT_NE(sampled[0], plain[0]);
    // Over many seeds every pair turns up: the sample is not stuck on a few partners.
    std::set<std::pair<int, int>> seen;
    for (std::uint64_t seed = 1; seed <= 200; ++seed)
        for (const Round& round : plan_rounds(8, pairs("sample:1"), seed))
            for (const auto& pair : round) seen.insert(pair);
    EXPECT_EQ(seen.size(), 28u);
}

TEST(MeshPairs, SampleOfAtLeastNMinusOneIsEveryPair) {
    const auto partners = check_plan(6, plan_rounds(6, pairs("sample:9"), 3));
    for (const auto& p : partners) EXPECT_EQ(p.size(), 5u);
}

TEST(MeshPairs, RingPairsNeighboursWithinK) {
    for (int n : {3, 4, 7, 8, 64}) {
        for (int k : {1, 2}) {
            const auto rounds = plan_rounds(n, pairs(("ring:" + std::to_string(k)).c_str()), 1);
            const auto partners = check_plan(n, rounds);
            for (int r = 0; r < n; ++r) {
                std::set<int> expected;
                for (int d = 1; d <= k; ++d) {
                    expected.insert((r + d) % n);
                    expected.insert((r - d + n) % n);
                }
                expected.erase(r);
                EXPECT_EQ(partners[static_cast<std::size_t>(r)], expected)
                    << "rank " << r << " n=" << n << " k=" << k;
            }
            // Greedy packing: at most 2·degree − 1 rounds (degree 2k).
            EXPECT_LE(static_cast<int>(rounds.size()), 4 * k - 1) << "n=" << n << " k=" << k;
        }
    }
    EXPECT_EQ(plan_rounds(64, pairs("ring:1"), 1).size(), 2u);  // even ring: two rounds
}

TEST(MeshPairs, RailPairsOnlyTheSameLocalRank) {
    // 4 hosts × 2 NICs, ranks placed by slot: rank = host·2 + local rank.
    std::vector<int> rail_of;
    for (int host = 0; host < 4; ++host)
        for (int local = 0; local < 2; ++local) rail_of.push_back(local);
    const auto rounds = plan_rounds(8, pairs("rail"), 1, rail_of);
    EXPECT_EQ(rounds.size(), 3u);  // each rail: 4 ranks, 3 rounds, both rails at once
    const auto partners = check_plan(8, rounds);
    for (int r = 0; r < 8; ++r) {
        EXPECT_EQ(partners[static_cast<std::size_t>(r)].size(), 3u);
        for (int p : partners[static_cast<std::size_t>(r)]) EXPECT_EQ(p % 2, r % 2);
    }
}

TEST(MeshPairs, SerialPlansTakeEachPairOfTheRoundsInARoundOfItsOwn) {
    const auto rounds = round_robin(4);
    const auto all = pairs_of(rounds);
    ASSERT_EQ(all.size(), 6u);
    EXPECT_EQ(all.front(), rounds.front().front());
    EXPECT_EQ(all.back(), rounds.back().back());
    const auto serial = one_pair_per_round(rounds);
    ASSERT_EQ(serial.size(), all.size());
    for (std::size_t i = 0; i < serial.size(); ++i) EXPECT_EQ(serial[i], Round{all[i]});
    EXPECT_TRUE(pairs_of({}).empty());
    EXPECT_TRUE(one_pair_per_round(round_robin(1)).empty());
}

TEST(MeshPairs, PackRoundsNeverDoublesARank) {
    std::vector<std::pair<int, int>> star{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {2, 3}};
    const auto rounds = pack_rounds(star);
    const auto partners = check_plan(4, rounds);
    EXPECT_EQ(partners[0].size(), 3u);
    EXPECT_EQ(rounds.size(), 3u);
}

namespace {

// A bandwidth matrix with every cell `good` but the pairs of `bad_rank` (both directions).
Metric bandwidth(int n, double good, int bad_rank, double bad) {
    Metric m{"bw_gbps", "bandwidth (Gb/s)", true, empty_matrix(n)};
    for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b)
            if (a != b) m.values[a][b] = (a == bad_rank || b == bad_rank) ? bad : good;
    return m;
}

}  // namespace

TEST(MeshVerdict, AllEqualFlagsNothing) {
    auto v = judge(4, {bandwidth(4, 10, -1, 0)}, {}, {});
    EXPECT_FALSE(v.flagged());
    EXPECT_TRUE(v.culprits.empty());
    EXPECT_DOUBLE_EQ(v.metrics[0].typical, 10);
    EXPECT_DOUBLE_EQ(v.metrics[0].threshold, 8);
}

TEST(MeshVerdict, OneBadHostOfFourIsNamed) {
    // Half of the 12 cells involve rank 3: the plain median falls between good and bad, the
    // typical value (median of per-rank medians) stays at the good value.
    auto v = judge(4, {bandwidth(4, 10, 3, 2)}, {}, {});
    EXPECT_DOUBLE_EQ(v.metrics[0].median, 6);
    EXPECT_DOUBLE_EQ(v.metrics[0].typical, 10);
    ASSERT_EQ(v.slow.size(), 3u);
    for (const FlaggedPair& p : v.slow) EXPECT_EQ(p.b, 3);
    ASSERT_EQ(v.culprits.size(), 1u);
    EXPECT_EQ(v.culprits[0].rank, 3);
    EXPECT_EQ(v.culprits[0].pairs, 3);
    auto lines = summary_lines(v, {bandwidth(4, 10, 3, 2)}, {"h0", "h1", "h2", "h3"});
    bool named = false;
    for (const auto& line : lines)
        named = named || line.find("host h3 (rank 3): all 3 of its pairs") != std::string::npos;
    EXPECT_TRUE(named);
}

TEST(MeshVerdict, OneBadHostOfThreeIsNamed) {
    auto v = judge(3, {bandwidth(3, 10, 2, 3)}, {}, {});
    ASSERT_EQ(v.slow.size(), 2u);
    ASSERT_EQ(v.culprits.size(), 1u);
    EXPECT_EQ(v.culprits[0].rank, 2);
}

TEST(MeshVerdict, OneSlowDirectionFlagsThePairOnly) {
    Metric m = bandwidth(4, 10, -1, 0);
    m.values[1][2] = 5;
    auto v = judge(4, {m}, {}, {});
    ASSERT_EQ(v.slow.size(), 1u);
    EXPECT_EQ(v.slow[0].a, 1);
    EXPECT_EQ(v.slow[0].b, 2);
    EXPECT_TRUE(v.culprits.empty());  // ranks 1 and 2 each have good pairs too
}

TEST(MeshVerdict, JustAboveTheFractionIsNotFlagged) {
    Metric m = bandwidth(4, 10, -1, 0);
    m.values[0][1] = 8.01;
    EXPECT_FALSE(judge(4, {m}, {}, {}).flagged());
    m.values[0][1] = 7.99;
    EXPECT_TRUE(judge(4, {m}, {}, {}).flagged());
}

TEST(MeshVerdict, LatencyAboveFactorIsFlagged) {
    Metric lat{"lat_us", "latency (µs)", false, empty_matrix(4)};
    for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b)
            if (a != b) lat.values[a][b] = (a == 0 || b == 0) ? 40 : 10;
    auto v = judge(4, {lat}, {}, {});
    EXPECT_DOUBLE_EQ(v.metrics[0].typical, 10);
    EXPECT_DOUBLE_EQ(v.metrics[0].threshold, 15);
    ASSERT_EQ(v.culprits.size(), 1u);
    EXPECT_EQ(v.culprits[0].rank, 0);
}

TEST(MeshVerdict, FailedPairsCountTowardsTheCulprit) {
    Metric m = bandwidth(4, 10, -1, 0);
    for (int p = 0; p < 3; ++p) m.values[p][3] = m.values[3][p] = std::nullopt;
    auto v = judge(4, {m}, {{0, 3, "no answer"}, {1, 3, "no answer"}, {2, 3, "no answer"}}, {});
    EXPECT_TRUE(v.flagged());
    EXPECT_TRUE(v.slow.empty());
    ASSERT_EQ(v.culprits.size(), 1u);
    EXPECT_EQ(v.culprits[0].rank, 3);
}

TEST(MeshVerdict, ASilentRankIsNamedThoughTheOthersPairIsNoisy) {
    // Three ranks, rank 2 never answers, and the one pair left (0-1) happens to be slow: the
    // failures explain rank 2's pairs; rank 0 and rank 1 each keep one pair, too few to judge.
    Metric m = bandwidth(3, 10, -1, 0);
    m.values[0][2] = m.values[2][0] = m.values[1][2] = m.values[2][1] = std::nullopt;
    m.values[0][1] = 1;
    auto v = judge(3, {m}, {{0, 2, "rank 2 never answered"}, {1, 2, "rank 2 never answered"}}, {});
    ASSERT_EQ(v.slow.size(), 1u);  // the noisy pair is still reported
    EXPECT_EQ(v.slow[0].a, 0);
    ASSERT_EQ(v.culprits.size(), 1u);
    EXPECT_EQ(v.culprits[0].rank, 2);
    EXPECT_EQ(v.culprits[0].pairs, 2);
}

TEST(MeshVerdict, ASampledPlanJudgesARankByItsPlannedPairs) {
    // Eight ranks, a ring of one neighbour each side: rank 5's two pairs (4-5, 5-6) are slow
    // and the pairs left out of the plan were never measured. Judged over all pairs, rank 5
    // would have 7 pairs, 5 of them unmeasured, and go unnamed.
    const int n = 8;
    const auto rounds = plan_rounds(n, *parse_pairs("ring:1"), 1);
    std::vector<std::pair<int, int>> planned;
    for (const Round& round : rounds) planned.insert(planned.end(), round.begin(), round.end());
    Metric m{"bw_gbps", "bandwidth (Gb/s)", true, empty_matrix(n)};
    for (const auto& [a, b] : planned) {
        const double v = (a == 5 || b == 5) ? 2 : 10;
        m.values[a][b] = m.values[b][a] = v;
    }
    auto v = judge(n, {m}, {}, {}, planned);
    ASSERT_EQ(v.culprits.size(), 1u);
    EXPECT_EQ(v.culprits[0].rank, 5);
    EXPECT_EQ(v.culprits[0].pairs, 2);
    EXPECT_EQ(v.slow.size(), 2u);
    EXPECT_TRUE(judge(n, {m}, {}, {}).culprits.empty());  // the whole-matrix view cannot tell
    // A rank whose planned pairs all failed is named too.
    Metric quiet = m;
    for (const auto& [a, b] : planned)
        if (a == 5 || b == 5) quiet.values[a][b] = quiet.values[b][a] = std::nullopt;
    auto s = judge(n, {quiet}, {{4, 5, "no answer"}, {5, 6, "no answer"}}, {}, planned);
    ASSERT_EQ(s.culprits.size(), 1u);
    EXPECT_EQ(s.culprits[0].rank, 5);
}

TEST(MeshVerdict, NoCulpritWhenEverythingIsBadOrTwoRanks) {
    auto two = judge(2, {bandwidth(2, 10, -1, 0)}, {{0, 1, "no device"}}, {});
    EXPECT_TRUE(two.flagged());
    EXPECT_TRUE(two.culprits.empty());  // one pair cannot say which end is at fault
    std::vector<FailedPair> all;
    for (int a = 0; a < 4; ++a)
        for (int b = a + 1; b < 4; ++b) all.push_back({a, b, "down"});
    EXPECT_TRUE(judge(4, {}, all, {}).culprits.empty());
}

TEST(MeshVerdict, MiddleAveragesTheTwoMiddleValues) {
    EXPECT_DOUBLE_EQ(middle({}), 0);
    EXPECT_DOUBLE_EQ(middle({3, 1, 2}), 2);
    EXPECT_DOUBLE_EQ(middle({4, 1, 3, 2}), 2.5);
}

namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
    return [vars](const std::string& name) -> std::optional<std::string> {
        auto it = vars.find(name);
        if (it == vars.end()) return std::nullopt;
        return it->second;
    };
}

}  // namespace

TEST(MeshLaunch, OpenMpi) {
    auto info = read_launch_info(
        env_of({{"OMPI_COMM_WORLD_LOCAL_RANK", "2"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}));
    EXPECT_EQ(info.launcher, "openmpi");
    EXPECT_EQ(info.local_rank, 2);
    EXPECT_EQ(info.local_size, 4);
}

TEST(MeshLaunch, SlurmSrun) {
    // What srun -N 2 --ntasks-per-node=4 --mpi=pmix sets for the second task on node gpu07.
    auto info = read_launch_info(env_of({{"SLURM_PROCID", "5"},
                                         {"SLURM_LOCALID", "1"},
                                         {"SLURM_NTASKS_PER_NODE", "4"},
                                         {"SLURMD_NODENAME", "gpu07"},
                                         {"PMIX_RANK", "5"}}));
    EXPECT_EQ(info.launcher, "slurm");
    EXPECT_EQ(info.local_rank, 1);
    EXPECT_EQ(info.local_size, 4);
    EXPECT_EQ(info.node, "gpu07");
}

TEST(MeshLaunch, MpirunInsideASlurmAllocationPrefersOpenMpi) {
    auto info = read_launch_info(env_of({{"SLURM_LOCALID", "0"},
                                         {"SLURMD_NODENAME", "gpu07"},
                                         {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
                                         {"OMPI_COMM_WORLD_LOCAL_SIZE", "8"}}));
    EXPECT_EQ(info.launcher, "openmpi");
    EXPECT_EQ(info.local_rank, 3);
    EXPECT_EQ(info.node, "gpu07");
}

TEST(MeshLaunch, PmixAndNothing) {
    auto pmix = read_launch_info(env_of({{"PMIX_LOCAL_RANK", "1"}, {"PMIX_LOCAL_SIZE", "2"}}));
    EXPECT_EQ(pmix.launcher, "pmix");
    EXPECT_EQ(pmix.local_rank, 1);
    auto none = read_launch_info(env_of({}));
    EXPECT_EQ(none.launcher, "unknown");
    EXPECT_EQ(none.local_rank, 0);
    EXPECT_EQ(none.local_size, 1);
}

TEST(MeshLaunch, GarbageIsIgnored) {
    auto info = read_launch_info(env_of({{"OMPI_COMM_WORLD_LOCAL_RANK", "-1"},
                                         {"SLURM_LOCALID", "x"},
                                         {"PMIX_LOCAL_RANK", "99999999999"}}));
    EXPECT_EQ(info.launcher, "unknown");
    auto short_size = read_launch_info(env_of({{"SLURM_LOCALID", "3"}}));
    EXPECT_EQ(short_size.local_rank, 3);
    EXPECT_EQ(short_size.local_size, 4);  // never less than the rank implies
}

TEST(MeshLaunch, EachLocalRankTakesItsEntryOfTheDeviceList) {
    EXPECT_EQ(device_for_local_rank("mlx5_0", 3), "mlx5_0");
    EXPECT_EQ(device_for_local_rank("", 1), "");  // the first device, whichever it is
    EXPECT_EQ(device_for_local_rank("mlx5_0,mlx5_1", 0), "mlx5_0");
    EXPECT_EQ(device_for_local_rank("mlx5_0,mlx5_1", 1), "mlx5_1");
    EXPECT_EQ(device_for_local_rank("mlx5_0,mlx5_1", 2), "mlx5_0");  // fewer NICs: round again
    EXPECT_EQ(device_for_local_rank("a,,b", 1), "");
}

TEST(MeshHeatmap, DrawsEveryCellAndMarksFlaggedOnes) {
    Metric m = bandwidth(3, 10, 2, 2);
    Heatmap h{.title = "t <&>",
              .caption = "a\nb",
              .labels = {"0 a", "1 b", "2 c"},
              .metric = &m,
              .typical = 10,
              .threshold = 8,
              .failed = {},
              .planned = {}};
    const std::string svg = render_heatmap(h);
    EXPECT_EQ(svg.rfind("<svg", 0), 0u);
    EXPECT_NE(svg.find("t &lt;&amp;&gt;"), std::string::npos);
    std::size_t rects = 0, thick = 0;
    for (std::size_t at = 0; (at = svg.find("<rect x=", at)) != std::string::npos; ++at) ++rects;
    for (std::size_t at = 0; (at = svg.find("stroke-width=\"3\"", at)) != std::string::npos; ++at)
        ++thick;
    EXPECT_EQ(rects, 9u);
    EXPECT_EQ(thick, 4u);  // 0→2, 2→0, 1→2, 2→1
    EXPECT_EQ(svg.find(">failed<"), std::string::npos);
}

TEST(MeshHeatmap, PairsLeftOutOfThePlanAreNotFailed) {
    Metric m{"bw_gbps", "bandwidth (Gb/s)", true, empty_matrix(4)};
    const std::vector<std::pair<int, int>> ring{{0, 1}, {1, 2}, {2, 3}, {0, 3}};
    for (const auto& [a, b] : ring) m.values[a][b] = m.values[b][a] = 10;
    Heatmap h{.title = "ring",
              .caption = "",
              .labels = {"0", "1", "2", "3"},
              .metric = &m,
              .typical = 10,
              .threshold = 8,
              .failed = {},
              .planned = ring};
    const std::string svg = render_heatmap(h);
    EXPECT_EQ(svg.find(">failed<"), std::string::npos);  // 0-2 and 1-3 were never planned
    std::size_t pale = 0;
    for (std::size_t at = 0; (at = svg.find("fill=\"#f4f4f4\"", at)) != std::string::npos; ++at)
        ++pale;
    EXPECT_EQ(pale, 8u);  // the diagonal's 4 and the 4 cells of 0-2 and 1-3
    h.planned = {};       // every pair planned: the empty cells are failed
    EXPECT_NE(render_heatmap(h).find(">failed<"), std::string::npos);
}
