// Unit tests for `rdma-bench records` / `rdma-bench json` (read_fields): paths, wildcards, the
// order of the answers, a path or a record outside the records' schema, and every refusal as one
// line and exit 2.
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

// A bandwidth record as rdma-bench writes it.
records::BenchRecord read_test_record(const char* op, std::uint64_t size, double gib_per_s) {
    records::BenchRecord r;
    r.tool = "rdma-bench 0.1";
    r.config = {.op = op, .transport = "RC", .mode = "bw", .size = size, .memory = "host"};
    r.result.throughput = records::BenchThroughput{.ops = 10, .gib_per_s = gib_per_s};
    r.environment = {.host = "h", .kernel = "k", .date = "d", .tool_version = "rdma-bench 0.1"};
    r.environment.provider = "rxe (Soft-RoCE)";
    return r;
}

// Two records as rdma-bench writes them: only the second has a receiver.
std::string sample_file() {
    const std::string path = temp_path("read-records.json");
    records::BenchRecord write = read_test_record("write", 64, 1.5);
    write.result.verified = true;
    records::BenchRecord send = read_test_record("send", 4096, 0.25);
    send.result.receiver = records::BenchReceiver{.messages = 10, .lost = 0};
    write_file(path, to_json({records::to_json(write), records::to_json(send)}));
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
                   "records/0/result has no field 'receiver' (it has ops, bytes, seconds,");
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
                   "records/0/config/op/x: the records have no field config.op.x");
    expect_refusal(read(file, {count("records/0/config/size")}),
                   "--count records/0/config/size: a number, not an array or object");
    expect_refusal(read(file, {}), "nothing asked");
    std::remove(file.c_str());
}

// A misspelt field is refused by name, even below '*' (where a field of the schema that a record
// lacks gives null); a record outside its schema is refused, naming the record and the field.
TEST(ReadFields, WhatTheSchemaLacksIsOneLineAndExit2) {
    const std::string file = sample_file();
    expect_refusal(read(file, {get("records/*/result/recever/lost")}),
                   "records/*/result/recever/lost: the records have no field result.recever.lost");
    EXPECT_EQ(read(file, {get("records/*/result/atomic_counter")}).out, "null\nnull\n");
    Record odd = records::to_json(read_test_record("write", 64, 1));
    odd["result"]["gib_per_sec"] = 1;
    write_file(file, to_json({odd}));
    expect_refusal(read(file, {count("records")}),
                   "record 0: result.gib_per_sec: not in the schema");
    write_file(file, to_json({Record{{"tool", "something else"}}}));
    expect_refusal(read(file, {count("records")}), "not a record this project writes");
    std::remove(file.c_str());
}

TEST(ReadFields, NotARecordFileIsOneLineAndExit2) {
    const std::string path = temp_path("read-not-records.json");
    write_file(path, R"({"matrix": [[1]]})");
    expect_refusal(read(path, {count("records")}), "not an rdma-bench result file");
    // Nor is it a tool's document to `rdma-bench json`: that reads only the typed ones.
    expect_refusal(read(path, {get("matrix/0/0")}, false),
                   "not a document this project's tools write");
    write_file(path, "{ not json");
    expect_refusal(read(path, {get("a")}, false), "is not valid JSON");
    std::remove(path.c_str());
    expect_refusal(read(temp_path("read-absent.json"), {get("records")}), "cannot open");
}
