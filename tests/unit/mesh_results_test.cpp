// rdma-mesh's results (mesh/include/rdmalab/mesh/results.hpp): identities, what a measurement
// gives its cell, the rows ranks send rank 0, and what rank 0 makes of them (matrices, failed
// pairs, summary, mesh.json's parts, mesh.csv).
#include "rdmalab/bench/stats.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/mesh/results.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

// In the namespace, not with a using-directive: one would reach the test files after this one
// in its unity batch (tests/CMakeLists.txt).
namespace rdmalab::mesh {
namespace {

Identity mesh_results_rank(int rank, const std::string& address) {
    Identity i;
    i.rank = rank;
    i.host = "node" + std::to_string(rank);
    i.address = address;
    i.device = "rxe0";
    i.provider = "rxe";
    i.gid = "::ffff:" + address;
    i.local_rank = rank % 2;
    i.node = "n" + std::to_string(rank);
    i.launcher = "openmpi";
    return i;
}

// The keys of a record, in its order.
std::vector<std::string> mesh_results_keys(const bench::Record& record) {
    std::vector<std::string> keys;
    for (const auto& [key, value] : record.items()) keys.push_back(key);
    return keys;
}

// Three ranks' rows: rank 0 measured 1 and 2, rank 1 measured 0 (rate only) and failed with 2,
// rank 2 failed with 1 too and named itself and a rank that does not exist. Each goes through
// the message a rank sends rank 0 and back, as in the tool.
std::vector<records::MeshRow> mesh_results_rows() {
    const auto sent = [](const records::MeshRow& row) {
        return records::mesh_row_from_json(records::to_json(row), "a row");
    };
    return {
        sent(row_record(0, {Cell{1, {.bw_gbps = 9.5, .lat_us = 3.0}}, Cell{2, {.bw_gbps = 1.25}}},
                        {}, {{1, 1.5}, {2, 2.5}})),
        sent(row_record(1, {Cell{0, {.rate_mops = 0.5}}}, {Failure{2, "bw: timed out"}},
                        {{0, 1.4}})),
        sent(row_record(2, {Cell{2, {.bw_gbps = 7.0}}, Cell{5, {.bw_gbps = 7.0}}},
                        {Failure{1, "bw: no answer"}}, {}))};
}

}  // namespace

TEST(MeshResults, AnIdentityRoundTripsThroughItsRecord) {
    Identity me = mesh_results_rank(3, "198.51.100.4");
    me.problem = "no usable RDMA device";
    const Identity back = records::mesh_rank_from_json(records::to_json(me), "identity");
    EXPECT_EQ(back, me);
    EXPECT_EQ(back.problem, "no usable RDMA device");
    EXPECT_EQ(mesh_results_keys(records::to_json(me)),
              (std::vector<std::string>{"rank", "host", "address", "device", "provider", "gid",
                                        "local_rank", "node", "launcher", "problem"}));
    EXPECT_EQ(me.label(), "node3 198.51.100.4");
    EXPECT_EQ(mesh_results_rank(1, "").label(), "node1");  // no RDMA address: the host alone
    EXPECT_THROW(records::mesh_rank_from_json(bench::Record{{"rank", 1}}, "identity"), Error);
}

TEST(MeshResults, LatencyIsHalfTheRoundTripButARead) {
    records::MeshCellValues write, read;
    add_latency(write, bench::Op::kWrite, {4000, 2000, 6000});
    add_latency(read, bench::Op::kRead, {4000, 2000, 6000});
    const auto half = bench::summarize_latency({2000, 1000, 3000});
    const auto whole = bench::summarize_latency({4000, 2000, 6000});
    EXPECT_EQ(write,
              (records::MeshCellValues{.lat_us = half.median_us, .lat_p99_us = half.p99_us}));
    EXPECT_EQ(read,
              (records::MeshCellValues{.lat_us = whole.median_us, .lat_p99_us = whole.p99_us}));
    EXPECT_EQ(write.lat_us, 2.0);
}

TEST(MeshResults, ThroughputIsBandwidthForBwAndRateOtherwise) {
    records::MeshCellValues values;
    add_throughput(values, "bw", 1000, 65536, 0.5);
    add_throughput(values, "rate", 1000, 64, 0.5);
    EXPECT_DOUBLE_EQ(*values.bw_gbps, 1000.0 * 65536 * 8 / 0.5 / 1e9);
    EXPECT_DOUBLE_EQ(*values.rate_mops, 0.002);
    EXPECT_EQ(values.of("rate_mops"), values.rate_mops);
    EXPECT_EQ(values.of("lat_us"), std::nullopt);
    records::MeshCellValues none;
    add_throughput(none, "bw", 10, 64, 0);
    EXPECT_EQ(none.bw_gbps, 0.0);  // no time passed: nothing measured
}

// The row message: written and read through its type; a misspelt field refused by name.
TEST(MeshResults, ARowMessageRoundTripsAndAMisspeltFieldIsRefused) {
    const records::MeshRow row = row_record(1, {Cell{0, {.rate_mops = 0.5, .lat_p99_us = 9}}},
                                            {Failure{2, "bw: timed out"}}, {{0, 1.4}});
    const records::Json json = records::to_json(row);
    EXPECT_EQ(json["cells"][0]["values"], (records::Json{{"rate_mops", 0.5}, {"lat_p99_us", 9.0}}));
    EXPECT_EQ(records::mesh_row_from_json(json, "row"), row);
    records::Json odd = json;
    odd["cells"][0]["values"]["bw_gpbs"] = 1.0;
    try {
        records::mesh_row_from_json(odd, "rank 1's results");
        FAIL() << "a row outside its schema was read";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "rank 1's results: cells[0].values.bw_gpbs: not in the schema");
    }
}
TEST(MeshResults, RowsGatherIntoMatricesFailedPairsAndPairTimes) {
    const Gathered g =
        gather_rows(3, mesh_results_rows(), {FailedPair{1, 2, "rank 2 sent no results"}});
    ASSERT_EQ(g.metrics.size(), std::size(kMetrics));
    for (std::size_t k = 0; k < g.metrics.size(); ++k) {
        EXPECT_EQ(g.metrics[k].key, kMetrics[k].key);
        EXPECT_EQ(g.metrics[k].values.size(), 3u);
    }
    const Matrix& bw = g.metrics[0].values;
    EXPECT_EQ(bw[0][1], 9.5);
    EXPECT_EQ(bw[0][2], 1.25);
    EXPECT_EQ(bw[1][0], std::nullopt);
    EXPECT_EQ(bw[2][2], std::nullopt);  // a rank's cell to itself is left out
    EXPECT_EQ(g.metrics[1].values[1][0], 0.5);
    EXPECT_EQ(g.metrics[2].values[0][1], 3.0);
    // Pair 1–2, reported lost and by both ends: the first report, the lost one, is kept.
    ASSERT_EQ(g.failed.size(), 1u);
    EXPECT_EQ(g.failed[0].reason, "rank 2 sent no results");
    const Gathered seen = gather_rows(3, mesh_results_rows(), {});
    ASSERT_EQ(seen.failed.size(), 1u);
    EXPECT_EQ(seen.failed[0].a, 1);
    EXPECT_EQ(seen.failed[0].b, 2);
    EXPECT_EQ(seen.failed[0].reason, "seen by rank 1: bw: timed out");
    // Each pair's time as its lower rank measured it.
    EXPECT_EQ(g.pair_seconds, (std::vector<records::MeshPairTime>{{0, 1, 1.5}, {0, 2, 2.5}}));
    // A row from a rank outside the run is left out.
    EXPECT_EQ(gather_rows(2, mesh_results_rows(), {}).metrics[0].values[0][1], 9.5);
    EXPECT_NO_THROW(gather_rows(2, {row_record(7, {Cell{0, {.bw_gbps = 1.0}}}, {}, {})}, {}));
}

