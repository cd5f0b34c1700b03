// Unit tests for rdma-mesh's typed record, mesh.json (records/mesh.hpp): a record as rdma-mesh
// writes it keeps the schema and reads back equal, a misspelt field is refused by name (in the
// record and in an identity message), `rdma-bench json` reads it through its type, and
// records/schema/mesh.json is the schema. The committed mesh.json files are read back byte for
// byte in bench_record_type_test.cpp (EveryRecordedResultStillReads).
#include "rdmalab/records/document.hpp"
#include "rdmalab/records/mesh.hpp"
#include "rdmalab/records/tool_documents.hpp"

#include "rdmalab/error.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace rdmalab::records {

namespace {

MeshRank mesh_record_rank(int rank) {
    return MeshRank{.rank = rank,
                    .host = "node" + std::to_string(rank),
                    .address = "198.51.100." + std::to_string(rank + 1),
                    .device = "rxe0",
                    .provider = "rxe (Soft-RoCE)",
                    .gid = "::ffff:198.51.100." + std::to_string(rank + 1),
                    .local_rank = 0,
                    .node = "",
                    .launcher = "openmpi",
                    .problem = rank == 2 ? "no usable RDMA device" : ""};
}

// Three ranks, one pair failed, one slow: every part filled.
MeshRecord full_mesh_record() {
    MeshRecord r;
    r.tool = "rdma-mesh 0.1";
    r.environment.host = host_environment("rdma-mesh 0.1");
    r.environment.host.mpi = "Open MPI v4.1.4";
    r.environment.launcher = "openmpi";
    r.environment.ranks = 3;
    r.settings = {.op = "write",
                  .transport = "RC",
                  .size = "64K",
                  .rate_size = "64",
                  .lat_size = "8",
                  .duration_s = 0.5,
                  .lat_iters = 100,
                  .warmup = 100,
                  .timeout_s = 5.0,
                  .serial = true,
                  .pairs = "all",
                  .seed = 1,
                  .judge = "bw",
                  .fraction = 0.8,
                  .latency_factor = 1.5,
                  .memory = "host",
                  .describe = "write RC bw 64K for 0.5 s, rate 64, latency 8 × 100"};
    r.ranks = {mesh_record_rank(0), mesh_record_rank(1), mesh_record_rank(2)};
    r.rounds = 3;
    r.planned_pairs = 3;
    r.pair_seconds = {{0, 1, 1.5}, {0, 2, 2.25}};
    for (std::string_view key : kMeshMetricKeys)
        r.metrics.push_back(MeshMetric{.key = std::string(key),
                                       .label = std::string(key) + " (unit)",
                                       .median = 1.5,
                                       .typical = 2,
                                       .threshold = 1.6,
                                       .judged = key == "bw_gbps",
                                       .matrix = {{std::nullopt, 1.0, 2.5},
                                                  {0.25, std::nullopt, std::nullopt},
                                                  {3.0, 1e-9, std::nullopt}}});
    r.failed = {{1, 2, "seen by rank 1: bw: timed out"}};
    r.slow = {{0, 1, {"bw_gbps 1→0: 0.25 < 1.6 (80% of typical 2)"}}};
    r.culprits = {{2, "node2 198.51.100.3", 2}};
    r.summary = {"bandwidth (Gb/s): median pair 1.5", "verdict: 1 slow pair(s)"};
    r.flagged = true;
    return r;
}

std::string mesh_record_text_of(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), {}};
}

std::string mesh_record_temp(const std::string& name) {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/rdmalab-mesh-record-" +
           std::to_string(::getpid()) + "-" + name;
}

}  // namespace

