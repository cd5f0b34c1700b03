// Unit tests for the allreduce record (records/allreduce.hpp): the report's measures in the typed
// record, its JSON checked against the schema and read back equal, the recorded sweeps in
// bench/results/collectives still read, and the schema file equal to the schema.
#include "rdmalab/records/allreduce.hpp"

#include "rdmalab/error.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

// Inside the namespace: the unit tests build in unity batches, where another file's using-
// directive (rdmalab::bench has a to_json and a host_environment too) would make a name ambiguous.
namespace rdmalab::records {

namespace {

// 1 MB over 4 ranks; the median of 3 runs is 10 ms: algbw 100 MB/s, busbw × 2·3/4 = 150.
const AllreduceRuns kFourRanks{.bytes = 1'000'000,
                               .ranks = 4,
                               .times_ms = {30, 10, 5},
                               .step_done_ms = {1, 3, 3.5},
                               .bytes_sent = 1'500'000,
                               .right = 2};

const Environment kAllreduceHost{.host = "h1",
                                 .kernel = "6.1",
                                 .date = "2026-11-29T00:00:00Z",
                                 .tool_version = "ring-allreduce 2"};

std::string allreduce_text_of(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

TEST(AllreduceRecord, HoldsTheReportsMeasuresAndHowTheRankRan) {
    const AllreduceRecord r =
        allreduce_record(kFourRanks, {.rank = 1, .segment = 65536, .slots = 4}, kAllreduceHost);
    EXPECT_EQ(r.tool, "ring-allreduce 2");
    EXPECT_EQ(r.config, (AllreduceConfig{.algorithm = "ring",
                                         .ranks = 4,
                                         .rank = 1,
                                         .bytes = 1'000'000,
                                         .segment = 65536,
                                         .slots = 4,
                                         .iterations = 3}));
    EXPECT_DOUBLE_EQ(r.result.median_ms, 10);
    EXPECT_DOUBLE_EQ(r.result.algbw_mb_s, 100);
    EXPECT_DOUBLE_EQ(r.result.busbw_mb_s, 150);
    // The spread: the slowest allreduce (30 ms) and the fastest (5 ms).
    EXPECT_DOUBLE_EQ(r.result.busbw_min_mb_s, 50);
    EXPECT_DOUBLE_EQ(r.result.busbw_max_mb_s, 300);
    EXPECT_DOUBLE_EQ(r.result.link_share, 1.5);
    EXPECT_EQ(r.result.bytes_sent, 1'500'000U);
    EXPECT_EQ(r.result.right_rank, 2);
    EXPECT_EQ(r.result.times_ms.size(), 3U);
    ASSERT_EQ(r.result.step_ms.size(), 3U);
    EXPECT_DOUBLE_EQ(r.result.step_ms[1], 2);
    EXPECT_EQ(r.environment.host, "h1");
}

TEST(AllreduceRecord, AnAlgorithmWithoutARightNeighbourSaysSo) {
    AllreduceRuns runs = kFourRanks;
    runs.right.reset();
    const AllreduceRecord r = allreduce_record(
        runs, {.rank = 0, .algorithm = "recursive doubling", .tool = "recursive-doubling 1"},
        kAllreduceHost);
    EXPECT_EQ(r.config.algorithm, "recursive doubling");
    EXPECT_TRUE(to_json(r)["result"]["right_rank"].is_null());
    // busbw is nccl-tests' measure for any algorithm: algbw × 2(n-1)/n.
    EXPECT_DOUBLE_EQ(r.result.busbw_mb_s, 150);
}

TEST(AllreduceRecord, ItsJsonKeepsTheSchemaAndReadsBackEqual) {
    for (const std::optional<int> right : {std::optional<int>(2), std::optional<int>()}) {
        AllreduceRuns runs = kFourRanks;
        runs.right = right;
        Environment environment = kAllreduceHost;
        environment.mpi = "Open MPI v4.1.4";
        const AllreduceRecord record = allreduce_record(runs, {.rank = 1}, environment);
        const Json json = to_json(record);
        EXPECT_EQ(schema_problems(json, kAllreduceSchema), std::vector<std::string>{});
        EXPECT_EQ(allreduce_from_json(json, "here"), record);
        EXPECT_TRUE(is_allreduce_record(json));
    }
}

TEST(AllreduceRecord, AFieldOutsideTheSchemaOrOfTheWrongTypeIsRefusedByName) {
    Json json = to_json(allreduce_record(kFourRanks, {}, kAllreduceHost));
    Json misspelt = json;
    misspelt["result"]["busbw_mb"] = 1;
    EXPECT_EQ(schema_problems(misspelt, kAllreduceSchema),
              std::vector<std::string>{"result.busbw_mb: not in the schema"});
    Json wrong = json;
    wrong["config"]["ranks"] = "four";
    EXPECT_EQ(schema_problems(wrong, kAllreduceSchema),
              std::vector<std::string>{"config.ranks: a string, not integer"});
    Json missing = json;
    missing["environment"].erase("kernel");
    try {
        allreduce_from_json(missing, "r.json record 0");
        ADD_FAILURE() << "read a record without environment.kernel";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "r.json record 0: environment.kernel: missing");
    }
}

TEST(AllreduceRecord, TheFileIsWhatTheReaderOfRecordsReads) {
    const std::string path =
        ::testing::TempDir() + "allreduce_record_test_" + std::to_string(::getpid()) + ".json";
    write_allreduce_records(path, kFourRanks, {.rank = 0, .segment = 4096, .slots = 2});
    const auto records = read_json_file(path);
    std::remove(path.c_str());
    ASSERT_EQ(records.size(), 1U);
    const AllreduceRecord r = allreduce_from_json(records[0], path);
    EXPECT_EQ(r.tool, "ring-allreduce 2");
    EXPECT_FALSE(r.environment.kernel.empty());
    EXPECT_DOUBLE_EQ(r.result.busbw_mb_s, 150);
}

// Every allreduce record recorded in the tree reads through the type, and writes back the same
// JSON: the type holds every field they have.
TEST(AllreduceRecord, TheRecordedSweepsStillRead) {
    const std::filesystem::path sweep =
        std::filesystem::path(RDMALAB_SOURCE_DIR) / "bench/results/collectives/sweep";
    int read = 0;
    for (const auto& entry : std::filesystem::directory_iterator(sweep)) {
        if (entry.path().extension() != ".json") continue;
        for (const Json& json : read_json_file(entry.path().string())) {
            ASSERT_TRUE(is_allreduce_record(json)) << entry.path();
            EXPECT_EQ(to_json(allreduce_from_json(json, entry.path().string())), json);
            ++read;
        }
    }
    EXPECT_GT(read, 40);
}

// records/schema/allreduce.json is the schema the code checks against (RDMALAB_UPDATE_SCHEMAS=1
// rewrites it from kAllreduceSchema).
TEST(AllreduceRecord, TheSchemaFileIsTheSchema) {
    const std::string path = std::string(RDMALAB_SOURCE_DIR) + "/records/schema/allreduce.json";
    const std::string schema =
        schema_json("rdmalab allreduce record", "one rank's allreduce measurement (allreduce.hpp)",
                    kAllreduceSchema)
            .dump(2) +
        "\n";
    if (std::getenv("RDMALAB_UPDATE_SCHEMAS")) std::ofstream(path) << schema;
    EXPECT_EQ(allreduce_text_of(path), schema)
        << path << " differs from kAllreduceSchema: RDMALAB_UPDATE_SCHEMAS=1 build/bin/unit_tests";
}

}  // namespace rdmalab::records
