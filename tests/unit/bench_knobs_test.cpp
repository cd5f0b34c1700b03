// Unit tests for rdma-bench's knobs (the command line's text → the configurations a client runs,
// and what a server pins) and for `rdma-bench plot`'s reading of record files.
#include "rdmalab/bench/knobs.hpp"
#include "rdmalab/bench/plot.hpp"
#include "rdmalab/error.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace rdmalab::bench;

TEST(ExpandKnobs, PerftestDefaultsWhenNoSizeIsGiven) {
    KnobTexts k;
    k.op = "write,fetch-add";
    k.mode = "bw,lat";
    k.window = "256";
    auto configs = expand_knobs(k, false);
    // Mode varies slowest, then op: bw write, bw fetch-add, lat write, lat fetch-add.
    ASSERT_EQ(configs.size(), 4u);
    EXPECT_EQ(configs[0].size, 65536u);
    EXPECT_EQ(configs[0].signal_every, 100u);  // min(100, window)
    EXPECT_EQ(configs[0].iters, 5000u);
    EXPECT_EQ(configs[1].size, 8u);  // atomics move 8 bytes
    EXPECT_EQ(configs[2].size, 2u);  // latency: 2 bytes, one WR in flight, every WR signaled
    EXPECT_EQ(configs[2].window, 1u);
    EXPECT_EQ(configs[2].signal_every, 1u);
    EXPECT_EQ(configs[2].iters, 1000u);
}

TEST(ExpandKnobs, SizesVaryFastestAndRangesDouble) {
    KnobTexts k;
    k.size = "32..128";
    k.window = "4,128";
    k.signal_every = "2";
    auto configs = expand_knobs(k, true);
    ASSERT_EQ(configs.size(), 6u);
    const std::uint64_t sizes[] = {32, 64, 128, 32, 64, 128};
    for (std::size_t i = 0; i < configs.size(); ++i) {
        EXPECT_EQ(configs[i].size, sizes[i]);
        EXPECT_EQ(configs[i].window, i < 3 ? 4u : 128u);
        EXPECT_EQ(configs[i].signal_every, 2u);
    }
}

TEST(ExpandKnobs, AtomicsSharingARunKeepEightBytes) {
    KnobTexts k;
    k.op = "write,cmp-swap";
    k.size = "4K";
    auto configs = expand_knobs(k, true);
    ASSERT_EQ(configs.size(), 2u);
    EXPECT_EQ(configs[0].size, 4096u);
    EXPECT_EQ(configs[1].size, 8u);
}

TEST(ExpandKnobs, RefusesWhatCanNeverRunNamingTheKnob) {
    auto refused = [](KnobTexts k, const std::string& expected) {
        try {
            expand_knobs(k, !k.size.empty());
            ADD_FAILURE() << "accepted, expected: " << expected;
        } catch (const rdmalab::Error& e) {
            EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
        }
    };
    KnobTexts k;
    k.op = "write,teleport";
    refused(k, "--op: unknown 'teleport'");
    k = {};
    k.window = "0";
    refused(k, "-t");
    k = {};
    k.srq = "maybe";
    refused(k, "--srq: 'maybe' is not on or off");
    k = {};
    k.op = "read";
    k.transport = "UD";
    refused(k, "read");  // UD has no RDMA READ: BenchConfig::problem names it
    k = {};
    k.op = "fetch-add";
    k.size = "64";
    refused(k, "fetch-add");
}

TEST(PinnedKnobs, OnlyTheGivenKnobsAsText) {
    KnobTexts k;
    k.op = "write,send";
    k.transport = "rc";
    k.size = "4K";
    k.use_srq = true;
    auto pinned = pinned_knobs(k, {"op", "transport", "size", "srq"});
    ASSERT_EQ(pinned.size(), 4u);
    EXPECT_EQ(pinned["op"], (std::vector<std::string>{"write", "send"}));
    EXPECT_EQ(pinned["transport"], (std::vector<std::string>{"RC"}));
    EXPECT_EQ(pinned["size"], (std::vector<std::string>{"4096"}));
    EXPECT_EQ(pinned["srq"], (std::vector<std::string>{"on"}));
    EXPECT_TRUE(pinned_knobs(k, {}).empty());
    k.shared_cq = "sometimes";
    EXPECT_THROW(pinned_knobs(k, {"shared_cq"}), rdmalab::Error);
}

TEST(SplitList, KeepsEmptyItems) {
    EXPECT_EQ(split_list("a,b"), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(split_list("a,"), (std::vector<std::string>{"a", ""}));
}

TEST(PlotFiles, DrawsTheRecordsAndRefusesAnUnknownMeasure) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("rdmalab-plot-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string input = (dir / "records.json").string();
    // Two WRITE records as rdma-bench writes them (records/bench.hpp), sizes 64 and 128.
    std::vector<Record> written;
    for (const std::uint64_t size : {64, 128}) {
        rdmalab::records::BenchRecord r;
        r.tool = "rdma-bench 0.1";
        r.config = {.op = "write", .transport = "RC", .mode = "bw", .size = size, .memory = "host"};
        r.result.throughput = rdmalab::records::BenchThroughput{.gib_per_s = size / 128.0};
        r.environment = {.host = "h", .kernel = "k", .date = "d", .tool_version = r.tool};
        r.environment.provider = "rxe";
        r.environment.device = "rxe0";
        r.environment.lab = "guest";
        written.push_back(rdmalab::records::to_json(r));
    }
    std::ofstream(input) << to_json(written);
    PlotOptions p;
    p.inputs = {input};
    p.output = (dir / "out.svg").string();
    testing::internal::CaptureStdout();
    plot_files(p, "rdma-bench test");
    EXPECT_NE(testing::internal::GetCapturedStdout().find("1 series, 2 records"),
              std::string::npos);
    std::stringstream svg;
    svg << std::ifstream(p.output).rdbuf();
    EXPECT_NE(svg.str().find("Soft-RoCE"), std::string::npos);  // rxe is labelled as software
    EXPECT_NE(svg.str().find("rdma-bench test"), std::string::npos);
    p.y = "speed";
    EXPECT_THROW(plot_files(p, "x"), rdmalab::Error);
    std::filesystem::remove_all(dir);
}
