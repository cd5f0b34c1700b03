// Unit tests for transfer-bench's record (records/transfer.hpp): its JSON keeps the schema and
// reads back equal, through the result files' one reader too (`rdma-bench records`); a field
// outside the schema, of the wrong type or missing is refused by name; and the schema file is
// the schema.
#include "rdmalab/records/transfer.hpp"

#include "rdmalab/error.hpp"
#include "rdmalab/records/bench.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

// Inside the namespace: the unit tests build in unity batches (see allreduce_record_test.cpp).
namespace rdmalab::records {

namespace {

// Two rails, rail 2 killed under the batches: its slices went again on rail 1.
TransferRecord failover_record() {
    TransferRecord record;
    record.config = {.op = "write",
                     .rails = 2,
                     .devices = {"rxe0", "rxe1"},
                     .block = 65536,
                     .batch = 8,
                     .batches = 96,
                     .slice = 65536,
                     .policy = "score",
                     .retry_cnt = 3,
                     .ack_timeout = 14,
                     .rail_retry_ms = 1000,
                     .rail_retry_max_ms = 30000,
                     .check = true,
                     .qps_per_rail = 2,
                     .mem = "cuda:0",
                     .registration = "dma-buf"};
    record.result = {.bytes = 50'331'648,
                     .seconds = 10.5,
                     .gbit_per_s = 0.0383,
                     .batch_p50_ms = 90.1,
                     .batch_p99_ms = 380.2,
                     .batch_p999_ms = 401.7,
                     .reposted = 5,
                     .verified = true,
                     .rails = {{.device = "rxe0", .bytes = 40'000'000, .up = true},
                               {.device = "rxe1",
                                .bytes = 10'331'648,
                                .up = false,
                                .failures = 3,
                                .restored = 0,
                                .detect_ms = 268.9,
                                .down_because = "transport retry counter exceeded (12)"}}};
    record.environment = {.host = "h2",
                          .kernel = "6.1",
                          .date = "2026-12-01T00:00:00Z",
                          .tool_version = kTransferTool};
    record.environment.device = "rxe0,rxe1";
    record.environment.lab = "rdmalab lab (vm)";
    return record;
}

std::string transfer_text_of(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

TEST(TransferRecord, ItsJsonKeepsTheSchemaAndReadsBackEqual) {
    const TransferRecord record = failover_record();
    const Json json = to_json(record);
    EXPECT_EQ(schema_problems(json, kTransferSchema), std::vector<std::string>{});
    EXPECT_EQ(transfer_from_json(json, "here"), record);
    EXPECT_TRUE(is_transfer_record(json));
    EXPECT_FALSE(is_transfer_record(Json{{"tool", "rdma-bench 0.1"}}));
    // A rail still up has no detect_ms or down_because.
    EXPECT_FALSE(json["result"]["rails"][0].contains("detect_ms"));
    EXPECT_DOUBLE_EQ(json["result"]["rails"][1]["detect_ms"].get<double>(), 268.9);
}

TEST(TransferRecord, AFieldOutsideTheSchemaOrOfTheWrongTypeIsRefusedByName) {
    const Json json = to_json(failover_record());
    Json misspelt = json;
    misspelt["result"]["gbit"] = 1;
    EXPECT_EQ(schema_problems(misspelt, kTransferSchema),
              std::vector<std::string>{"result.gbit: not in the schema"});
    Json wrong = json;
    wrong["result"]["rails"][1]["up"] = "no";
    EXPECT_EQ(schema_problems(wrong, kTransferSchema),
              std::vector<std::string>{"result.rails[1].up: a string, not boolean"});
    Json missing = json;
    missing["config"].erase("block");
    try {
        transfer_from_json(missing, "t.json: record 0");
        ADD_FAILURE() << "read a record without config.block";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "t.json: record 0: config.block: missing");
    }
}

// The file transfer-bench --json writes is what `rdma-bench records` reads: each record through
// its type, and a path must name a field of the schema.
TEST(TransferRecord, TheFileIsWhatTheReaderOfRecordsReads) {
    const std::string path =
        ::testing::TempDir() + "transfer_record_test_" + std::to_string(::getpid()) + ".json";
    write_transfer_records(path, failover_record());
    const auto read = [&path](std::string query) {
        std::ostringstream out, err;
        const int rc = read_fields({.file = path,
                                    .records = true,
                                    .queries = {{FieldQuery::Kind::kGet, query}},
                                    .raw = true},
                                   "rdma-bench", out, err);
        return std::to_string(rc) + "|" + out.str() + err.str();
    };
    EXPECT_EQ(read("records/0/config/rails"), "0|2\n");
    EXPECT_EQ(read("records/0/result/rails/*/detect_ms"), "0|null\n268.9\n");
    EXPECT_EQ(read("records/0/config/devices/1"), "0|rxe1\n");
    EXPECT_NE(read("records/0/result/gbit").find("the records have no field result.gbit"),
              std::string::npos);
    const std::vector<Json> records = read_record_file(path);
    std::remove(path.c_str());
    ASSERT_EQ(records.size(), 1U);
    EXPECT_EQ(transfer_from_json(records[0], path), failover_record());
}

// A record of transfer-bench's with a field the schema lacks is refused by the file reader with
// one line naming the file, the record and the field.
TEST(TransferRecord, TheFileReaderRefusesABadRecordNamingTheField) {
    const std::string path =
        ::testing::TempDir() + "transfer_bad_record_" + std::to_string(::getpid()) + ".json";
    Json bad = to_json(failover_record());
    bad["config"]["rails"] = "two";
    write_file(path, to_json(std::vector<Json>{bad}));
    std::ostringstream out, err;
    const int rc = read_fields(
        {.file = path, .records = true, .queries = {{FieldQuery::Kind::kGet, "records/0/tool"}}},
        "rdma-bench", out, err);
    std::remove(path.c_str());
    EXPECT_EQ(rc, 2);
    EXPECT_EQ(out.str(), "");
    EXPECT_EQ(err.str(),
              "rdma-bench: " + path + ": record 0: config.rails: a string, not integer\n");
}

// records/schema/transfer.json is the schema the code checks against (RDMALAB_UPDATE_SCHEMAS=1
// rewrites it from kTransferSchema).
TEST(TransferRecord, TheSchemaFileIsTheSchema) {
    const std::string path = std::string(RDMALAB_SOURCE_DIR) + "/records/schema/transfer.json";
    const std::string schema =
        schema_json("rdmalab transfer record",
                    "one run of transfer-bench, the transfer engine's bench (transfer.hpp)",
                    kTransferSchema)
            .dump(2) +
        "\n";
    if (std::getenv("RDMALAB_UPDATE_SCHEMAS")) std::ofstream(path) << schema;
    EXPECT_EQ(transfer_text_of(path), schema)
        << path << " differs from kTransferSchema: RDMALAB_UPDATE_SCHEMAS=1 build/bin/unit_tests";
}

}  // namespace rdmalab::records