TEST(MeshRecordType, AWrittenRecordKeepsTheSchemaAndReadsBackEqual) {
    MeshRecord old_run = full_mesh_record();  // before --pairs: no pairs, seed, planned_pairs
    old_run.settings.pairs.reset();
    old_run.settings.seed.reset();
    old_run.planned_pairs.reset();
    old_run.failed.clear();
    old_run.culprits.clear();
    for (const MeshRecord& record : {full_mesh_record(), old_run}) {
        const Json json = to_json(record);
        EXPECT_EQ(schema_problems(json, kMeshSchema), std::vector<std::string>{});
        EXPECT_TRUE(is_mesh_record(json));
        EXPECT_EQ(mesh_from_json(json, "here"), record);
        EXPECT_EQ(to_json(mesh_from_json(json, "here")), json);
        // The text too: what a reader writes back is what it read.
        EXPECT_EQ(to_json(mesh_from_json(Json::parse(json.dump(2)), "here")).dump(2), json.dump(2));
    }
    const Json json = to_json(full_mesh_record());
    std::vector<std::string> keys;
    for (const auto& [key, value] : json.items()) keys.push_back(key);
    EXPECT_EQ(keys, (std::vector<std::string>{"tool", "environment", "settings", "ranks", "rounds",
                                              "planned_pairs", "pair_seconds", "metrics", "failed",
                                              "slow", "culprits", "summary", "flagged"}));
    EXPECT_EQ(json["metrics"]["bw_gbps"]["matrix"][0], Json::array({nullptr, 1.0, 2.5}));
    EXPECT_EQ(json["environment"]["launcher"], "openmpi");
    EXPECT_FALSE(is_mesh_record(Json{{"tool", "rdma-bench 0.1"}}));
}

TEST(MeshRecordType, AMisspeltOrMistypedFieldIsRefusedByName) {
    Json json = to_json(full_mesh_record());
    json["ranks"][1]["adress"] = "198.51.100.2";
    json["metrics"]["lat_us"]["matrix"][2][1] = "fast";
    json["settings"].erase("judge");
    EXPECT_EQ(
        schema_problems(json, kMeshSchema),
        (std::vector<std::string>{"settings.judge: missing", "ranks[1].adress: not in the schema",
                                  "metrics.lat_us.matrix: an array, not (number|null)[][]"}));
    try {
        mesh_from_json(json, "mesh.json");
        FAIL() << "a record outside its schema was read";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "mesh.json: settings.judge: missing (and 2 more)");
    }
    Json unknown_metric = to_json(full_mesh_record());
    unknown_metric["metrics"]["bw_gbsp"] = unknown_metric["metrics"]["bw_gbps"];
    EXPECT_THROW(mesh_from_json(unknown_metric, "m"), Error);
    // The identity message a rank sends: the same type, the same refusal.
    Json identity = to_json(mesh_record_rank(1));
    EXPECT_EQ(mesh_rank_from_json(identity, "rank 1's identity"), mesh_record_rank(1));
    identity["locl_rank"] = identity["local_rank"];
    identity.erase("local_rank");
    try {
        mesh_rank_from_json(identity, "rank 1's identity");
        FAIL() << "an identity outside its schema was read";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "rank 1's identity: locl_rank: not in the schema (and 1 more)");
    }
    EXPECT_TRUE(names_field(kMeshSchema, "ranks.3.address"));
    EXPECT_TRUE(names_field(kMeshSchema, "metrics.lat_p99_us.matrix.2.0"));
    EXPECT_TRUE(names_field(kMeshSchema, "slow.0.reasons.1"));
    EXPECT_FALSE(names_field(kMeshSchema, "ranks.3.adress"));
    EXPECT_FALSE(names_field(kMeshSchema, "ranks.x.address"));
    EXPECT_FALSE(names_field(kMeshSchema, "metrics.lat_us.matrix.2.0.1"));
}

