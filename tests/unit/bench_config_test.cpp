// rdma-bench configurations: the rules that refuse meaningless combinations, the JSON form a
// server receives (and must not trust), the control channel's hex, and pinned server knobs.
#include "rdmalab/bench/config.hpp"
#include "rdmalab/bench/control.hpp"
#include "rdmalab/bench/engine.hpp"
#include "rdmalab/bench/session.hpp"
#include "rdmalab/error.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

namespace rdmalab::bench {
namespace {

TEST(BenchConfig, DefaultsAreValid) {
    EXPECT_FALSE(BenchConfig{}.problem());
}

TEST(BenchConfig, RefusesOperationsATransportLacks) {
    BenchConfig c;
    c.transport = Transport::kUD;
    c.op = Op::kWrite;
    ASSERT_TRUE(c.problem());
    EXPECT_NE(c.problem()->find("UD carries only send"), std::string::npos);
    c.op = Op::kSend;
    c.size = 1024;
    EXPECT_FALSE(c.problem());
    c.transport = Transport::kUC;
    c.op = Op::kRead;
    EXPECT_TRUE(c.problem());
    c.op = Op::kFetchAdd;
    c.size = 8;
    EXPECT_TRUE(c.problem());
    c.op = Op::kWriteImm;
    EXPECT_FALSE(c.problem());
}

TEST(BenchConfig, AtomicsMoveEightBytesWithOneSge) {
    BenchConfig c;
    c.op = Op::kCompareSwap;
    c.size = 8;
    EXPECT_FALSE(c.problem());
    c.size = 16;
    EXPECT_TRUE(c.problem());
    c.size = 8;
    c.sge = 2;
    EXPECT_TRUE(c.problem());
    c.sge = 1;
    c.inline_size = 64;
    EXPECT_TRUE(c.problem());
}

TEST(BenchConfig, SignalIntervalAndPostListFitTheWindow) {
    BenchConfig c;
    c.window = 16;
    c.signal_every = 16;
    c.post_list = 16;
    EXPECT_FALSE(c.problem());
    c.signal_every = 17;
    ASSERT_TRUE(c.problem());
    EXPECT_NE(c.problem()->find("exceeds the window"), std::string::npos);
    c.signal_every = 1;
    c.post_list = 17;
    EXPECT_TRUE(c.problem());
}

TEST(BenchConfig, LatencyIsOneQpOneWrAndNoEventsForMemoryPolling) {
    BenchConfig c;
    c.mode = Mode::kLatency;
    c.window = 1;
    EXPECT_FALSE(c.problem());
    c.qps = 2;
    EXPECT_TRUE(c.problem());
    c.qps = 1;
    c.events = true;
    EXPECT_TRUE(c.problem());  // write latency polls memory
    c.op = Op::kSend;
    EXPECT_FALSE(c.problem());
    c.duration_s = 1;
    EXPECT_TRUE(c.problem());
}

TEST(BenchConfig, SrqNeedsAReceivingOperationAndSgesNeedBytes) {
    BenchConfig c;
    c.srq = true;
    EXPECT_TRUE(c.problem());
    c.op = Op::kSend;
    EXPECT_FALSE(c.problem());
    c.size = 2;
    c.sge = 3;
    EXPECT_TRUE(c.problem());
}

TEST(BenchConfig, UdSlotHasRoomForTheGrh) {
    BenchConfig c;
    c.op = Op::kSend;
    c.size = 512;
    EXPECT_EQ(c.slot_bytes(), 512u);
    c.transport = Transport::kUD;
    EXPECT_EQ(c.slot_bytes(), 552u);
}

// The CPU polls a write ping-pong's buffer: GPU memory on either side is refused, naming the
// side and what to use instead; completion-driven ping-pongs and every bandwidth run are fine.
TEST(BenchConfig, GpuMemoryLatencyWaitsOnCompletions) {
    using rdmalab::gpu::MemoryKind;
    BenchConfig c;
    c.mode = Mode::kLatency;
    c.window = 1;
    c.op = Op::kWrite;
    EXPECT_FALSE(memory_problem(c, MemoryKind::kHost, MemoryKind::kHost));
    auto why = memory_problem(c, MemoryKind::kHost, MemoryKind::kCuda);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("the server's buffer is cuda memory"), std::string::npos) << *why;
    EXPECT_NE(why->find("-o write-imm or send"), std::string::npos) << *why;
    why = memory_problem(c, MemoryKind::kRocm, MemoryKind::kHost);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("the client's buffer is rocm memory"), std::string::npos) << *why;
    for (Op op : {Op::kWriteImm, Op::kSend, Op::kRead, Op::kFetchAdd})
        EXPECT_FALSE(memory_problem(BenchConfig{.op = op, .mode = Mode::kLatency, .window = 1},
                                    MemoryKind::kCuda, MemoryKind::kRocm));
    EXPECT_FALSE(
        memory_problem(BenchConfig{}, MemoryKind::kCuda, MemoryKind::kCuda));  // write bandwidth
}

TEST(BenchConfig, JsonRoundTrip) {
    BenchConfig c;
    c.op = Op::kWriteImm;
    c.transport = Transport::kUC;
    c.size = 4096;
    c.window = 64;
    c.qps = 4;
    c.post_list = 8;
    c.signal_every = 16;
    c.inline_size = 0;
    c.sge = 2;
    c.shared_cq = true;
    c.events = true;
    c.iters = 777;
    c.warmup = 5;
    BenchConfig back = BenchConfig::from_json(c.to_json());
    EXPECT_EQ(back.to_json(), c.to_json());
}

