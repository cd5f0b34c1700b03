// Unit tests for `rdma-bench records` / `rdma-bench json` (read_fields): paths, wildcards, the
// order of the answers, and every refusal as one line and exit 2.
#include "rdmalab/bench/records.hpp"
#include "rdmalab/error.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

using namespace rdmalab;
using namespace rdmalab::bench;

namespace {

std::string temp_path(const char* name) {
    return ::testing::TempDir() + name;
}

// Two records as rdma-bench writes them: only the second has a receiver.
std::string sample_file() {
    const std::string path = temp_path("read-records.json");
    write_file(path, to_json({Record{{"config", {{"op", "write"}, {"size", 64}}},
                                     {"result", {{"gib_per_s", 1.5}, {"verified", true}}},
                                     {"environment", {{"provider", "rxe (Soft-RoCE)"}}}},
                              Record{{"config", {{"op", "send"}, {"size", 4096}}},
                                     {"result", {{"gib_per_s", 0.25}, {"receiver", {{"lost", 0}}}}},
                                     {"environment", {{"provider", "rxe (Soft-RoCE)"}}}}}));
    return path;
}

struct Answer {
    int rc;
    std::string out, err;
};

Answer read(const std::string& file, std::vector<FieldQuery> queries, bool records = true,
            bool raw = false) {
    ReadRequest request;
    request.file = file;
    request.records = records;
    request.queries = std::move(queries);
    request.raw = raw;
    std::ostringstream out, err;
    const int rc = read_fields(request, "rdma-bench", out, err);
    return {rc, out.str(), err.str()};
}

FieldQuery get(std::string path) {
    return {FieldQuery::Kind::kGet, std::move(path)};
}
FieldQuery count(std::string path) {
    return {FieldQuery::Kind::kCount, std::move(path)};
}

// A refusal: exit 2, nothing on stdout, exactly one line on stderr containing `says`.
void expect_refusal(const Answer& answer, const std::string& says) {
    EXPECT_EQ(answer.rc, 2);
    EXPECT_EQ(answer.out, "");
    ASSERT_FALSE(answer.err.empty());
    EXPECT_EQ(answer.err.find('\n'), answer.err.size() - 1) << answer.err;
    EXPECT_EQ(answer.err.rfind("rdma-bench: ", 0), 0u) << answer.err;
    EXPECT_NE(answer.err.find(says), std::string::npos) << answer.err;
}

}  // namespace

TEST(ReadPath, SplitsStepsOnSlashes) {
    EXPECT_EQ(parse_path("records/0/result/gib_per_s").steps,
              (std::vector<std::string>{"records", "0", "result", "gib_per_s"}));
    EXPECT_EQ(parse_path("records").steps, std::vector<std::string>{"records"});
    EXPECT_EQ(parse_path("records/*/config").steps,
              (std::vector<std::string>{"records", "*", "config"}));
    // A dot is part of a key, not a separator (rxe counters and lab faults have dots in keys).
    EXPECT_EQ(parse_path("a.b").steps, std::vector<std::string>{"a.b"});
}

TEST(ReadPath, RefusesEmptyPathsAndSteps) {
    for (const char* bad : {"", "/records", "records/", "records//0", "/"})
        EXPECT_THROW(parse_path(bad), Error) << bad;
}

