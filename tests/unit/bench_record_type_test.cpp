// Unit tests for rdma-bench's typed record (records/bench.hpp): a record as rdma-bench writes it
// keeps the schema and reads back equal, every record recorded in bench/results still reads (and
// writes back the same JSON), a field outside the schema is refused by name, and
// records/schema/bench.json is the schema.
#include "rdmalab/records/allreduce.hpp"
#include "rdmalab/records/bench.hpp"
#include "rdmalab/records/mesh.hpp"
#include "rdmalab/records/tool_documents.hpp"

#include "rdmalab/error.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

// Inside the namespace: the unit tests build in unity batches, where another file's using-
// directive (rdmalab::bench has a to_json and a host_environment too) would make a name ambiguous.
namespace rdmalab::records {

namespace {

// A bandwidth SEND over UD: every optional part present.
BenchRecord full_bench_record() {
    BenchRecord r;
    r.tool = "rdma-bench 0.1";
    r.config = {.op = "send",
                .transport = "UD",
                .mode = "bw",
                .size = 64,
                .window = 4,
                .qps = 1,
                .post_list = 1,
                .signal_every = 1,
                .inline_size = 0,
                .sge = 1,
                .srq = false,
                .shared_cq = false,
                .events = false,
                .iters = 1000,
                .duration_s = 0.5,
                .warmup = 10,
                .memory = "host",
                .server_memory = "host",
                .api = "classic"};
    const BenchMemorySide side{.memory = "host",
                               .path = "host",
                               .where = "host memory",
                               .staging_copies = "none",
                               .copies_in_timed_loop = 0};
    r.memory = BenchMemory{.client = side, .server = side, .note = "a note"};
    r.result.throughput = BenchThroughput{
        .ops = 10, .bytes = 640, .seconds = 0.5, .gib_per_s = 1e-6, .gb_per_s = 1e-5, .mops = 2e-5};
    r.result.receiver = BenchReceiver{
        .messages = 9, .bytes = 576, .lost = 1, .seconds = 0.5, .mops = 1.8e-5, .gib_per_s = 1e-6};
    r.result.verified = true;
    r.result.cpu = {.client_s = 0.5,
                    .server_s = 0.5,
                    .client_us_per_op = 50000,
                    .server_us_per_op = 50000,
                    .client_utilization = 1,
                    .server_utilization = 1};
    r.environment = host_environment("rdma-bench 0.1");
    r.environment.device = "rxe0";
    r.environment.provider = "rxe (Soft-RoCE)";
    r.environment.port = "rxe0 port 1";
    r.environment.link_layer = "Ethernet";
    r.environment.path_mtu = 1024;
    r.environment.traffic_class = 106;
    r.environment.lab = "rdmalab lab (vm)";
    r.environment.lab_hosts = "2";
    r.environment.lab_faults = "host 2 egress loss 1%";
    r.environment.server = PeerHost{.host = "h1", .device = "rxe0", .provider = "rxe (Soft-RoCE)"};
    return r;
}

std::string bench_record_text_of(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

TEST(BenchRecordType, AWrittenRecordKeepsTheSchemaAndReadsBackEqual) {
    BenchRecord bandwidth = full_bench_record();
    BenchRecord latency = full_bench_record();
    latency.config.mode = "lat";
    latency.memory.reset();
    latency.result.throughput.reset();
    latency.result.receiver.reset();
    latency.result.verified.reset();
    latency.result.atomic_counter = 5;
    latency.result.latency = BenchLatency{.reported_as = "half round trip",
                                          .samples = 3,
                                          .min_us = 1,
                                          .median_us = 2,
                                          .mean_us = 2,
                                          .stdev_us = 0.5,
                                          .p99_us = 3,
                                          .p999_us = 3,
                                          .max_us = 3};
    for (const BenchRecord& record : {bandwidth, latency}) {
        const Json json = to_json(record);
        EXPECT_EQ(schema_problems(json, kBenchSchema), std::vector<std::string>{});
        EXPECT_TRUE(is_bench_record(json));
        EXPECT_EQ(bench_from_json(json, "here"), record);
        EXPECT_EQ(to_json(bench_from_json(json, "here")), json);
    }
}

TEST(BenchRecordType, AFieldOutsideTheSchemaIsRefusedByName) {
    Json json = to_json(full_bench_record());
    json["result"]["receiver"]["lots"] = 0;
    json["config"]["size"] = -1.5;
    EXPECT_EQ(schema_problems(json, kBenchSchema),
              (std::vector<std::string>{"config.size: a number, not integer",
                                        "result.receiver.lots: not in the schema"}));
    Json partial = to_json(full_bench_record());
    partial["result"].erase("mops");
    EXPECT_THROW(bench_from_json(partial, "r.json record 0"), Error);  // bw figures come together
    EXPECT_TRUE(names_field(kBenchSchema, "result.receiver.lost"));
    EXPECT_FALSE(names_field(kBenchSchema, "result.reciever.lost"));
}

// The results in the tree, rdma-bench's and the allreduce programs' record files and the tools'
// documents (rdma-mesh's mesh.json, gpu-memory-bench's records): each reads through its type and
// writes back the JSON it was read from; a document, the very text.
TEST(BenchRecordType, EveryRecordedResultStillReads) {
    const std::filesystem::path source(RDMALAB_SOURCE_DIR);
    int bench = 0, allreduce = 0, mesh = 0, gpu_memory = 0;
    for (const char* folder : {"bench/results", "gpu/results"})
        for (const auto& entry : std::filesystem::recursive_directory_iterator(source / folder)) {
            if (entry.path().extension() != ".json") continue;
            const std::string path = entry.path().string();
            const std::string text = bench_record_text_of(path);
            const Json json = parse_json(text, path);
            if (json.is_object() && json.contains("records")) {
                const std::vector<Json> document = read_json_file(path);
                ASSERT_EQ(read_record_file(path), document) << path;
                for (const Json& record : document) (is_bench_record(record) ? bench : allreduce)++;
            } else if (json.is_object()) {
                ASSERT_EQ(read_document_file(path).dump(2) + "\n", text) << path;
                (is_mesh_record(json) ? mesh : gpu_memory)++;
            }
            // Else a JSON array: the packets rdma-wire keeps, read through wire/packet.hpp's
            // type (wire_records_test.cpp).
        }
    EXPECT_GT(bench, 300);
    EXPECT_GT(allreduce, 60);
    EXPECT_GE(mesh, 1);
    EXPECT_GE(gpu_memory, 3);
}

// records/schema/*.json are the schemas the code checks against (RDMALAB_UPDATE_SCHEMAS=1
// build/bin/unit_tests rewrites them).
TEST(BenchRecordType, TheSchemaFileIsTheSchema) {
    const std::string path = std::string(RDMALAB_SOURCE_DIR) + "/records/schema/bench.json";
    const std::string schema =
        schema_json("rdmalab rdma-bench record",
                    "one configuration's measurement by rdma-bench (records/bench.hpp)",
                    kBenchSchema)
            .dump(2) +
        "\n";
    if (std::getenv("RDMALAB_UPDATE_SCHEMAS")) std::ofstream(path) << schema;
    EXPECT_EQ(bench_record_text_of(path), schema)
        << path << " differs from kBenchSchema: RDMALAB_UPDATE_SCHEMAS=1 build/bin/unit_tests";
}

}  // namespace rdmalab::records