TEST(MeshResults, ARankThatSentNoResultsLosesEachPairItWasToMeet) {
    const auto all = lost_pairs(round_robin(4), 4, 2, "rank 2 sent no results");
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[0].a, 0);
    EXPECT_EQ(all[0].b, 2);
    EXPECT_EQ(all[1].a, 1);
    EXPECT_EQ(all[2].a, 2);
    EXPECT_EQ(all[2].b, 3);
    EXPECT_EQ(all[2].reason, "rank 2 sent no results");
    const std::vector<Round> one_round = {{{0, 1}, {2, 3}}};
    const auto planned = lost_pairs(one_round, 4, 2, "gone");
    ASSERT_EQ(planned.size(), 1u);
    EXPECT_EQ(planned[0].b, 3);
}

TEST(MeshResults, JudgeNamesMetricsInAList) {
    EXPECT_TRUE(is_judge_list("bw,rate,lat,lat-p99"));
    EXPECT_TRUE(is_judge_list("lat"));
    for (const char* bad : {"", "bw,", "bw,speed", "latency", "bw rate"})
        EXPECT_FALSE(is_judge_list(bad)) << bad;
    EXPECT_TRUE(judges("bw,lat-p99", "bw_gbps"));
    EXPECT_TRUE(judges("bw,lat-p99", "lat_p99_us"));
    EXPECT_FALSE(judges("bw,lat-p99", "lat_us"));
    EXPECT_FALSE(judges("bw", "rate_mops"));
}