TEST(ReadPath, SelectsKeysIndicesAndWildcards) {
    const Record doc = Record::parse(R"({"a": [{"x": 1}, {"x": 2, "y": "t"}], "m": [[null, 3]]})");
    EXPECT_EQ(select_values(doc, parse_path("a/1/x")), std::vector<Record>{2});
    EXPECT_EQ(select_values(doc, parse_path("a/*/x")), (std::vector<Record>{1, 2}));
    // Below '*' a missing key gives null, keeping one line per element.
    EXPECT_EQ(select_values(doc, parse_path("a/*/y")), (std::vector<Record>{nullptr, "t"}));
    EXPECT_EQ(select_values(doc, parse_path("m/*/*")), (std::vector<Record>{nullptr, 3}));
    EXPECT_THROW(select_values(doc, parse_path("a/0/y")), Error);    // missing, no wildcard
    EXPECT_THROW(select_values(doc, parse_path("a/2")), Error);      // out of range
    EXPECT_THROW(select_values(doc, parse_path("a/01")), Error);     // not an index
    EXPECT_THROW(select_values(doc, parse_path("a/-1")), Error);     // not an index
    EXPECT_THROW(select_values(doc, parse_path("a/0/x/z")), Error);  // into a number
    EXPECT_THROW(select_values(doc, parse_path("a/*/x/z")), Error);  // even below '*'
}

TEST(ReadPath, ValueLinesAreCompactJsonOrRawStrings) {
    EXPECT_EQ(value_line(Record("rxe (Soft-RoCE)"), false), "\"rxe (Soft-RoCE)\"");
    EXPECT_EQ(value_line(Record("rxe (Soft-RoCE)"), true), "rxe (Soft-RoCE)");
    EXPECT_EQ(value_line(Record("two\nlines"), true), "\"two\\nlines\"");  // still one line
    EXPECT_EQ(value_line(Record(1.5), true), "1.5");
    EXPECT_EQ(value_line(Record(true), false), "true");
    EXPECT_EQ(value_line(Record::parse(R"({"a": [1, 2]})"), false), R"({"a":[1,2]})");
}

TEST(ReadFields, AnswersEachQueryInOrder) {
    const std::string file = sample_file();
    const Answer answer =
        read(file,
             {count("records"), get("records/1/config/size"), get("records/*/result/receiver/lost"),
              get("records/0/environment/provider")},
             true, true);
    EXPECT_EQ(answer.rc, 0) << answer.err;
    EXPECT_EQ(answer.out, "2\n4096\nnull\n0\nrxe (Soft-RoCE)\n");
    EXPECT_EQ(answer.err, "");
    std::remove(file.c_str());
}

TEST(ReadFields, MissingFieldIsOneLineAndExit2) {
    const std::string file = sample_file();
    expect_refusal(read(file, {get("records/0/config/size"), get("records/0/result/receiver")}),
                   "records/0/result has no field 'receiver' (it has gib_per_s, verified)");
    std::remove(file.c_str());
}

TEST(ReadFields, IndexOutOfRangeIsOneLineAndExit2) {
    const std::string file = sample_file();
    expect_refusal(read(file, {get("records/2/config")}),
                   "index 2 is out of range (records has 2 elements)");
    expect_refusal(read(file, {get("records/first")}), "'first' is not an index");
    std::remove(file.c_str());
}

TEST(ReadFields, BadPathIsOneLineAndExit2) {
    const std::string file = sample_file();
    expect_refusal(read(file, {get("records//0")}), "bad path 'records//0': an empty step");
    expect_refusal(read(file, {get("records/0/config/op/x")}),
                   "records/0/config/op is a string, not an object or array");
    expect_refusal(read(file, {count("records/0/config/size")}),
                   "--count records/0/config/size: a number, not an array or object");
    expect_refusal(read(file, {}), "nothing asked");
    std::remove(file.c_str());
}

TEST(ReadFields, NotARecordFileIsOneLineAndExit2) {
    const std::string path = temp_path("read-not-records.json");
    write_file(path, R"({"matrix": [[1]]})");
    expect_refusal(read(path, {count("records")}), "not an rdma-bench result file");
    // The same file is any JSON to `rdma-bench json`.
    const Answer json = read(path, {get("matrix/0/0")}, false);
    EXPECT_EQ(json.rc, 0) << json.err;
    EXPECT_EQ(json.out, "1\n");
    write_file(path, "{ not json");
    expect_refusal(read(path, {get("a")}, false), "is not valid JSON");
    std::remove(path.c_str());
    expect_refusal(read(temp_path("read-absent.json"), {get("records")}), "cannot open");
}
