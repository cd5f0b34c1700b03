// The trace's typed records: a program trace's line (common/trace_event.hpp, read by
// records/trace_event.hpp) and the merged trace (trace/timeline.hpp). Each committed trace reads
// back and writes the same bytes; a bad line or record is refused in one line naming the field;
// the schema files are the schemas.
#include "merge.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/records/trace_event.hpp"
#include "rdmalab/trace_event.hpp"
#include "timeline.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace rdmalab;

namespace {

std::string trace_records_text_of(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), {}};
}

// What a refusal says: its message, which must be one line naming `field`.
template <typename Fn>
std::string trace_records_refusal(Fn&& fn) {
    try {
        fn();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(accepted)";
}

// One event of each kind, every field its kind has set.
std::vector<trace::Event> trace_records_each_kind() {
    return {
        {.t_ns = 1,
         .host = "host1",
         .event = "trace_start",
         .format = "rdmalab-program-trace",
         .version = 1,
         .clock = "CLOCK_REALTIME",
         .pid = 42},
        {.t_ns = 2,
         .host = "host2",
         .event = "post_send",
         .qp_num = 17,
         .dest_qp = 18,
         .wr_id = 7,
         .opcode = "ATOMIC_CMP_AND_SWP",
         .length = 8,
         .num_sge = 1,
         .signaled = true,
         .inline_data = false,
         .fence = true,
         .remote_addr = "0xabc000",
         .rkey = "0x1234",
         .compare_add = 1,
         .swap = 18446744073709551615ull,
         .imm = "0x5"},
        {.t_ns = 3,
         .host = "host1",
         .event = "post_recv",
         .qp_num = 17,
         .wr_id = 1,
         .length = 4096,
         .num_sge = 2},
        {.t_ns = 4,
         .host = "host1",
         .event = "completion",
         .qp_num = 17,
         .wr_id = 1,
         .opcode = "RECV_RDMA_WITH_IMM",
         .imm = "0x5",
         .status = "IBV_WC_SUCCESS",
         .ok = true,
         .byte_len = 4096},
        {.t_ns = 5,
         .host = "host2",
         .event = "completion",
         .qp_num = 17,
         .wr_id = 2,
         .status = "IBV_WC_RETRY_EXC_ERR",
         .ok = false,
         .vendor_err = "0x0"},
        {.t_ns = 6, .host = "host1", .event = "step", .text = "server verified \"4096\" bytes"},
        {.t_ns = 7,
         .host = "host1",
         .event = "cm_event",
         .name = "RDMA_CM_EVENT_ESTABLISHED",
         .cm_status = -110},
        {.t_ns = 8,
         .host = "host1",
         .event = "modify_qp",
         .qp_num = 17,
         .from = "INIT",
         .to = "RTR"},
    };
}

}  // namespace

TEST(TraceRecords, EachKindOfLineReadsBackAsWritten) {
    for (const trace::Event& event : trace_records_each_kind()) {
        const std::string line = trace::encode(event);
        EXPECT_EQ(line.find('\n'), std::string::npos);
        EXPECT_EQ(records::trace_event_from_json(records::parse_json(line, "line"), "line"), event)
            << line;
    }
}

