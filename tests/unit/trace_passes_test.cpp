// The merge's passes (trace/merge_passes.hpp), each on its own: made-up captures, clocks,
// packets and events small enough to follow by hand. trace_merge_test.cpp runs them together.
#include "merge_passes.hpp"
#include "rdmalab/records/trace_event.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

// In the namespace, not with a using-directive: one would reach the test files after this one
// in its unity batch (tests/CMakeLists.txt).
namespace rdmalab::trace_merge {
namespace {

using nlohmann::json;

constexpr const char* kPassesA = "198.51.100.1";
constexpr const char* kPassesB = "198.51.100.2";
constexpr const char* kPassesC = "198.51.100.3";

// A packet record: SRC → DST, its BTH opcode (17: an ACK, with syndrome), QP and PSN.
rdmalab::wire::Packet passes_packet(const char* src, const char* dst, int opcode, std::uint32_t qpn,
                                    std::uint32_t psn, bool again = false, int syndrome = 31) {
    rdmalab::wire::Packet p;
    p.src = src;
    p.dst = dst;
    p.opcode = static_cast<std::uint8_t>(opcode);
    p.qpn = qpn;
    p.psn = psn;
    p.sent_again = again;
    p.time_epoch = "1700000000.000000000";
    if (opcode % 32 == 17)
        p.aeth = rdmalab::wire::Aeth{.syndrome = static_cast<std::uint8_t>(syndrome), .msn = 1};
    return p;
}

// Links made up in place: the packets' records owned here (their addresses stay), each packet
// and event record with its id, as the output's would be.
struct PassesLinks {
    std::deque<rdmalab::wire::Packet> records;
    passes::Links links;

