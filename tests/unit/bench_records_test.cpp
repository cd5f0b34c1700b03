// Unit tests for rdma-bench's records: complete JSON per configuration, CSV that round-trips
// through any spreadsheet (quoting), and clear errors on files that are not results.
#include "rdmalab/bench/records.hpp"
#include "rdmalab/error.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

using namespace rdmalab;
using namespace rdmalab::bench;

namespace {

std::vector<Record> sample_records() {
    return {Record{{"op", "write"}, {"size", 64}, {"result", {{"gib_per_s", 1.5}, {"mops", 0.25}}}},
            Record{{"op", "send"}, {"size", 4096}, {"note", "a, \"quoted\" note"}}};
}

std::string records_temp_path(const char* name) {
    return ::testing::TempDir() + name;
}

}  // namespace

TEST(Records, JsonKeepsEveryRecordAndReadsBack) {
    const std::string path = records_temp_path("records.json");
    write_file(path, to_json(sample_records()));
    auto back = read_json_file(path);
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[0]["result"]["gib_per_s"], 1.5);
    EXPECT_EQ(back[1]["size"], 4096);
    std::remove(path.c_str());
}

TEST(Records, CsvHasTheUnionOfColumnsFlattenedAndQuoted) {
    std::string csv = to_csv(sample_records());
    std::istringstream lines(csv);
    std::string header, first, second;
    std::getline(lines, header);
    std::getline(lines, first);
    std::getline(lines, second);
    EXPECT_EQ(header, "op,size,result.gib_per_s,result.mops,note");
    EXPECT_EQ(first, "write,64,1.5,0.25,");
    EXPECT_EQ(second, "send,4096,,,\"a, \"\"quoted\"\" note\"");
}

TEST(Records, HostEnvironmentSaysWhereAndWhen) {
    const records::Environment env = records::host_environment("9.9.9");
    EXPECT_FALSE(env.host.empty());
    EXPECT_FALSE(env.kernel.empty());
    EXPECT_EQ(env.date.size(), 20u);  // 2026-11-22T04:08:00Z
    EXPECT_EQ(env.tool_version, "9.9.9");
}

TEST(Records, ReadingSomethingElseFailsClearly) {
    const std::string path = records_temp_path("not-results.json");
    write_file(path, "{\"rows\": []}");
    EXPECT_THROW(read_json_file(path), Error);
    write_file(path, "{ this is not json");
    EXPECT_THROW(read_json_file(path), Error);
    std::remove(path.c_str());
    EXPECT_THROW(read_json_file(records_temp_path("does-not-exist.json")), Error);
}

TEST(Records, ReadingJsonNestedTooDeepFailsClearly) {
    // Found by tests/fuzz: 50000 levels overflowed the stack while the file was parsed.
    const std::string path = records_temp_path("deep.json");
    write_file(path, R"({"records": [{"config": )" + std::string(50000, '[') +
                         std::string(50000, ']') + R"(, "result": {}}]})");
    EXPECT_THROW(read_json_file(path), Error);
    std::remove(path.c_str());
}