TEST(TraceRecords, ABadLineIsRefusedInOneLineNamingTheField) {
    const std::string header = trace::encode(trace_records_each_kind()[0]) + "\n";
    const auto refusal = [&](const std::string& line) {
        return trace_records_refusal(
            [&] { trace_merge::parse_events(header + line + "\n", "mine.jsonl"); });
    };
    const std::vector<std::pair<std::string, std::string>> bad = {
        {R"({"t_ns":1,"host":"h","event":"post_send","wr_id":1,"qp_num":-1})", "qp_num"},
        {R"({"t_ns":1,"host":"h","event":"post_send","wr_id":1,"dest_qp":4294967296})", "dest_qp"},
        {R"({"t_ns":1,"host":"h","event":"post_send","wr_id":1,"dest_qp_num":18})", "dest_qp_num"},
        {R"({"t_ns":1,"host":"h","event":"completion","qp_num":17})", "wr_id"},
        {R"({"t_ns":1,"host":"h","event":"completion","wr_id":1,"ok":"yes"})", "ok"},
        {R"({"t_ns":1,"host":"h","event":"step","text":"x","qp_num":17})", "qp_num"},
        {R"({"t_ns":1,"host":"h","event":"cm_event","name":"X","status":"IBV_WC_SUCCESS"})",
         "status"},
        {R"({"t_ns":-1,"host":"h","event":"step","text":"x"})", "t_ns"},
        {R"({"t_ns":1,"event":"step","text":"x"})", "host"},
        {R"({"t_ns":1,"host":"h","event":"post_sent","wr_id":1})", "event"},
    };
    for (const auto& [line, field] : bad) {
        const std::string message = refusal(line);
        EXPECT_NE(message.find("mine.jsonl:2: "), std::string::npos) << line << " → " << message;
        EXPECT_NE(message.find(field), std::string::npos) << line << " → " << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
}

// Every committed trace (docs/public/traces/, the site's) reads through the type and is written
// again byte for byte.
TEST(TraceRecords, EveryCommittedTraceReadsBackAndWritesTheSameBytes) {
    const std::filesystem::path folder =
        std::filesystem::path(RDMALAB_SOURCE_DIR) / "docs" / "public" / "traces";
    std::size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(folder)) {
        if (entry.path().extension() != ".json") continue;
        ++files;
        const std::string text = trace_records_text_of(entry.path().string());
        const trace_merge::Trace trace = trace_merge::read_trace(text, entry.path().string());
        EXPECT_FALSE(trace.events.empty()) << entry.path();
        EXPECT_EQ(trace_merge::write_trace(trace), text) << entry.path();
    }
    EXPECT_GE(files, 11u);
}

TEST(TraceRecords, ABadMergedTraceIsRefusedInOneLineNamingTheField) {
    const std::string path =
        std::string(RDMALAB_SOURCE_DIR) + "/docs/public/traces/rdma-write.json";
    const nlohmann::json good = nlohmann::json::parse(trace_records_text_of(path));
    const auto refusal = [&](const auto& damage) {
        nlohmann::json bad = good;
        damage(bad);
        return trace_records_refusal([&] { trace_merge::read_trace(bad.dump(1), "bad.json"); });
    };
    const std::vector<std::pair<std::string, std::string>> cases = {
        {refusal([](nlohmann::json& t) { t["events"][6]["qp_num"] = "17"; }), "events[6]: qp_num"},
        {refusal([](nlohmann::json& t) { t["events"][6]["acked_by"] = 1000; }), "acked_by"},
        {refusal([](nlohmann::json& t) { t["events"][6]["id"] = 5; }), "id"},
        {refusal([](nlohmann::json& t) { t["packets"][0].erase("psn"); }), "psn"},
        {refusal([](nlohmann::json& t) { t["packets"][0]["tx_ns"] = "soon"; }), "tx_ns"},
        {refusal([](nlohmann::json& t) { t["clock"].erase("reference"); }), "clock.reference"},
        {refusal([](nlohmann::json& t) { t["meta"]["environment"]["qemu"] = 7; }), "qemu"},
        {refusal([](nlohmann::json& t) { t["timeline"][0]["kind"] = 1; }), "timeline[0].kind"},
        {refusal([](nlohmann::json& t) { t["version"] = 1; }), "version"},
        {refusal([](nlohmann::json& t) { t["format"] = "rdmalab-packets"; }), "rdmalab-trace"},
    };
    for (const auto& [message, field] : cases) {
        EXPECT_NE(message.find("bad.json"), std::string::npos) << message;
        EXPECT_NE(message.find(field), std::string::npos) << field << " → " << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
}

TEST(TraceRecords, TheSchemaFilesAreTheSchemas) {
    const std::vector<std::pair<std::string, std::string>> files = {
        {"records/schema/trace-event.json", records::trace_event_schema_json().dump(2) + "\n"},
        {"records/schema/trace.json", trace_merge::trace_schema_json().dump(2) + "\n"},
    };
    for (const auto& [file, schema] : files) {
        const std::string path = std::string(RDMALAB_SOURCE_DIR) + "/" + file;
        if (std::getenv("RDMALAB_UPDATE_SCHEMAS")) std::ofstream(path) << schema;
        EXPECT_EQ(trace_records_text_of(path), schema)
            << path << " differs from its schema: RDMALAB_UPDATE_SCHEMAS=1 build/bin/unit_tests";
    }
}