    std::size_t packet(rdmalab::wire::Packet p, std::optional<std::size_t> from,
                       std::optional<std::size_t> to, std::optional<std::int64_t> tx,
                       std::optional<std::int64_t> rx) {
        records.push_back(std::move(p));
        links.packets.push_back({&records.back(), tx, rx, from, to});
        links.packet_records.push_back({.packet = records.back(), .id = links.packets.size() - 1});
        return links.packets.size() - 1;
    }
    // fields: a line's, read through its type; host, t_ns and a WR's wr_id (0) where it has none.
    std::size_t event(std::size_t host, std::int64_t t, json fields) {
        const std::size_t id = links.events.size();
        if (!fields.contains("host")) fields["host"] = "h";
        if (!fields.contains("t_ns")) fields["t_ns"] = t;
        const bool wr = fields["event"] == "post_send" || fields["event"] == "post_recv" ||
                        fields["event"] == "completion";
        if (wr && !fields.contains("wr_id")) fields["wr_id"] = 0;
        const trace::Event event = records::trace_event_from_json(records::Json(fields), "made");
        links.events.push_back({event, host, t});
        links.event_records.push_back({.fields = event, .id = id});
        return id;
    }
    // The records as the file has them.
    json event_record(std::size_t id) const { return to_json(links.event_records[id]); }
    json packet_record(std::size_t id) const { return to_json(links.packet_records[id]); }
};

// A post_send of QP 17 to QP 5 (opcode: the WR's).
json passes_post(std::uint64_t wr_id, const char* opcode) {
    return {{"event", "post_send"}, {"qp_num", 17},     {"dest_qp", 5},
            {"wr_id", wr_id},       {"opcode", opcode}, {"length", 8192}};
}

// A step line at t (ns), its text.
trace::Event passes_step(std::int64_t t, const char* text) {
    return {.t_ns = t, .host = "h", .event = "step", .text = text};
}

}  // namespace

TEST(TracePasses, ParseEpochIsExactAndRefusesWhatIsNotATime) {
    EXPECT_EQ(passes::parse_epoch("1700000000.000000001", "f"), 1'700'000'000'000'000'001);
    EXPECT_EQ(passes::parse_epoch("1700000000.5", "f"), 1'700'000'000'500'000'000);
    EXPECT_EQ(passes::parse_epoch("12", "f"), 12'000'000'000);
    for (const char* bad : {"yesterday", "", ".5", "-1.0", "1.2.3", "123456789012.0"})
        EXPECT_THROW(passes::parse_epoch(bad, "f"), InputError) << bad;
    EXPECT_THROW(passes::parse_epoch("9999999999.0", "f"), InputError);  // past 2065
    try {
        passes::parse_epoch("noon", "mine.json");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("mine.json"), std::string::npos);
    }
}

TEST(TracePasses, IndexCapturesSplitsEachHostsCaptureIntoSentAndReceived) {
    auto a_to_b = passes_packet(kPassesA, kPassesB, 4, 5, 100);
    a_to_b.time_epoch = "1700000000.000001";
    auto b_to_a = passes_packet(kPassesB, kPassesA, 17, 17, 100);
    b_to_a.time_epoch = "1700000000.000003";
    const auto elsewhere = passes_packet(kPassesC, "198.51.100.9", 4, 5, 1);
    const std::vector<HostInput> hosts = {{"a", kPassesA, {}, {a_to_b, b_to_a, elsewhere}},
                                          {"b", kPassesB, {}, {a_to_b}}};
    const passes::Captures captures = passes::index_captures(hosts);
    EXPECT_EQ(captures.host_of_address.at(kPassesA), 0u);
    EXPECT_EQ(captures.host_of_address.at(kPassesB), 1u);
    const std::string key = passes::packet_key(a_to_b);
    EXPECT_EQ(key, "198.51.100.1>198.51.100.2:5:100:4");
    ASSERT_EQ(captures.sent.size(), 1u);
    ASSERT_EQ(captures.sent.at(key).size(), 1u);
    EXPECT_EQ(captures.sent.at(key)[0].packet, &hosts[0].packets[0]);  // host a's own copy
    EXPECT_EQ(captures.sent.at(key)[0].t, 1'700'000'000'000'001'000);
    ASSERT_EQ(captures.received.size(), 2u);  // host b's copy of a → b, host a's of b → a
    EXPECT_EQ(captures.received.at(key)[0].packet, &hosts[1].packets[0]);
    EXPECT_EQ(captures.received.at(passes::packet_key(b_to_a))[0].t, 1'700'000'000'000'003'000);
}

TEST(TracePasses, SmallestTransitsUsesPacketsSeenOnceOnEachSide) {
    const auto first = passes_packet(kPassesA, kPassesB, 4, 5, 1);
    const auto second = passes_packet(kPassesA, kPassesB, 4, 5, 2);
    const auto resent = passes_packet(kPassesA, kPassesB, 4, 5, 3);
    const auto back = passes_packet(kPassesB, kPassesA, 17, 17, 2);
    passes::Captures captures;
    captures.host_of_address = {{kPassesA, 0}, {kPassesB, 1}};
    auto add = [&](const rdmalab::wire::Packet& p, std::vector<std::int64_t> tx, std::int64_t rx) {
        for (std::int64_t t : tx) captures.sent[passes::packet_key(p)].push_back({&p, t});
        captures.received[passes::packet_key(p)].push_back({&p, rx});
    };
    add(first, {100}, 130);        // 30
    add(second, {200}, 220);       // 20: the smallest a → b
    add(resent, {300, 305}, 306);  // sent twice: not used
    add(back, {1000}, 1050);       // 50
    const passes::Transits transits = passes::smallest_transits(captures, 3);
    EXPECT_EQ(transits[0][1], 20);
    EXPECT_EQ(transits[1][0], 50);
    EXPECT_EQ(transits[0][2], passes::kNoTransit);
    EXPECT_EQ(transits[1][1], passes::kNoTransit);
}

TEST(TracePasses, PlaceClocksAddsOffsetsAlongPairsAndLeavesTheUnreachedUnplaced) {
    constexpr std::int64_t kNone = passes::kNoTransit;
    // Host 1 is 1000 ns ahead of host 0, host 2 500 ns ahead of host 1 (each way 10 ns of
    // delay), host 3 only ever heard from, never answering.
    const passes::Transits transits = {{kNone, 1010, kNone, 7},
                                       {-990, kNone, 510, kNone},
                                       {kNone, -490, kNone, kNone},
                                       {kNone, kNone, kNone, kNone}};
    const passes::Clocks clocks = passes::place_clocks(transits);
    EXPECT_EQ(clocks.offset, (std::vector<std::int64_t>{0, 1000, 1500, 0}));
    EXPECT_EQ(clocks.placed, (std::vector<std::size_t>{0, 1, 2}));
    EXPECT_EQ(clocks.aligned(2, 2000), 500);
}

TEST(TracePasses, ClockRecordNamesTheReferenceTheOffsetsAndTheUnaligned) {
    const std::vector<HostInput> hosts = {
        {"a", kPassesA, {}, {}}, {"b", kPassesB, {}, {}}, {"c", kPassesC, {}, {}}};
    const ClockRecord clock = passes::clock_record(hosts, {{0, 42, 0}, {0, 1}});
    EXPECT_EQ(clock.reference, "a");
    EXPECT_EQ(clock.offsets_ns, (std::map<std::string, std::int64_t>{{"b", 42}, {"c", 0}}));
    EXPECT_EQ(clock.unaligned, (std::vector<std::string>{"c"}));
    EXPECT_FALSE(clock.method.empty());
}

TEST(TracePasses, PairPacketsPairsEachArrivalWithTheLatestCopySentBeforeIt) {
    const auto write = passes_packet(kPassesA, kPassesB, 10, 5, 7);
    const auto stranger = passes_packet(kPassesC, kPassesB, 4, 5, 1);  // no host sent it
    passes::Captures captures;
    captures.host_of_address = {{kPassesA, 0}, {kPassesB, 1}};
    const std::string key = passes::packet_key(write);
    // Sent at 100 (lost) and again at 200, arrived at 1250 on b's clock (1000 ahead): 250.
    captures.sent[key] = {{&write, 100}, {&write, 200}};
    captures.received[key] = {{&write, 1250}};
    captures.received[passes::packet_key(stranger)] = {{&stranger, 1150}};
    const passes::Clocks clocks{{0, 1000}, {0, 1}};
    const auto packets = passes::pair_packets(captures, clocks);
    ASSERT_EQ(packets.size(), 3u);
    // In time order: the lost copy (100), the stranger (arrived 150), the paired copy (200).
    EXPECT_EQ(packets[0].tx, 100);
    EXPECT_EQ(packets[0].rx, std::nullopt);
    EXPECT_EQ(packets[0].from, 0u);
    EXPECT_EQ(packets[0].to, 1u);
    EXPECT_EQ(packets[1].record, &stranger);
    EXPECT_EQ(packets[1].tx, std::nullopt);
    EXPECT_EQ(packets[1].rx, 150);
    EXPECT_EQ(packets[1].from, std::nullopt);
    EXPECT_EQ(packets[2].tx, 200);
    EXPECT_EQ(packets[2].rx, 250);
    EXPECT_FALSE(captures.sent.at(key)[0].used);  // the captures are left as they were
}

TEST(TracePasses, AlignEventsPutsEveryHostOnTheReferenceClockInTimeOrder) {
    const std::vector<HostInput> hosts = {
        {"a", kPassesA, {passes_step(300, "1"), passes_step(500, "2")}, {}},
        {"b", kPassesB, {passes_step(1300, "3"), passes_step(1100, "4")}, {}}};
    const auto events = passes::align_events(hosts, {{0, 1000}, {0, 1}});
    ASSERT_EQ(events.size(), 4u);
    std::vector<std::string> order;
    for (const auto& e : events) order.push_back(*e.fields.text);
    EXPECT_EQ(order, (std::vector<std::string>{"4", "1", "3",
                                               "2"}));  // a's 300 before b's 300: hosts in order
    EXPECT_EQ(events[0].t, 100);
    EXPECT_EQ(events[0].host, 1u);
}

TEST(TracePasses, EarliestIsTheFirstTimeOfAnyEventOrPacket) {
    const auto p = passes_packet(kPassesA, kPassesB, 4, 5, 1);
    const std::vector<passes::AlignedEvent> events = {{passes_step(50, "x"), 0, 50}};
    EXPECT_EQ(passes::earliest(events, {{&p, std::nullopt, 40, 0, 1}}), 40);
    EXPECT_EQ(passes::earliest(events, {{&p, 60, 30, 0, 1}}), 50);  // a packet by its departure
    EXPECT_EQ(passes::earliest({}, {}), std::numeric_limits<std::int64_t>::max());
}

TEST(TracePasses, RecordsCountFromT0AndNameTheHosts) {
    const std::vector<HostInput> hosts = {{"a", kPassesA, {}, {}}, {"b", kPassesB, {}, {}}};
    const auto sent = passes_packet(kPassesA, kPassesB, 4, 5, 1);
    const auto stranger = passes_packet(kPassesC, kPassesB, 4, 5, 2);
    json packets = json::array();
    for (const PacketRecord& record : passes::packet_records(
             hosts, {{&sent, 1100, std::nullopt, 0, 1}, {&stranger, std::nullopt, 1200, {}, 1}},
             1000))
        packets.push_back(to_json(record));
    ASSERT_EQ(packets.size(), 2u);
    EXPECT_EQ(packets[0]["id"], 0);
    EXPECT_EQ(packets[0]["from"], "a");
    EXPECT_EQ(packets[0]["to"], "b");
    EXPECT_EQ(packets[0]["tx_ns"], 100);
    EXPECT_TRUE(packets[0]["rx_ns"].is_null());
    EXPECT_EQ(packets[0]["lost"], true);  // sent to a host whose capture never saw it
    EXPECT_EQ(packets[0]["psn"], 1);      // the packet record's own fields
    EXPECT_EQ(packets[1]["from"], kPassesC);
    EXPECT_EQ(packets[1]["rx_ns"], 200);
    EXPECT_EQ(packets[1]["lost"], false);
    const std::vector<EventRecord> events =
        passes::event_records(hosts, {{passes_step(5, "x"), 1, 1500}}, 1000);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(to_json(events[0]),
              (json{{"event", "step"}, {"host", "b"}, {"id", 0}, {"t_ns", 500}, {"text", "x"}}));
}

TEST(TracePasses, QpPeersNamesEachQpsPeerOrSeveral) {
    PassesLinks made;
    made.packet(passes_packet(kPassesB, kPassesA, 17, 17, 1), 1, 0, 10, 20);
    made.packet(passes_packet(kPassesB, kPassesA, 4, 18, 1), 1, 0, 10, 20);
    made.packet(passes_packet(kPassesC, kPassesA, 4, 18, 1), 2, 0, 10, 20);  // UD: two peers
    made.packet(passes_packet(kPassesA, kPassesB, 4, 19, 1), 0, 1, 10, 20);  // to b, not a
    const passes::QpPeers peers = passes::qp_peers(made.links.packets, 0);
    EXPECT_EQ(peers, (passes::QpPeers{{17, 1}, {18, passes::kSeveralPeers}}));
    const auto& to_b = made.links.packets[3];
    EXPECT_TRUE(passes::goes_to_peer(peers, 17, to_b));
    EXPECT_TRUE(passes::goes_to_peer(peers, 18, to_b));  // several: no filter
    EXPECT_TRUE(passes::goes_to_peer(peers, 20, to_b));  // unknown: no filter
    EXPECT_FALSE(passes::goes_to_peer(passes::QpPeers{{17, 2}}, 17, to_b));
}

TEST(TracePasses, HostQpsSortsAHostsEventsByQp) {
    PassesLinks made;
    const std::size_t post = made.event(0, 10, passes_post(1, "SEND"));
    made.event(0, 11, {{"event", "post_send"}, {"qp_num", 18}, {"wr_id", 2}});  // no dest_qp
    const std::size_t recv = made.event(0, 12, {{"event", "post_recv"}, {"qp_num", 17}});
    made.event(0, 13, {{"event", "modify_qp"}, {"qp_num", 17}, {"from", "INIT"}, {"to", "RTS"}});
    made.event(0, 14, {{"event", "modify_qp"}, {"qp_num", 17}, {"from", "INIT"}, {"to", "RTR"}});
    const std::size_t sent =
        made.event(0, 15, {{"event", "completion"}, {"qp_num", 17}, {"opcode", "SEND"}});
    const std::size_t got =
        made.event(0, 16, {{"event", "completion"}, {"qp_num", 17}, {"opcode", "RECV"}});
    const std::size_t imm = made.event(
        0, 17, {{"event", "completion"}, {"qp_num", 17}, {"opcode", "RECV_RDMA_WITH_IMM"}});
    made.event(1, 18, passes_post(3, "SEND"));  // another host's
    const passes::HostQps qps = passes::host_qps(made.links, 0);
    using Ids = std::vector<std::size_t>;
    EXPECT_EQ(qps.posts, (std::map<std::uint32_t, Ids>{{17, {post}}}));
    EXPECT_EQ(qps.dest_of, (std::map<std::uint32_t, std::uint32_t>{{17, 5}}));
    EXPECT_EQ(qps.recv_posts, (std::map<std::uint32_t, Ids>{{17, {recv}}}));
    EXPECT_EQ(qps.send_done, (std::map<std::uint32_t, Ids>{{17, {sent}}}));
    EXPECT_EQ(qps.recv_done, (std::map<std::uint32_t, Ids>{{17, {got, imm}}}));
    EXPECT_EQ(qps.rts_at, (std::map<std::uint32_t, std::vector<std::int64_t>>{{17, {13}}}));
}

TEST(TracePasses, SentRequestsArePsnOrderedWithinEachSpanBetweenMovesToRts) {
    PassesLinks made;
    // Span 1: PSNs 0xfffffe, 0xffffff, 0 (wrapped), the first seen last (lost, then resent).
    const auto p0 = made.packet(passes_packet(kPassesA, kPassesB, 0, 5, 0xffffff), 0, 1, 10, 20);
    const auto p1 = made.packet(passes_packet(kPassesA, kPassesB, 2, 5, 0), 0, 1, 11, 21);
    const auto p2 = made.packet(passes_packet(kPassesA, kPassesB, 4, 5, 0xfffffe), 0, 1, 12, 22);
    made.packet(passes_packet(kPassesA, kPassesB, 4, 5, 0xfffffe, true), 0, 1, 13, 23);  // again
    made.packet(passes_packet(kPassesA, kPassesB, 17, 5, 9), 0, 1, 14, 24);  // an ACK: no request
    made.packet(passes_packet(kPassesA, kPassesB, 4, 6, 9), 0, 1, 15, 25);   // another QP's
    made.packet(passes_packet(kPassesA, kPassesB, 4, 5, 9), 0, 1, std::nullopt,
                26);  // not seen sent
    // Span 2, after the QP's move to RTS at 50: a new PSN.
    const auto p3 = made.packet(passes_packet(kPassesA, kPassesB, 4, 5, 300), 0, 1, 60, 70);
    const passes::SentRequests sent =
        passes::sent_requests(made.links.packets, 0, 17, 5, {5, 50}, {});
    EXPECT_FALSE(sent.unacknowledged);
    ASSERT_EQ(sent.spans.size(), 2u);
    std::vector<std::size_t> first;
    for (const auto& [relative, id] : sent.spans[0].packets) first.push_back(id);
    EXPECT_EQ(first, (std::vector<std::size_t>{p2, p0, p1}));
    EXPECT_EQ(sent.spans[0].until, 50);
    ASSERT_EQ(sent.spans[1].packets.size(), 1u);
    EXPECT_EQ(sent.spans[1].packets.begin()->second, p3);
    EXPECT_EQ(sent.spans[1].until, std::numeric_limits<std::int64_t>::max());
    // UC (opcode 32 + n) sends are unacknowledged; a peer filter leaves out what went elsewhere.
    PassesLinks uc;
    uc.packet(passes_packet(kPassesA, kPassesB, 32 + 4, 5, 1), 0, 1, 10, 20);
    EXPECT_TRUE(passes::sent_requests(uc.links.packets, 0, 17, 5, {}, {}).unacknowledged);
    EXPECT_TRUE(passes::sent_requests(uc.links.packets, 0, 17, 5, {}, {{17, 2}}).spans.empty());
}

TEST(TracePasses, GroupMessagesStartsOneAtEachFirstOrOnlyOpcode) {
    PassesLinks made;
    const int ops[] = {6, 7, 8, 10, 0, 2};
    for (std::uint32_t i = 0; i < 6; ++i)
        made.packet(passes_packet(kPassesA, kPassesB, ops[i], 5, 100 + i), 0, 1, 10, 20);
    passes::Span span{{}, 77};
    for (std::size_t i = 0; i < 6; ++i) span.packets[static_cast<std::int64_t>(i)] = i;
    const auto messages = passes::group_messages(made.links.packets, {span});
    ASSERT_EQ(messages.size(), 3u);
    EXPECT_EQ(messages[0].packets, (std::vector<std::size_t>{0, 1, 2}));
    EXPECT_EQ(messages[0].first_opcode, 6);
    EXPECT_EQ(messages[0].first_psn, 100);
    EXPECT_EQ(messages[0].last_psn, 102);
    EXPECT_EQ(messages[0].until, 77);
    EXPECT_EQ(messages[1].packets, (std::vector<std::size_t>{3}));
    EXPECT_EQ(messages[2].packets, (std::vector<std::size_t>{4, 5}));
    EXPECT_EQ(messages[2].last_psn, 105);
}

TEST(TracePasses, AttachReadResponsesTakesTheResponsesFromTheRequestsPsn) {
    PassesLinks made;
    const std::size_t request =
        made.packet(passes_packet(kPassesA, kPassesB, 12, 5, 40), 0, 1, 10, 20);
    made.packet(passes_packet(kPassesB, kPassesA, 13, 17, 41), 1, 0, 30, 40);  // First, not at 40
    const std::size_t first =
        made.packet(passes_packet(kPassesB, kPassesA, 13, 17, 40), 1, 0, 31, 41);
    const std::size_t middle =
        made.packet(passes_packet(kPassesB, kPassesA, 14, 17, 41), 1, 0, 32, 42);
    const std::size_t last =
        made.packet(passes_packet(kPassesB, kPassesA, 15, 17, 42), 1, 0, 33, 43);
    made.packet(passes_packet(kPassesB, kPassesA, 15, 17, 43), 1, 0, 34, 44);  // after the Last
    const std::size_t post = made.event(0, 5, passes_post(1, "RDMA_READ"));
    EventRecord& record = made.links.event_records[post];
    record.packets = std::vector<std::size_t>{request};
    passes::Message message{{request}, 12, 40, 40};
    passes::attach_read_responses(made.links, 0, 17, record, message);
    EXPECT_EQ(record.packets, (std::vector<std::size_t>{request, first, middle, last}));
    EXPECT_EQ(made.packet_record(middle)["wr"], post);
    EXPECT_FALSE(made.packet_record(1).contains("wr"));
    EXPECT_EQ(message.last_psn, 42);
}

TEST(TracePasses, CompletingAckIsTheFirstPositiveAckForTheLastPsnInTime) {
    PassesLinks made;
    made.packet(passes_packet(kPassesA, kPassesB, 10, 5, 8), 0, 1, 100, 110);   // the message
    made.packet(passes_packet(kPassesB, kPassesA, 17, 17, 8), 1, 0, 80, 90);    // before it left
    made.packet(passes_packet(kPassesB, kPassesA, 17, 17, 7), 1, 0, 110, 120);  // an earlier PSN
    made.packet(passes_packet(kPassesB, kPassesA, 17, 17, 8, false, 96), 1, 0, 111, 121);  // NAK
    made.packet(passes_packet(kPassesB, kPassesA, 17, 18, 8), 1, 0, 112, 122);  // another QP's
    const std::size_t ack =
        made.packet(passes_packet(kPassesB, kPassesA, 17, 17, 9), 1, 0, 113, 123);
    made.packet(passes_packet(kPassesB, kPassesA, 17, 17, 8), 1, 0, 114, 124);  // a later one
    passes::Message message{{0}, 10, 8, 8};
    EXPECT_EQ(passes::completing_ack(made.links.packets, 0, 17, message, false), ack);
    message.until = 123;  // the QP moved to RTS again before it arrived
    EXPECT_EQ(passes::completing_ack(made.links.packets, 0, 17, message, false), std::nullopt);
    // A READ is completed by its last response.
    PassesLinks read;
    read.packet(passes_packet(kPassesA, kPassesB, 12, 5, 8), 0, 1, 100, 110);
    read.packet(passes_packet(kPassesB, kPassesA, 16, 17, 8), 1, 0, 111, 121);
    const passes::Message request{{0}, 12, 8, 8};
    EXPECT_EQ(passes::completing_ack(read.links.packets, 0, 17, request, true), 1u);
    EXPECT_EQ(passes::completing_ack(read.links.packets, 0, 17, request, false), std::nullopt);
}

TEST(TracePasses, CheckPostedBeforeSentAllowsTheCaptureResolution) {
    PassesLinks made;
    made.packet(passes_packet(kPassesA, kPassesB, 10, 5, 8), 0, 1, 5000, 6000);
    const std::size_t on_time = made.event(0, 6000, passes_post(1, "RDMA_WRITE"));  // +1 µs
    const std::size_t late = made.event(0, 6001, passes_post(2, "RDMA_WRITE"));
    const passes::Message message{{0}, 10, 8, 8};
    passes::check_posted_before_sent(made.links, "a", on_time, message);
    EXPECT_TRUE(made.links.checks.post.empty());
    passes::check_posted_before_sent(made.links, "a", late, message);
    EXPECT_EQ(made.links.checks.posts, 2u);
    ASSERT_EQ(made.links.checks.post.size(), 1u);
    EXPECT_EQ(made.links.checks.post[0],
              "a: WR 2 (RDMA_WRITE) posted 1001 ns after its first packet (PSN 8) left");
}

TEST(TracePasses, LinkSendWrsGivesEachWrItsPacketsAndItsAck) {
    PassesLinks made;
    for (int op : {6, 7, 8})
        made.packet(passes_packet(kPassesA, kPassesB, op, 5, static_cast<std::uint32_t>(94 + op)),
                    0, 1, 100 + op, 110 + op);
    const std::size_t ack =
        made.packet(passes_packet(kPassesB, kPassesA, 17, 17, 102), 1, 0, 130, 140);
    made.packet(passes_packet(kPassesA, kPassesB, 4, 5, 103), 0, 1, 150, 160);  // a SEND
    const std::size_t write = made.event(0, 90, passes_post(1, "RDMA_WRITE"));
    const std::size_t read = made.event(0, 91, passes_post(2, "RDMA_READ"));
    const std::vector<passes::Message> messages = {{{0, 1, 2}, 6, 100, 102}, {{4}, 4, 103, 103}};
    const auto wr_of_psn =
        passes::link_send_wrs(made.links, "a", 0, 17, {write, read}, messages, false);
    const json& post = made.event_record(write);
    EXPECT_EQ(post["packets"], (json{0, 1, 2}));
    EXPECT_EQ(post["acked_by"], ack);
    EXPECT_EQ(made.packet_record(ack)["acks"], (json{write}));
    EXPECT_EQ(made.packet_record(1)["wr"], write);
    // The SEND does not fit the READ posted next: the pairing stops there.
    EXPECT_FALSE(made.event_record(read).contains("packets"));
    EXPECT_FALSE(made.packet_record(4).contains("wr"));
    EXPECT_EQ(wr_of_psn,
              (std::map<std::int64_t, std::size_t>{{100, write}, {101, write}, {102, write}}));
    EXPECT_EQ(made.links.checks.posts, 1u);
    // Unacknowledged (UD, UC): two WRs, one message captured: which is which is not known.
    PassesLinks ud;
    ud.packet(passes_packet(kPassesA, kPassesB, 96 + 4, 5, 1), 0, 1, 100, 110);
    const std::size_t one = ud.event(0, 90, passes_post(1, "SEND"));
    const std::size_t two = ud.event(0, 91, passes_post(2, "SEND"));
    EXPECT_TRUE(
        passes::link_send_wrs(ud.links, "a", 0, 17, {one, two}, {{{0}, 100, 1, 1}}, true).empty());
    EXPECT_FALSE(ud.event_record(one).contains("packets"));
    EXPECT_EQ(passes::link_send_wrs(ud.links, "a", 0, 17, {one}, {{{0}, 100, 1, 1}}, true).size(),
              1u);
}

TEST(TracePasses, AttachRetransmissionsGivesACopySentAgainToTheWrOfItsPsn) {
    PassesLinks made;
    const std::size_t again =
        made.packet(passes_packet(kPassesA, kPassesB, 8, 5, 102, true), 0, 1, 200, 210);
    const std::size_t other =
        made.packet(passes_packet(kPassesA, kPassesB, 8, 5, 109, true), 0, 1, 201, 211);
    const std::size_t to_c =
        made.packet(passes_packet(kPassesA, kPassesC, 8, 5, 102, true), 0, 2, 202, 212);
    const std::size_t first =
        made.packet(passes_packet(kPassesA, kPassesB, 8, 5, 102), 0, 1, 100, 110);
    passes::attach_retransmissions(made.links, 0, 17, 5, {{17, 1}}, {{102, 7}});
    EXPECT_EQ(made.packet_record(again)["wr"], 7);
    EXPECT_FALSE(made.packet_record(other).contains("wr"));  // a PSN no WR owns
    EXPECT_FALSE(made.packet_record(to_c).contains("wr"));   // not to the QP's peer
    EXPECT_FALSE(made.packet_record(first).contains("wr"));  // not sent again: link_send_wrs's
}

TEST(TracePasses, LinkSendCompletionsChecksEachAgainstItsAck) {
    PassesLinks made;
    const std::size_t ack =
        made.packet(passes_packet(kPassesB, kPassesA, 17, 17, 1), 1, 0, 130, 140);
    const std::size_t acked = made.event(0, 90, passes_post(1, "RDMA_WRITE"));
    made.links.event_records[acked].acked_by = ack;
    const std::size_t unacked = made.event(0, 91, passes_post(2, "RDMA_WRITE"));
    json unsignaled = passes_post(3, "RDMA_WRITE");
    unsignaled["signaled"] = false;
    const std::size_t quiet = made.event(0, 92, unsignaled);
    const std::size_t signaled = made.event(0, 93, passes_post(3, "RDMA_WRITE"));
    auto done = [&](std::int64_t t, std::uint64_t wr_id, bool ok) {
        return made.event(0, t, {{"event", "completion"}, {"wr_id", wr_id}, {"ok", ok}});
    };
    const std::size_t early = done(139, 1, true);  // 1 ns before its ACK arrived
    const std::size_t no_ack = done(150, 2, true);
    const std::size_t third = done(151, 3, true);    // the signaled one, not the unsignaled
    const std::size_t failed = done(152, 3, false);  // no other: the unsignaled one failed
    passes::link_send_completions(made.links, "a", {early, no_ack, third, failed},
                                  {acked, unacked, quiet, signaled}, false);
    EXPECT_EQ(made.event_record(acked)["completion"], early);
    EXPECT_EQ(made.event_record(early)["wr"], acked);
    EXPECT_EQ(made.event_record(early)["caused_by"], ack);
    EXPECT_EQ(made.event_record(signaled)["completion"], third);
    EXPECT_EQ(made.event_record(quiet)["completion"], failed);
    EXPECT_EQ(made.links.checks.completions, 3u);  // the failed one has no ACK to check
    EXPECT_EQ(
        made.links.checks.completion,
        (std::vector<std::string>{"a: WR 1 completed 1 ns before the ACK (PSN 1) arrived",
                                  "a: completion of WR 2 with no ACK for it in the capture",
                                  "a: completion of WR 3 with no ACK for it in the capture"}));
}

TEST(TracePasses, ReceivedMessagesAreFirstArrivalsInOrder) {
    PassesLinks made;
    made.packet(passes_packet(kPassesB, kPassesA, 0, 17, 1), 1, 0, 10, 20);            // SEND First
    made.packet(passes_packet(kPassesB, kPassesA, 2, 17, 2), 1, 0, 11, 21);            // SEND Last
    made.packet(passes_packet(kPassesB, kPassesA, 2, 17, 2, true), 1, 0, 12, 22);      // again
    made.packet(passes_packet(kPassesB, kPassesA, 17, 17, 3), 1, 0, 13, 23);           // an ACK
    made.packet(passes_packet(kPassesB, kPassesA, 4, 17, 4), 1, 0, 14, std::nullopt);  // lost
    made.packet(passes_packet(kPassesB, kPassesA, 4, 17, 4), 1, 0, 15, 25);            // SEND Only
    const auto messages = passes::received_messages(made.links.packets, 0, 17);
    ASSERT_EQ(messages.size(), 2u);
    EXPECT_EQ(messages[0].packets, (std::vector<std::size_t>{0, 1}));
    EXPECT_EQ(messages[0].first_opcode, 2);  // the last packet's: it says how the message ends
    EXPECT_EQ(messages[1].packets, (std::vector<std::size_t>{5}));
    EXPECT_TRUE(passes::received_messages(made.links.packets, 1, 17).empty());
}

TEST(TracePasses, LinkReceiveCompletionsSkipsMessagesThatConsumeNoReceive) {
    PassesLinks made;
    made.packet(passes_packet(kPassesB, kPassesA, 10, 17, 1), 1, 0, 10, 20);  // WRITE Only
    const std::size_t send = made.packet(passes_packet(kPassesB, kPassesA, 4, 17, 2), 1, 0, 30, 40);
    const std::size_t imm = made.packet(passes_packet(kPassesB, kPassesA, 11, 17, 3), 1, 0, 50, 60);
    const std::vector<passes::Message> messages = {
        {{0}, 10, 1, 1}, {{1}, 4, 2, 2}, {{2}, 11, 3, 3}};
    const std::size_t first = made.event(0, 45, {{"event", "completion"}});
    const std::size_t second = made.event(0, 59, {{"event", "completion"}});
    const std::size_t third = made.event(0, 70, {{"event", "completion"}});  // no message left
    passes::link_receive_completions(made.links, "a", messages, {first, second, third});
    EXPECT_EQ(made.event_record(first)["caused_by"], send);
    EXPECT_EQ(made.packet_record(send)["received_by"], first);
    EXPECT_EQ(made.event_record(second)["caused_by"], imm);
    EXPECT_FALSE(made.event_record(third).contains("caused_by"));
    EXPECT_EQ(made.links.checks.receives, 2u);
    EXPECT_EQ(made.links.checks.receive,
              (std::vector<std::string>{"a: receive completion 1 ns before its message's last "
                                        "packet (PSN 3) arrived"}));
}

TEST(TracePasses, LinkReceivePostsMatchesEachCompletionToThePostOfItsWrId) {
    PassesLinks made;
    auto recv = [&](std::uint64_t wr_id) {
        return made.event(0, 1, {{"event", "post_recv"}, {"wr_id", wr_id}});
    };
    const std::size_t one = recv(1), again = recv(1), two = recv(2);
    auto done = [&](std::uint64_t wr_id) {
        return made.event(0, 2, {{"event", "completion"}, {"wr_id", wr_id}});
    };
    const std::size_t c2 = done(2), c1 = done(1), c1b = done(1), c9 = done(9);
    passes::link_receive_posts(made.links, {c2, c1, c1b, c9}, {one, again, two});
    EXPECT_EQ(made.event_record(two)["completion"], c2);
    EXPECT_EQ(made.event_record(one)["completion"], c1);
    EXPECT_EQ(made.event_record(again)["completion"], c1b);
    EXPECT_EQ(made.event_record(c1b)["wr"], again);
    EXPECT_FALSE(made.event_record(c9).contains("wr"));
}

TEST(TracePasses, LinkHostLinksASendAndItsReceiveOnEachSide) {
    PassesLinks made;
    made.packet(passes_packet(kPassesA, kPassesB, 4, 18, 5), 0, 1, 100, 110);
    made.packet(passes_packet(kPassesB, kPassesA, 17, 17, 5), 1, 0, 120, 130);
    json post = passes_post(1, "SEND");
    post["dest_qp"] = 18;
    const std::size_t sent = made.event(0, 90, post);
    const std::size_t recv =
        made.event(1, 80, {{"event", "post_recv"}, {"qp_num", 18}, {"wr_id", 4}});
    const std::size_t got = made.event(
        1, 115, {{"event", "completion"}, {"qp_num", 18}, {"wr_id", 4}, {"opcode", "RECV"}});
    const std::size_t done =
        made.event(0, 135, {{"event", "completion"}, {"qp_num", 17}, {"wr_id", 1}, {"ok", true}});
    passes::link_host(made.links, "a", 0);
    passes::link_host(made.links, "b", 1);
    EXPECT_EQ(made.event_record(sent)["packets"], (json{0}));
    EXPECT_EQ(made.event_record(sent)["acked_by"], 1);
    EXPECT_EQ(made.event_record(sent)["completion"], done);
    EXPECT_EQ(made.event_record(done)["caused_by"], 1);
    EXPECT_EQ(made.event_record(got)["caused_by"], 0);
    EXPECT_EQ(made.event_record(recv)["completion"], got);
    EXPECT_EQ(made.links.checks.posts + made.links.checks.completions + made.links.checks.receives,
              3u);
    EXPECT_TRUE(made.links.checks.post.empty() && made.links.checks.completion.empty() &&
                made.links.checks.receive.empty());
}

TEST(TracePasses, CheckPacketOrderFlagsAnArrivalBeforeItsDeparture) {
    PassesLinks made;
    made.packet(passes_packet(kPassesA, kPassesB, 4, 5, 1), 0, 1, 100, 110);
    made.packet(passes_packet(kPassesA, kPassesB, 4, 5, 2), 0, 1, 100, std::nullopt);  // lost
    made.packet(passes_packet(kPassesA, kPassesB, 4, 5, 3), 0, 1, 120, 119);
    passes::check_packet_order(made.links);
    EXPECT_EQ(made.links.checks.pairs, 2u);
    EXPECT_EQ(made.links.checks.order,
              (std::vector<std::string>{
                  "198.51.100.1 → 198.51.100.2 SEND Only PSN 3 arrived 1 ns before it was sent"}));
}

TEST(TracePasses, ChecksRecordListsTheFourChecksInOrder) {
    passes::CausalChecks checks;
    checks.pairs = 4;
    checks.receives = 1;
    checks.receive = {"late"};
    const std::vector<CheckRecord> record = passes::checks_record(checks);
    ASSERT_EQ(record.size(), 4u);
    EXPECT_EQ(record[0].name, "every packet arrives after it was sent");
    EXPECT_EQ(record[0].checked, 4u);
    EXPECT_EQ(record[0].ok, true);
    EXPECT_EQ(record[1].name, "every WR is posted before its first packet leaves");
    EXPECT_EQ(record[2].name, "every send completion follows the ACK that produced it");
    EXPECT_EQ(record[3].ok, false);
    EXPECT_EQ(record[3].violations, (std::vector<std::string>{"late"}));
}

TEST(TracePasses, BuildTimelinePutsAPostThenDeparturesThenArrivalsAtOneInstant) {
    const std::vector<EventRecord> events = {{.fields = {.t_ns = 5, .event = "completion"}},
                                             {.fields = {.t_ns = 5, .event = "post_send"}},
                                             {.fields = {.t_ns = 1, .event = "post_recv"}}};
    const std::vector<PacketRecord> packets = {{.tx_ns = 5, .rx_ns = 5}, {.rx_ns = 3}};
    std::vector<std::string> steps;
    for (const TimelineEntry& s : passes::build_timeline(events, packets))
        steps.push_back(std::to_string(s.t_ns) + " " + s.kind + " " + std::to_string(s.index));
    EXPECT_EQ(steps, (std::vector<std::string>{"1 event 2", "3 arrive 1", "5 event 1", "5 send 0",
                                               "5 arrive 0", "5 event 0"}));
}

}  // namespace rdmalab::trace_merge
