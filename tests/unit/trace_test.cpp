// The program-trace encoding (common/src/trace.cpp): each event is one JSON object on one line
// with the fields ./rdmalab trace and the site's viewer read.
#include "rdmalab/trace.hpp"
#include "rdmalab/trace_event.hpp"

#include "rdmalab/codec.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

using nlohmann::json;
using namespace rdmalab;

TEST(Trace, PostSendOfAWriteCarriesItsWrFields) {
    ibv_sge sges[2] = {{.addr = 0x1000, .length = 4096, .lkey = 1},
                       {.addr = 0x3000, .length = 100, .lkey = 1}};
    ibv_send_wr wr{};
    wr.wr_id = 7;
    wr.sg_list = sges;
    wr.num_sge = 2;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = 0xabc000;
    wr.wr.rdma.rkey = 0x1234;
    const std::string line = trace::encode_post_send(42, "host2", 0x11, 0x12, wr);
    EXPECT_EQ(line.find('\n'), std::string::npos);
    json event = json::parse(line);
    EXPECT_EQ(event["t_ns"], 42);
    EXPECT_EQ(event["host"], "host2");
    EXPECT_EQ(event["event"], "post_send");
    EXPECT_EQ(event["qp_num"], 0x11);
    EXPECT_EQ(event["dest_qp"], 0x12);
    EXPECT_EQ(event["wr_id"], 7);
    EXPECT_EQ(event["opcode"], "RDMA_WRITE");
    EXPECT_EQ(event["length"], 4196);
    EXPECT_EQ(event["signaled"], true);
    EXPECT_EQ(event["inline"], false);
    EXPECT_EQ(event["remote_addr"], "0xabc000");
    EXPECT_EQ(event["rkey"], "0x1234");
    EXPECT_FALSE(event.contains("imm"));
}

TEST(Trace, ImmediateDataIsShownInHostOrder) {
    ibv_send_wr wr{};
    wr.opcode = IBV_WR_SEND_WITH_IMM;
    wr.send_flags = IBV_SEND_INLINE;
    wr.imm_data = rdmalab::to_be32(0xcafe);
    json event = json::parse(trace::encode_post_send(1, "h", 1, 2, wr));
    EXPECT_EQ(event["opcode"], "SEND_WITH_IMM");
    EXPECT_EQ(event["imm"], "0xcafe");
    EXPECT_EQ(event["signaled"], false);
    EXPECT_EQ(event["inline"], true);
    EXPECT_EQ(event["length"], 0);
}

TEST(Trace, SuccessfulCompletionHasOpcodeAndLength) {
    ibv_wc wc{};
    wc.wr_id = 3;
    wc.status = IBV_WC_SUCCESS;
    wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
    wc.byte_len = 4;
    wc.qp_num = 0x19;
    wc.wc_flags = IBV_WC_WITH_IMM;
    wc.imm_data = rdmalab::to_be32(5);
    json event = json::parse(trace::encode_completion(9, "host1", wc));
    EXPECT_EQ(event["event"], "completion");
    EXPECT_EQ(event["ok"], true);
    EXPECT_EQ(event["status"], "IBV_WC_SUCCESS");
    EXPECT_EQ(event["opcode"], "RECV_RDMA_WITH_IMM");
    EXPECT_EQ(event["byte_len"], 4);
    EXPECT_EQ(event["qp_num"], 0x19);
    EXPECT_EQ(event["imm"], "0x5");
}

TEST(Trace, FailedCompletionCarriesOnlyWhatIsDefined) {
    ibv_wc wc{};
    wc.wr_id = 1;
    wc.status = IBV_WC_RETRY_EXC_ERR;
    wc.opcode = IBV_WC_RDMA_WRITE;  // undefined for a failed completion: not reported
    json event = json::parse(trace::encode_completion(9, "host1", wc));
    EXPECT_EQ(event["ok"], false);
    EXPECT_EQ(event["status"], "IBV_WC_RETRY_EXC_ERR");
    EXPECT_FALSE(event.contains("opcode"));
    EXPECT_FALSE(event.contains("byte_len"));
}

TEST(Trace, StepsCmEventsTransitionsAndHeader) {
    json step = json::parse(trace::encode_step(1, "host1", "server verified \"65536\" bytes"));
    EXPECT_EQ(step["text"], "server verified \"65536\" bytes");
    json cm = json::parse(trace::encode_cm_event(2, "host1", "RDMA_CM_EVENT_ESTABLISHED", 0));
    EXPECT_EQ(cm["event"], "cm_event");
    EXPECT_EQ(cm["name"], "RDMA_CM_EVENT_ESTABLISHED");
    json modify = json::parse(trace::encode_modify_qp(3, "host1", 0x11, "INIT", "RTR"));
    EXPECT_EQ(modify["from"], "INIT");
    EXPECT_EQ(modify["to"], "RTR");
    json header = json::parse(trace::encode_header(4, "host1", 99));
    EXPECT_EQ(header["format"], "rdmalab-program-trace");
    EXPECT_EQ(header["version"], trace::kFormatVersion);
    EXPECT_EQ(header["clock"], "CLOCK_REALTIME");
}

TEST(Trace, OffByDefaultAndAnUnwritableFileIsRefused) {
    EXPECT_FALSE(trace::enabled());
    EXPECT_ANY_THROW(trace::open("/nonexistent-folder/trace.jsonl"));
    EXPECT_FALSE(trace::enabled());
}