TEST(MeshResults, TheSummaryIsEveryMetricsTypicalValueThenTheVerdictOnTheJudged) {
    const Gathered g = gather_rows(3, mesh_results_rows(), {});
    const Verdict stats = judge(3, g.metrics, {}, {});
    const std::vector<Metric> judged = {g.metrics[0]};
    const Verdict verdict = judge(3, judged, g.failed, {});
    const std::vector<std::string> hosts = {"a", "b", "c"};
    const auto lines = report_lines(stats, g.metrics, verdict, judged, hosts);
    const auto all = summary_lines(stats, g.metrics, hosts);
    const auto judged_lines = summary_lines(verdict, judged, hosts);
    std::vector<std::string> expected(all.begin(), all.begin() + 4);  // the typical values
    expected.insert(expected.end(), judged_lines.begin() + 1, judged_lines.end());
    EXPECT_EQ(lines, expected);
    EXPECT_NE(std::find(lines.begin(), lines.end(),
                        "failed pair 1–2 (b – c): seen by rank 1: bw: timed out"),
              lines.end());
    EXPECT_EQ(lines.back().rfind("verdict: ", 0), 0u);
}

TEST(MeshResults, MeshJsonPartsSayEachMetricAndEachFlaggedPair) {
    const Gathered g = gather_rows(3, mesh_results_rows(), {});
    const Verdict stats = judge(3, g.metrics, {}, {});
    const std::vector<records::MeshMetric> matrices = matrices_record(g.metrics, stats, "bw");
    ASSERT_EQ(matrices.size(), records::kMeshMetricKeys.size());
    for (std::size_t k = 0; k < matrices.size(); ++k)  // mesh.json's order is kMetrics'
        EXPECT_EQ(matrices[k].key, records::kMeshMetricKeys[k]);
    const records::MeshMetric& bw = matrices[0];
    EXPECT_EQ(bw.label, "bandwidth (Gb/s)");
    EXPECT_TRUE(bw.judged);
    EXPECT_FALSE(matrices[1].judged);
    EXPECT_EQ(bw.matrix[0], (std::vector<std::optional<double>>{std::nullopt, 9.5, 1.25}));
    EXPECT_EQ(bw.median, stats.metrics[0].median);

    EXPECT_EQ(failed_record({FailedPair{0, 2, "why"}}),
              (std::vector<records::MeshFailedPair>{{0, 2, "why"}}));
    EXPECT_EQ(slow_record({FlaggedPair{1, 2, {"bw_gbps 1→2: low"}}}),
              (std::vector<records::MeshSlowPair>{{1, 2, {"bw_gbps 1→2: low"}}}));
    const std::vector<Identity> who = {mesh_results_rank(0, "198.51.100.1"),
                                       mesh_results_rank(1, "")};
    EXPECT_EQ(culprits_record({Culprit{1, 3}}, who),
              (std::vector<records::MeshCulprit>{{1, "node1", 3}}));
}

TEST(MeshResults, MeshCsvHasARowPerDirectedPair) {
    const std::vector<Identity> who = {mesh_results_rank(0, "198.51.100.1"),
                                       mesh_results_rank(1, "198.51.100.2")};
    std::vector<Metric> metrics = gather_rows(2, mesh_results_rows(), {}).metrics;
    metrics[1].values[0][1] = 1.0 / 3;
    const std::string csv = csv_text(who, metrics, "2026-11-28T00:00:00Z", "6.1", "rdma-mesh 0.1");
    EXPECT_EQ(csv,
              "from,from_host,from_device,from_gid,to,to_host,to_device,to_gid,bw_gbps,rate_mops,"
              "lat_us,lat_p99_us,date,kernel,tool\n"
              "0,node0 198.51.100.1,rxe0,::ffff:198.51.100.1,1,node1 198.51.100.2,rxe0,"
              "::ffff:198.51.100.2,9.5,0.333333,3,,2026-11-28T00:00:00Z,6.1,rdma-mesh 0.1\n"
              "1,node1 198.51.100.2,rxe0,::ffff:198.51.100.2,0,node0 198.51.100.1,rxe0,"
              "::ffff:198.51.100.1,,0.5,,,2026-11-28T00:00:00Z,6.1,rdma-mesh 0.1\n");
}

}  // namespace rdmalab::mesh
