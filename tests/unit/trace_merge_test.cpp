// The timeline merge (trace/merge.cpp): clock alignment, WR ↔ packet links and the causal
// checks, on a small made-up WRITE run whose numbers are easy to follow; and bad input.
#include "merge.hpp"
#include "story.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

using nlohmann::json;
using namespace rdmalab::trace_merge;

namespace {

constexpr const char* kHeader =
    R"({"t_ns":0,"host":"h","event":"trace_start","format":"rdmalab-program-trace","version":1})";
constexpr std::int64_t kSkewUs = 1'000'000;  // host2's clock runs 1 s ahead of host1's

std::string epoch(std::int64_t us) {
    return std::to_string(1'700'000'000 + us / 1'000'000) + "." +
           std::to_string(1'000'000 + us % 1'000'000).substr(1) + "000";
}

// One packet record (wire/packet.hpp) as a host's capture saw it; name: the opcode's, checked.
rdmalab::wire::Packet packet(const char* src, const char* dst, int opcode, const char* name,
                             int psn, std::int64_t us, bool again = false, int syndrome = 31) {
    rdmalab::wire::Packet p;
    p.src = src;
    p.dst = dst;
    p.opcode = static_cast<std::uint8_t>(opcode);
    p.qpn = 0x11;
    p.psn = static_cast<std::uint32_t>(psn);
    p.sent_again = again;
    p.time_epoch = epoch(us);
    if (opcode == 17)
        p.aeth = rdmalab::wire::Aeth{.syndrome = static_cast<std::uint8_t>(syndrome), .msn = 1};
    EXPECT_EQ(p.opcode_name(), name);
    return p;
}

std::string event(std::int64_t us, const std::string& fields) {
    return R"({"t_ns":)" + std::to_string((1'700'000'000'000'000 + us) * 1000) + R"(,"host":"h",)" +
           fields + "}";
}

constexpr const char* kH1 = "198.51.100.1";
constexpr const char* kH2 = "198.51.100.2";

// A 3-packet WRITE and a SEND "done", as each host's capture saw them (µs, host1's clock;
// host2's own stamps are kSkewUs later). lose_first: the WRITE's First packet is dropped on its
// way out before the sender's capture sees it (as netem does); the responder NAKs PSN 100 and
// the requester goes back to it (go-back-N), the First's only copy in the captures coming last.
struct WriteRun {
    std::int64_t write_completion_us = 1050;
    bool lose_first = false;
    bool unsignaled_write = false;  // the WRITE unsignaled, with the SEND's wr_id (2)

    std::vector<HostInput> hosts() const {
        const std::int64_t s = kSkewUs;
        struct Wire {
            const char* src;
            const char* dst;
            int op;
            const char* name;
            int psn;
            std::int64_t tx, rx;
            bool again = false;
            int syndrome = 31;
        };
        std::vector<Wire> wire = {{kH2, kH1, 6, "RDMA WRITE First", 100, 1010, 1020},
                                  {kH2, kH1, 7, "RDMA WRITE Middle", 101, 1011, 1021},
                                  {kH2, kH1, 8, "RDMA WRITE Last", 102, 1012, 1022},
                                  {kH1, kH2, 17, "Acknowledge", 102, 1030, 1040}};
        if (lose_first)
            wire = {{kH2, kH1, 7, "RDMA WRITE Middle", 101, 1011, 1021},
                    {kH2, kH1, 8, "RDMA WRITE Last", 102, 1012, 1022},
                    {kH1, kH2, 17, "Acknowledge", 100, 1023, 1026, false, 96},  // NAK: PSN error
                    {kH2, kH1, 6, "RDMA WRITE First", 100, 1027, 1028},
                    {kH2, kH1, 7, "RDMA WRITE Middle", 101, 1029, 1030, true},
                    {kH2, kH1, 8, "RDMA WRITE Last", 102, 1031, 1032, true},
                    {kH1, kH2, 17, "Acknowledge", 102, 1035, 1040}};
        wire.push_back({kH2, kH1, 4, "SEND Only", 103, 1061, 1071});
        wire.push_back({kH1, kH2, 17, "Acknowledge", 103, 1080, 1090});
        std::vector<rdmalab::wire::Packet> seen1, seen2;
        for (const auto& w : wire) {
            const bool from2 = std::string(w.src) == kH2;
            seen1.push_back(packet(w.src, w.dst, w.op, w.name, w.psn, from2 ? w.rx : w.tx, w.again,
                                   w.syndrome));
            seen2.push_back(packet(w.src, w.dst, w.op, w.name, w.psn, (from2 ? w.tx : w.rx) + s,
                                   w.again, w.syndrome));
        }
        std::string events1 = std::string(kHeader) + "\n" +
                              event(500, R"("event":"post_recv","qp_num":17,"wr_id":1)") + "\n" +
                              event(1075, R"("event":"completion","qp_num":17,"wr_id":1,)"
                                          R"("ok":true,"opcode":"RECV","byte_len":4)") +
                              "\n";
        std::string events2 =
            std::string(kHeader) + "\n" +
            (unsignaled_write
                 ? event(1000 + s, R"("event":"post_send","qp_num":17,"dest_qp":17,"wr_id":2,)"
                                   R"("signaled":false,"opcode":"RDMA_WRITE","length":3000)") +
                       "\n"
                 : event(1000 + s, R"("event":"post_send","qp_num":17,"dest_qp":17,"wr_id":1,)"
                                   R"("opcode":"RDMA_WRITE","length":3000)") +
                       "\n" +
                       event(write_completion_us + s,
                             R"("event":"completion","qp_num":17,"wr_id":1,"ok":true,)"
                             R"("opcode":"RDMA_WRITE")") +
                       "\n") +
            event(1060 + s, R"("event":"post_send","qp_num":17,"dest_qp":17,"wr_id":2,)"
                            R"("opcode":"SEND","length":4)") +
            "\n" +
            event(1095 + s,
                  R"("event":"completion","qp_num":17,"wr_id":2,"ok":true,"opcode":"SEND")") +
            "\n";
        return {{"host1", kH1, parse_events(events1, "h1"),
                 parse_packets(rdmalab::wire::write_document(seen1), "p1")},
                {"host2", kH2, parse_events(events2, "h2"),
                 parse_packets(rdmalab::wire::write_document(seen2), "p2")}};
    }
};

// A merge's result as its file has it, and whether its checks passed.
json merged_json(const std::vector<HostInput>& hosts, const TraceMeta& meta = {}) {
    return to_json(merge(hosts, meta));
}
bool checks_pass(const json& merged, std::vector<std::string>& failures) {
    return rdmalab::trace_merge::checks_pass(read_trace(merged.dump(), "merged"), failures);
}

// The merged post_send event of wr_id, or nullptr.
const json* find_post(const json& merged, std::uint64_t wr_id) {
    const json* found = nullptr;
    for (const auto& e : merged["events"])
        if (e["event"] == "post_send" && e["wr_id"] == wr_id) found = &e;
    return found;
}

}  // namespace

TEST(TraceMerge, AlignsTheClocksAndLinksWrsToPackets) {
    json merged = merged_json(WriteRun{}.hosts(), {.lesson = "rdma-write"});
    EXPECT_EQ(merged["format"], "rdmalab-trace");
    EXPECT_EQ(merged["version"], 2);
    EXPECT_EQ(merged["packet_schema_version"], rdmalab::wire::kSchemaVersion);
    EXPECT_EQ(merged["clock"]["offsets_ns"]["host2"], kSkewUs * 1000);
    ASSERT_EQ(merged["packets"].size(), 6u);
    std::vector<std::string> failures;
    EXPECT_TRUE(checks_pass(merged, failures)) << (failures.empty() ? "" : failures[0]);
    // The WRITE's post owns the three WRITE packets, and the first ACK completes it.
    const json* write = find_post(merged, 1);
    ASSERT_NE(write, nullptr);
    ASSERT_EQ((*write)["packets"].size(), 3u);
    const json& ack = merged["packets"][(*write)["acked_by"].get<std::size_t>()];
    EXPECT_EQ(ack["opcode_name"], "Acknowledge");
    EXPECT_EQ(ack["psn"], 102);
    EXPECT_EQ(ack["rx_ns"].get<std::int64_t>() - ack["tx_ns"].get<std::int64_t>(), 10'000);
    // The timeline is in time order and holds every event and each packet twice.
    const json& timeline = merged["timeline"];
    EXPECT_EQ(timeline.size(), merged["events"].size() + 2 * merged["packets"].size());
    for (std::size_t i = 1; i < timeline.size(); ++i)
        EXPECT_LE(timeline[i - 1]["t_ns"], timeline[i]["t_ns"]);
}

TEST(TraceMerge, ACompletionBeforeItsAckFailsTheCheck) {
    WriteRun run;
    run.write_completion_us = 1035;  // the ACK arrives at 1040
    json merged = merged_json(run.hosts());
    std::vector<std::string> failures;
    EXPECT_FALSE(checks_pass(merged, failures));
    ASSERT_EQ(failures.size(), 1u);
    EXPECT_NE(failures[0].find("before the ACK"), std::string::npos) << failures[0];
}

TEST(TraceMerge, APacketLostBeforeTheCaptureStillBelongsToItsWr) {
    WriteRun run;
    run.lose_first = true;
    json merged = merged_json(run.hosts());
    std::vector<std::string> failures;
    EXPECT_TRUE(checks_pass(merged, failures)) << (failures.empty() ? "" : failures[0]);
    const json* write = find_post(merged, 1);
    ASSERT_NE(write, nullptr);
    // Its packets in PSN order, each PSN's first copy: First (the resend), Middle, Last.
    ASSERT_EQ((*write)["packets"].size(), 3u);
    const json& packets = merged["packets"];
    EXPECT_EQ(packets[(*write)["packets"][0].get<std::size_t>()]["psn"], 100);
    EXPECT_EQ(packets[(*write)["packets"][2].get<std::size_t>()]["psn"], 102);
    // Completed by the positive ACK, not the NAK; the copies sent again are its too.
    const json& ack = packets[(*write)["acked_by"].get<std::size_t>()];
    EXPECT_EQ(ack["aeth"]["syndrome"], 31);
    int again = 0;
    for (const auto& p : packets)
        if (p["sent_again"] == true && p.contains("wr") && p["wr"] == (*write)["id"]) ++again;
    EXPECT_EQ(again, 2);
}

TEST(TraceMerge, AnUnsignaledWrGetsNoSuccessfulCompletion) {
    WriteRun run;
    run.unsignaled_write = true;
    json merged = merged_json(run.hosts());
    std::vector<std::string> failures;
    EXPECT_TRUE(checks_pass(merged, failures)) << (failures.empty() ? "" : failures[0]);
    for (const auto& e : merged["events"]) {
        if (e["event"] != "post_send") continue;
        if (e["opcode"] == "RDMA_WRITE") {
            EXPECT_FALSE(e.contains("completion"));
        } else if (e["opcode"] == "SEND") {
            EXPECT_TRUE(e.contains("completion"));
        }
    }
}

// Three hosts, each with its own clock (host2 1 s ahead of host1, host3 3 s ahead), and a run
// given as one list of exchanges on host1's clock: each a request (WRITE Only or SEND Only) and
// the ACK that answers it.
struct ThreeHostRun {
    struct Exchange {
        int from, to;           // hosts 1..3
        int local_qp, peer_qp;  // the requester's QP, the responder's
        int opcode;             // 10: WRITE Only, 4: SEND Only
        const char* name;
        int psn;
        std::int64_t posted_us;  // the request leaves 10 µs later, arrives 10 µs after that;
                                 // its ACK leaves 10 µs after that, arrives 10 µs later
    };
    std::vector<Exchange> exchanges;

    std::vector<HostInput> hosts() const {
        const char* address[] = {"", kH1, kH2, "198.51.100.3"};
        const std::int64_t skew_us[] = {0, 0, kSkewUs, 3 * kSkewUs};
        std::vector<rdmalab::wire::Packet> seen[4];
        std::string events[4];
        for (int h = 1; h <= 3; ++h) events[h] = std::string(kHeader) + "\n";
        auto capture = [&](int src, int dst, int opcode, const char* name, int qpn, int psn,
                           std::int64_t tx, std::int64_t rx) {
            for (const auto& [h, at] : {std::pair{src, tx}, std::pair{dst, rx}}) {
                auto p = packet(address[src], address[dst], opcode, name, psn, at + skew_us[h]);
                p.qpn = static_cast<std::uint32_t>(qpn);
                seen[h].push_back(p);
            }
        };
        for (const auto& x : exchanges) {
            const std::string wr = std::to_string(x.psn);
            events[x.from] +=
                event(x.posted_us + skew_us[x.from],
                      R"("event":"post_send","qp_num":)" + std::to_string(x.local_qp) +
                          R"(,"dest_qp":)" + std::to_string(x.peer_qp) + R"(,"wr_id":)" + wr +
                          R"(,"opcode":")" + (x.opcode == 10 ? "RDMA_WRITE" : "SEND") +
                          R"(","length":8)") +
                "\n";
            capture(x.from, x.to, x.opcode, x.name, x.peer_qp, x.psn, x.posted_us + 10,
                    x.posted_us + 20);
            capture(x.to, x.from, 17, "Acknowledge", x.local_qp, x.psn, x.posted_us + 30,
                    x.posted_us + 40);
            events[x.from] +=
                event(x.posted_us + 45 + skew_us[x.from],
                      R"("event":"completion","qp_num":)" + std::to_string(x.local_qp) +
                          R"(,"wr_id":)" + wr + R"(,"ok":true,"opcode":")" +
                          (x.opcode == 10 ? "RDMA_WRITE" : "SEND") + R"(")") +
                "\n";
        }
        std::vector<HostInput> hosts;
        for (int h = 1; h <= 3; ++h)
            hosts.push_back({"host" + std::to_string(h), address[h],
                             parse_events(events[h], "h" + std::to_string(h)),
                             parse_packets(rdmalab::wire::write_document(seen[h]), "p")});
        return hosts;
    }
};

TEST(TraceMerge, ThreeHostsAHostThatNeverTalksToTheReferenceIsPlacedThroughOneThatDoes) {
    // host1 ↔ host2 and host2 ↔ host3 only, as ranks 0 and 2 of a ring of four never meet.
    const ThreeHostRun run{{{1, 2, 17, 18, 10, "RDMA WRITE Only", 100, 1000},
                            {2, 3, 17, 18, 10, "RDMA WRITE Only", 200, 1100}}};
    json merged = merged_json(run.hosts());
    EXPECT_EQ(merged["clock"]["offsets_ns"]["host2"], kSkewUs * 1000);
    EXPECT_EQ(merged["clock"]["offsets_ns"]["host3"], 3 * kSkewUs * 1000);
    EXPECT_TRUE(merged["clock"]["unaligned"].empty());
    std::vector<std::string> failures;
    EXPECT_TRUE(checks_pass(merged, failures)) << (failures.empty() ? "" : failures[0]);
    for (std::uint64_t wr : {100, 200}) {
        const json* post = find_post(merged, wr);
        ASSERT_NE(post, nullptr);
        EXPECT_TRUE(post->contains("acked_by")) << wr;
        EXPECT_TRUE(post->contains("completion")) << wr;
    }
}

TEST(TraceMerge, ThreeHostsTwoPeersWithTheSameQpNumberAreNotConfused) {
    // QP numbers are per host: host1's QP 17 writes to host2's QP 18 while its QP 19 sends to
    // host3's QP 18, interleaved. Each WR owns its own packet, and no host is left unaligned.
    const ThreeHostRun run{{{1, 2, 17, 18, 10, "RDMA WRITE Only", 100, 1000},
                            {1, 3, 19, 18, 4, "SEND Only", 300, 1005},
                            {1, 2, 17, 18, 10, "RDMA WRITE Only", 101, 1100},
                            {1, 3, 19, 18, 4, "SEND Only", 301, 1105}}};
    json merged = merged_json(run.hosts());
    std::vector<std::string> failures;
    EXPECT_TRUE(checks_pass(merged, failures)) << (failures.empty() ? "" : failures[0]);
    EXPECT_TRUE(merged["clock"]["unaligned"].empty());
    for (std::uint64_t wr : {100, 101, 300, 301}) {
        const json* post = find_post(merged, wr);
        ASSERT_NE(post, nullptr);
        ASSERT_TRUE(post->contains("packets")) << wr;
        ASSERT_EQ((*post)["packets"].size(), 1u) << wr;
        const json& sent = merged["packets"][(*post)["packets"][0].get<std::size_t>()];
        EXPECT_EQ(sent["psn"], wr);
        EXPECT_EQ(sent["to"], wr < 300 ? "host2" : "host3");
        ASSERT_TRUE(post->contains("acked_by")) << wr;
        EXPECT_EQ(merged["packets"][(*post)["acked_by"].get<std::size_t>()]["psn"], wr);
    }
}

TEST(TraceMerge, BadInputIsOneClearError) {
    EXPECT_THROW(parse_events("", "a"), InputError);
    EXPECT_THROW(parse_events("{\"format\":\"something-else\"}\n", "a"), InputError);
    EXPECT_THROW(parse_events(std::string(kHeader) + "\nnot json\n", "a"), InputError);
    EXPECT_THROW(parse_packets("{}", "p"), InputError);
    EXPECT_THROW(parse_packets(R"([{"src":"a"}])", "p"),
                 InputError);  // lab/wire.sh's old array
    auto packets = std::vector{packet(kH1, kH2, 4, "SEND Only", 1, 0)};
    EXPECT_NO_THROW(parse_packets(rdmalab::wire::write_document(packets), "p"));
    packets[0].time_epoch = "yesterday";
    EXPECT_THROW(parse_packets(rdmalab::wire::write_document(packets), "p"), InputError);
    json document = json::parse(rdmalab::wire::write_document(packets));
    document["packets"][0].erase("time_epoch");
    EXPECT_THROW(parse_packets(document.dump(), "p"), InputError);
    try {
        parse_events("[1,2]\n", "mine.jsonl");
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("mine.jsonl"), std::string::npos);
    }
}

// The story (trace/story.hpp): what tests/vm/trace.sh matches, read from a merged trace, and the
// run's meta written from trace-merge's options.
TEST(TraceStory, SaysWhoPostedWhatAndWhatCompletedIt) {
    const RunMeta run{.lesson = "rdma-write",
                      .arguments = "-s 4K -- -s 4K",
                      .ranks = 0,
                      .host_count = 2,
                      .environment = {{"faults", "host 2 egress loss 30%"}, {"commit", "abc"}}};
    const TraceMeta meta = trace_meta(run);
    EXPECT_EQ(meta.server, "host1");
    EXPECT_EQ(meta.environment->at("faults"), "host 2 egress loss 30%");
    const std::vector<std::string> lines = story_lines(merge(WriteRun{}.hosts(), meta));
    const auto has = [&lines](const std::string& line) {
        return std::find(lines.begin(), lines.end(), line) != lines.end();
    };
    EXPECT_TRUE(has("format\trdmalab-trace\t2\t1"));
    EXPECT_TRUE(has("host\thost1\tserver"));
    EXPECT_TRUE(has("host\thost2\tclient"));
    EXPECT_TRUE(has("environment\tfaults\thost 2 egress loss 30%"));
    EXPECT_TRUE(has("clock\t0\t0"));
    EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& line) {
        return line.starts_with("timeline\tordered\tcomplete\t");
    }));
    EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& line) {
        return line.starts_with("post\thost2\tRDMA_WRITE\t") &&
               line.ends_with("\thost1 Acknowledge\tok\tby-ack");
    })) << ::testing::PrintToString(lines);
}

TEST(TraceStory, RanksNameEachHostsRankAndAnythingElseIsRefused) {
    const TraceMeta meta = trace_meta({.lesson = "ring-allreduce",
                                       .arguments = "",
                                       .ranks = 3,
                                       .host_count = 3,
                                       .environment = {}});
    EXPECT_EQ(meta.roles->at("host2"), "rank 1");
    EXPECT_EQ(meta.ranks, 3);
    EXPECT_EQ(environment_pair("lab=two guests = one link"),
              (std::pair<std::string, std::string>{"lab", "two guests = one link"}));
    EXPECT_THROW(environment_pair("=x"), InputError);
    EXPECT_THROW(environment_pair("no pair"), InputError);
    EXPECT_THROW(read_trace(R"({"format": "rdmalab-packets"})", "x.json"), InputError);
}