TEST(BenchConfig, FromJsonRefusesWhatAPeerMustNotSend) {
    Record good = BenchConfig{}.to_json();
    Record missing = good;
    missing.erase("window");
    EXPECT_THROW(BenchConfig::from_json(missing), Error);
    Record wrong_type = good;
    wrong_type["size"] = "big";
    EXPECT_THROW(BenchConfig::from_json(wrong_type), Error);
    Record negative = good;
    negative["qps"] = -1;
    EXPECT_THROW(BenchConfig::from_json(negative), Error);
    Record unknown = good;
    unknown["op"] = "scatter";
    EXPECT_THROW(BenchConfig::from_json(unknown), Error);
    Record invalid = good;
    invalid["signal_every"] = 1000;  // over the window: refused by the same rules as locally
    EXPECT_THROW(BenchConfig::from_json(invalid), Error);
}

TEST(BenchConfig, FromJsonRefusesNumbersItWouldHaveToChange) {
    // Found by tests/fuzz: each was converted (2^32 + 128 wrapped to 128, 1.5 cut to 1, 1e30
    // undefined behaviour) and could pass the rules as another value.
    const Record good = BenchConfig{}.to_json();
    const std::vector<std::pair<const char*, Record>> changes = {
        {"window", 4294967424ull}, {"window", 1.5}, {"size", 1e30},
        {"warmup", 1e30},          {"qps", -1},     {"iters", 100.5}};
    for (const auto& [key, number] : changes) {
        Record changed = good;
        changed[key] = number;
        EXPECT_THROW(BenchConfig::from_json(changed), Error) << key << " = " << number;
    }
    Record whole = good;
    whole["duration_s"] = 2;  // an integer where a double belongs is a number all the same
    whole["iters"] = 0;
    EXPECT_EQ(BenchConfig::from_json(whole).duration_s, 2.0);
}

TEST(ControlMessage, LengthAndTextAreChecked) {
    const std::array<std::byte, 4> ok{std::byte{0}, std::byte{0}, std::byte{1}, std::byte{0}};
    EXPECT_EQ(decode_control_length(ok), 256u);
    EXPECT_THROW(decode_control_length(std::array<std::byte, 4>{}), Error);
    EXPECT_EQ(decode_control_message(R"({"type": "go"})")["type"], "go");
    EXPECT_THROW(decode_control_message("[1, 2]"), Error);
    EXPECT_THROW(decode_control_message("{"), Error);
    EXPECT_THROW(decode_control_message(R"({"error": "stop"})"), Error);
}

TEST(ControlMessage, RefusesJsonNestedTooDeep) {
    // Found by tests/fuzz: 50000 levels overflowed the stack while the message was parsed.
    const auto nested = [](int depth) {
        return R"({"type": "hello", "a": )" + std::string(depth, '[') + std::string(depth, ']') +
               R"(, "b": 1})";
    };
    EXPECT_NO_THROW(decode_control_message(nested(kMaxJsonDepth - 1)));
    EXPECT_THROW(decode_control_message(nested(kMaxJsonDepth)), Error);
    EXPECT_THROW(decode_control_message(nested(50000)), Error);
}

TEST(ControlMessage, FieldsAreTypeAndRangeChecked) {
    const Record message = {{"small", 7},      {"big", 4294967296ull}, {"negative", -1},
                            {"fraction", 1.5}, {"list", {1, 2, -3}},   {"text", "x"}};
    EXPECT_EQ(field<std::uint32_t>(message, "small"), 7u);
    EXPECT_EQ(field<std::uint64_t>(message, "big"), 4294967296ull);
    EXPECT_THROW(field<std::uint32_t>(message, "big"), Error);
    EXPECT_THROW(field<std::uint64_t>(message, "negative"), Error);
    EXPECT_THROW(field<std::uint64_t>(message, "fraction"), Error);
    EXPECT_EQ(field<double>(message, "small"), 7.0);
    EXPECT_THROW(field<std::vector<std::uint64_t>>(message, "list"), Error);
    EXPECT_THROW(field<std::string>(message, "small"), Error);
    EXPECT_THROW(field<bool>(message, "missing"), Error);
}

TEST(BenchConfig, NamesParse) {
    EXPECT_EQ(parse_op("cmp-swap"), Op::kCompareSwap);
    EXPECT_FALSE(parse_op("CAS"));
    EXPECT_EQ(parse_transport("ud"), Transport::kUD);
    EXPECT_EQ(parse_mode("latency"), Mode::kLatency);
    EXPECT_EQ(describe(BenchConfig{}), "write RC bw 65536 B window 128 qps 1");
}

TEST(ControlHex, RoundTripAndRefusals) {
    std::vector<std::byte> bytes{std::byte{0x00}, std::byte{0x7f}, std::byte{0xff},
                                 std::byte{0x10}};
    EXPECT_EQ(to_hex(bytes), "007fff10");
    EXPECT_EQ(from_hex("007fff10"), bytes);
    EXPECT_THROW(from_hex("abc"), Error);
    EXPECT_THROW(from_hex("zz"), Error);
    EXPECT_THROW(from_hex("AB"), Error);
}

TEST(PinnedKnobs, ServerSettingsMustContainTheClients) {
    BenchConfig c;
    c.size = 128;
    EXPECT_FALSE(pinned_mismatch(c, {}));
    EXPECT_FALSE(pinned_mismatch(c, {{"size", {"64", "128"}}, {"transport", {"RC"}}}));
    auto why = pinned_mismatch(c, {{"size", {"64"}}});
    ASSERT_TRUE(why);
    EXPECT_EQ(*why, "the client asks for size 128, but this server was started with size 64");
    c.srq = true;
    EXPECT_EQ(knob_text(c, "srq"), "on");
    EXPECT_TRUE(pinned_mismatch(c, {{"srq", {"off"}}}));
}

}  // namespace
}  // namespace rdmalab::bench
