// Unit tests for the ring allreduce's record: the report's measures, read back through the one
// reader of records (select_values), as the lab test reads the lesson's --json file.
#include "rdmalab/bench/allreduce_record.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <string>

using namespace rdmalab;
using namespace rdmalab::bench;

namespace {

// 1 MB over 4 ranks; the median of 3 runs is 10 ms: algbw 100 MB/s, busbw × 2·3/4 = 150.
const AllreduceRuns kFourRanks{.bytes = 1'000'000,
                               .ranks = 4,
                               .times_ms = {30, 10, 5},
                               .step_done_ms = {1, 3, 3.5},
                               .bytes_sent = 1'500'000,
                               .right = 2};

Record allreduce_value(const Record& document, const std::string& path) {
    const auto values = select_values(document, parse_path(path));
    EXPECT_EQ(values.size(), 1U) << path;
    return values.empty() ? Record() : values.front();
}

}  // namespace

TEST(AllreduceRecord, HoldsTheReportsMeasuresAndHowTheRankRan) {
    const Record document{{"records",
                           {allreduce_record(kFourRanks, {.rank = 1, .segment = 65536, .slots = 4},
                                             Record{{"host", "h1"}})}}};
    EXPECT_EQ(allreduce_value(document, "records/0/config/algorithm"), "ring");
    EXPECT_EQ(allreduce_value(document, "records/0/config/ranks"), 4);
    EXPECT_EQ(allreduce_value(document, "records/0/config/rank"), 1);
    EXPECT_EQ(allreduce_value(document, "records/0/config/bytes"), 1'000'000);
    EXPECT_EQ(allreduce_value(document, "records/0/config/segment"), 65536);
    EXPECT_EQ(allreduce_value(document, "records/0/config/slots"), 4);
    EXPECT_EQ(allreduce_value(document, "records/0/config/iterations"), 3);
    EXPECT_DOUBLE_EQ(allreduce_value(document, "records/0/result/median_ms").get<double>(), 10);
    EXPECT_DOUBLE_EQ(allreduce_value(document, "records/0/result/algbw_mb_s").get<double>(), 100);
    EXPECT_DOUBLE_EQ(allreduce_value(document, "records/0/result/busbw_mb_s").get<double>(), 150);
    // The spread: the slowest allreduce (30 ms) and the fastest (5 ms).
    EXPECT_DOUBLE_EQ(allreduce_value(document, "records/0/result/busbw_min_mb_s").get<double>(),
                     50);
    EXPECT_DOUBLE_EQ(allreduce_value(document, "records/0/result/busbw_max_mb_s").get<double>(),
                     300);
    EXPECT_DOUBLE_EQ(allreduce_value(document, "records/0/result/link_share").get<double>(), 1.5);
    EXPECT_EQ(allreduce_value(document, "records/0/result/bytes_sent"), 1'500'000);
    EXPECT_EQ(allreduce_value(document, "records/0/result/right_rank"), 2);
    EXPECT_EQ(select_values(document, parse_path("records/0/result/times_ms/*")).size(), 3U);
    const auto steps = select_values(document, parse_path("records/0/result/step_ms/*"));
    ASSERT_EQ(steps.size(), 3U);
    EXPECT_DOUBLE_EQ(steps[1].get<double>(), 2);
    EXPECT_EQ(allreduce_value(document, "records/0/environment/host"), "h1");
}

TEST(AllreduceRecord, AnAlgorithmWithoutARightNeighbourSaysSo) {
    AllreduceRuns runs = kFourRanks;
    runs.right.reset();
    const Record document{
        {"records",
         {allreduce_record(
             runs, {.rank = 0, .algorithm = "recursive doubling", .tool = "recursive-doubling 1"},
             Record{})}}};
    EXPECT_EQ(allreduce_value(document, "records/0/tool"), "recursive-doubling 1");
    EXPECT_EQ(allreduce_value(document, "records/0/config/algorithm"), "recursive doubling");
    EXPECT_TRUE(allreduce_value(document, "records/0/result/right_rank").is_null());
    // busbw is nccl-tests' measure for any algorithm: algbw × 2(n-1)/n.
    EXPECT_DOUBLE_EQ(allreduce_value(document, "records/0/result/busbw_mb_s").get<double>(), 150);
}

TEST(AllreduceRecord, TheFileIsWhatTheReaderOfRecordsReads) {
    const std::string path =
        ::testing::TempDir() + "allreduce_record_test_" + std::to_string(::getpid()) + ".json";
    write_allreduce_records(path, kFourRanks, {.rank = 0, .segment = 4096, .slots = 2});
    const auto records = read_json_file(path);
    std::remove(path.c_str());
    ASSERT_EQ(records.size(), 1U);
    EXPECT_EQ(records[0]["tool"], "ring-allreduce 2");
    EXPECT_TRUE(records[0]["environment"].contains("kernel"));
    EXPECT_DOUBLE_EQ(records[0]["result"]["busbw_mb_s"].get<double>(), 150);
}