// `rdma-bench json` (read_fields on a tool's document): fields by path, a path naming no field of
// the schema refused, a document of no known tool refused, each in one line with status 2.
TEST(MeshRecordType, ItsReaderAnswersPathsOfTheSchemaOnly) {
    const std::string path = mesh_record_temp("mesh.json");
    write_file(path, to_json(full_mesh_record()).dump(2) + "\n");
    const auto read = [&](std::vector<FieldQuery> queries) {
        std::ostringstream out, err;
        const int rc =
            read_fields(ReadRequest{path, false, std::move(queries), true}, "rdma-bench", out, err);
        return std::tuple{rc, out.str(), err.str()};
    };
    const auto get = [](std::string p) { return FieldQuery{FieldQuery::Kind::kGet, std::move(p)}; };
    EXPECT_EQ(
        read({get("culprits/*/rank"), get("metrics/bw_gbps/matrix/2/1"), get("ranks/*/address")}),
        (std::tuple{0, std::string("2\n1e-09\n198.51.100.1\n198.51.100.2\n198.51.100.3\n"),
                    std::string()}));
    const auto [rc, out, err] = read({get("ranks/*/adress")});
    EXPECT_EQ(rc, 2);
    EXPECT_EQ(out, "");
    EXPECT_EQ(err, "rdma-bench: " + path +
                       ": ranks/*/adress: the document has no field ranks.0.adress (their "
                       "schemas: records/schema/)\n");
    Json odd = to_json(full_mesh_record());
    odd["flaged"] = true;
    write_file(path, odd.dump(2));
    EXPECT_EQ(std::get<2>(read({get("flagged")})),
              "rdma-bench: " + path + ": flaged: not in the schema\n");
    write_file(path, R"({"tool": "nobody 1", "a": 1})");
    EXPECT_NE(std::get<2>(read({get("a")})).find("not a document this project's tools write"),
              std::string::npos);
    std::remove(path.c_str());
}

// The messages two ranks exchange while they meet: each written and read back through its type,
// and one with a misspelt or mistyped field refused by name.
TEST(MeshRecordType, TheMeetingsMessagesRoundTripAndRefuseWhatTheyLack) {
    const MeshEndpoints endpoints{"", std::vector<std::string>{"00ab", "00cd"}, 16u};
    EXPECT_EQ(mesh_endpoints_from_json(to_json(endpoints), "e"), endpoints);
    const MeshEndpoints none{"no QP: out of memory", std::nullopt, std::nullopt};
    EXPECT_EQ(to_json(none), (Json{{"error", "no QP: out of memory"}}));
    EXPECT_EQ(mesh_endpoints_from_json(to_json(none), "e"), none);
    EXPECT_EQ(mesh_hello_from_json(to_json(MeshHello{"no device"}), "h").problem, "no device");
    EXPECT_EQ(mesh_status_from_json(to_json(MeshStatus{""}), "s").error, "");
    const MeshSent sent{"", {3, 4}};
    EXPECT_EQ(mesh_sent_from_json(to_json(sent), "sent"), sent);
    EXPECT_EQ(mesh_silent_from_json(to_json(MeshSilentNotice{2}), "n").rank, 2);
    const auto refusal = [](auto read, const Json& json) {
        try {
            read(json, "a message");
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("read");
    };
    EXPECT_EQ(refusal(mesh_hello_from_json, Json{{"problme", ""}}),
              "a message: problme: not in the schema (and 1 more)");
    EXPECT_EQ(refusal(mesh_sent_from_json, Json{{"error", ""}, {"per_qp", {1, "2"}}}),
              "a message: per_qp: an array, not integer[]");
    EXPECT_EQ(refusal(mesh_status_from_json, Json::array()),
              "a message: the record is an array, not an object");
    EXPECT_EQ(refusal(mesh_silent_from_json, Json{{"rank", 1.5}}),
              "a message: rank: a number, not integer");
}

TEST(MeshRecordType, TheSchemaFileIsTheSchema) {
    const std::string path = std::string(RDMALAB_SOURCE_DIR) + "/records/schema/mesh.json";
    const std::string schema =
        schema_json("rdmalab rdma-mesh record",
                    "one run of rdma-mesh over every pair of ranks, its mesh.json "
                    "(records/mesh.hpp)",
                    kMeshSchema)
            .dump(2) +
        "\n";
    if (std::getenv("RDMALAB_UPDATE_SCHEMAS")) std::ofstream(path) << schema;
    EXPECT_EQ(mesh_record_text_of(path), schema)
        << path << " differs from kMeshSchema: RDMALAB_UPDATE_SCHEMAS=1 build/bin/unit_tests";
}

}  // namespace rdmalab::records
