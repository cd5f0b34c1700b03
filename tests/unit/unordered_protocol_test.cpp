// The reliable unordered layer's protocol (unordered/protocol.hpp), without verbs: its records,
// the receiver's account, the sender's window, and a simulated pair of paths that reorder and
// lose datagrams.
#include "rdmalab/error.hpp"
#include "rdmalab/unordered/protocol.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <queue>
#include <random>

namespace {

using namespace rdmalab::unordered;
using namespace std::chrono_literals;

std::vector<std::byte> datagram_bytes(const DataHeader& header) {
    std::vector<std::byte> bytes(kDataHeaderBytes + header.length());
    write_data_header(std::span<std::byte, kDataHeaderBytes>(bytes.data(), kDataHeaderBytes),
                      header);
    return bytes;
}

std::vector<std::byte> ack_bytes(const Ack& ack) {
    std::vector<std::byte> bytes(kAckBytes);
    write_ack(std::span<std::byte, kAckBytes>(bytes.data(), kAckBytes), ack);
    return bytes;
}

std::string refusal(std::span<const std::byte> bytes) {
    auto result = read_datagram(bytes);
    return std::holds_alternative<std::string>(result) ? std::get<std::string>(result) : "";
}

const DataHeader kHeader{
    .transfer = 7, .sequence = 2, .total = 2500, .target_offset = 4096, .payload = 992};

TEST(UnorderedRecords, DataHeaderRoundTripsAndNamesItsPlace) {
    auto bytes = datagram_bytes(kHeader);
    auto result = read_datagram(bytes);
    ASSERT_TRUE(std::holds_alternative<Arrival>(result)) << refusal(bytes);
    const auto& header = std::get<DataHeader>(std::get<Arrival>(result));
    EXPECT_TRUE(header.same_transfer(kHeader));
    EXPECT_EQ(header.sequence, 2U);
    EXPECT_EQ(header.count(), 3U);
    EXPECT_EQ(header.length(), 2500U - 2 * 992);  // the last datagram carries the rest
    EXPECT_EQ(header.place(), 4096U + 2 * 992);
}

TEST(UnorderedRecords, RefusesDataThatDoesNotAddUp) {
    auto longer = datagram_bytes(kHeader);
    longer.push_back(std::byte{0});
    EXPECT_NE(refusal(longer).find("carries 517 bytes, its place holds 516"), std::string::npos)
        << refusal(longer);
    DataHeader past = kHeader;
    past.sequence = 3;
    std::vector<std::byte> bytes(kDataHeaderBytes + 10);
    write_data_header(std::span<std::byte, kDataHeaderBytes>(bytes.data(), kDataHeaderBytes), past);
    EXPECT_NE(refusal(bytes).find("datagram 3 of 3"), std::string::npos) << refusal(bytes);
    DataHeader empty = kHeader;
    empty.total = 0;
    empty.sequence = 0;
    bytes.assign(kDataHeaderBytes, std::byte{0});
    write_data_header(std::span<std::byte, kDataHeaderBytes>(bytes.data(), kDataHeaderBytes),
                      empty);
    EXPECT_NE(refusal(bytes).find("a total of 0 bytes"), std::string::npos) << refusal(bytes);
    DataHeader huge = kHeader;
    huge.payload = 1;
    huge.total = kMaxDatagramsPerTransfer + 1;
    huge.sequence = 0;
    bytes.assign(kDataHeaderBytes + 1, std::byte{0});
    write_data_header(std::span<std::byte, kDataHeaderBytes>(bytes.data(), kDataHeaderBytes), huge);
    EXPECT_NE(refusal(bytes).find("datagrams (at most"), std::string::npos) << refusal(bytes);
    EXPECT_NE(refusal(std::span(bytes).first(3)).find("no magic"), std::string::npos);
    const std::vector<std::byte> zeros(kAckBytes);
    EXPECT_NE(refusal(zeros).find("a datagram with magic 0x00000000"), std::string::npos);
    auto short_data = datagram_bytes(kHeader);
    EXPECT_NE(refusal(std::span(short_data).first(20)).find("shorter than its header"),
              std::string::npos);
}

TEST(UnorderedRecords, AckRoundTripsAndRefusesBitsPastTheCount) {
    Ack ack{.transfer = 3, .count = 10, .cumulative = 4};
    ack.bitmap[0] = 0b101;  // datagrams 5 and 7
    auto result = read_datagram(ack_bytes(ack));
    ASSERT_TRUE(std::holds_alternative<Arrival>(result));
    const Ack& read = std::get<Ack>(std::get<Arrival>(result));
    for (std::uint32_t s = 0; s < 10; ++s)
        EXPECT_EQ(read.covers(s), s < 4 || s == 5 || s == 7) << "datagram " << s;
    ack.bitmap[0] = 0x80;  // datagram 12 of 10
    EXPECT_NE(refusal(ack_bytes(ack)).find("names datagram 12, past its 10"), std::string::npos);
    ack.bitmap[0] = 0;
    ack.cumulative = 11;
    EXPECT_NE(refusal(ack_bytes(ack)).find("says 11 of its 10 arrived"), std::string::npos);
    ack.cumulative = 0;
    ack.count = 0;
    EXPECT_NE(refusal(ack_bytes(ack)).find("counts 0 datagrams"), std::string::npos);
    auto bytes = ack_bytes(Ack{.transfer = 1, .count = 1});
    bytes.pop_back();
    EXPECT_NE(refusal(bytes).find("an acknowledgement of 47 bytes"), std::string::npos);
}

TEST(UnorderedRecords, PlacesOnlyInsideTheTargetAndAsTheTransferBegan) {
    // kHeader: 2500 bytes at offset 4096.
    EXPECT_FALSE(refuse_placement(kHeader, 4096 + 2500, nullptr));
    EXPECT_NE(refuse_placement(kHeader, 4096 + 2499, nullptr)->find("do not fit the target"),
              std::string::npos);
    DataHeader far = kHeader;
    far.target_offset = ~std::uint64_t{0} - 100;  // offset + total wraps around
    EXPECT_TRUE(refuse_placement(far, 1 << 20, nullptr));
    DataHeader moved = kHeader;
    moved.target_offset = 0;
    EXPECT_NE(refuse_placement(moved, 1 << 20, &kHeader)->find("disagrees with its first"),
              std::string::npos);
    EXPECT_FALSE(refuse_placement(kHeader, 1 << 20, &kHeader));
}

TEST(UnorderedReassembly, TakesDatagramsInAnyOrder) {
    DataHeader first = kHeader;
    first.total = 992 * 5;
    Reassembly reassembly(first);
    for (std::uint32_t s : {4U, 2U, 0U}) EXPECT_TRUE(reassembly.record(s));
    EXPECT_FALSE(reassembly.record(2));  // a duplicate
    Ack ack = reassembly.ack();
    EXPECT_EQ(ack.cumulative, 1U);
    EXPECT_EQ(ack.count, 5U);
    EXPECT_TRUE(ack.covers(2));
    EXPECT_FALSE(ack.covers(3));
    EXPECT_TRUE(ack.covers(4));
    EXPECT_FALSE(reassembly.complete());
    EXPECT_TRUE(reassembly.record(1));
    EXPECT_TRUE(reassembly.record(3));
    EXPECT_TRUE(reassembly.complete());
    EXPECT_EQ(reassembly.ack().cumulative, 5U);
    EXPECT_EQ(reassembly.received(), 5U);
}

Clock::time_point at(int ms) {
    return Clock::time_point{} + std::chrono::milliseconds(ms);
}

Ack ack_of(std::uint32_t transfer, std::uint32_t count, const std::vector<std::uint32_t>& arrived) {
    DataHeader header{.transfer = transfer, .total = count, .payload = 1};
    Reassembly reassembly(header);
    for (auto s : arrived) reassembly.record(s);
    return reassembly.ack();
}

TEST(UnorderedWindow, SendsNoMoreThanTheWindow) {
    SendWindow window(Settings{.window = 4});
    window.add(1, 10);
    for (std::uint32_t s = 0; s < 4; ++s) {
        auto next = window.next(at(0));
        ASSERT_TRUE(next);
        EXPECT_EQ(next->sequence, s);
        EXPECT_EQ(next->reason, SendReason::kNew);
    }
    EXPECT_FALSE(window.next(at(1)));
    EXPECT_TRUE(window.acknowledge(ack_of(1, 10, {0, 1}), at(1)).empty());
    EXPECT_EQ(window.in_flight(), 2U);
    EXPECT_EQ(window.next(at(1))->sequence, 4U);
}

TEST(UnorderedWindow, ResendsOnlyTheGapOnceLaterOnesAreAcknowledged) {
    SendWindow window(Settings{.window = 64, .reorder_tolerance = 3});
    window.add(1, 20);
    for (int s = 0; s < 20; ++s) ASSERT_TRUE(window.next(at(0)));
    // Everything but datagram 5 acknowledged: 14 later sends arrived, more than 3.
    std::vector<std::uint32_t> arrived;
    for (std::uint32_t s = 0; s < 20; ++s)
        if (s != 5) arrived.push_back(s);
    EXPECT_TRUE(window.acknowledge(ack_of(1, 20, arrived), at(1)).empty());
    auto resend = window.next(at(1));
    ASSERT_TRUE(resend);
    EXPECT_EQ(resend->sequence, 5U);
    EXPECT_EQ(resend->reason, SendReason::kGap);
    EXPECT_FALSE(window.next(at(2)));  // resent once: it waits for its own fate
    arrived.push_back(5);
    EXPECT_EQ(window.acknowledge(ack_of(1, 20, arrived), at(1)), std::vector<std::uint32_t>{1});
    EXPECT_TRUE(window.idle());
}

TEST(UnorderedWindow, AGapResendAcknowledgedAtOnceWasNotNeededAndWidensTheTolerance) {
    SendWindow window(Settings{.window = 64, .reorder_tolerance = 3, .retransmit_timeout = 100ms});
    window.add(1, 20);
    for (int s = 0; s < 20; ++s) ASSERT_TRUE(window.next(at(0)));
    std::vector<std::uint32_t> arrived;
    for (std::uint32_t s = 0; s < 20; ++s)
        if (s != 5) arrived.push_back(s);
    window.acknowledge(ack_of(1, 20, arrived), at(10));  // a 10 ms round trip
    ASSERT_EQ(window.next(at(10))->reason, SendReason::kGap);
    arrived.push_back(5);
    // Acknowledged 1 ms after the resend, under half a round trip: the first copy had arrived.
    window.acknowledge(ack_of(1, 20, arrived), at(11));
    EXPECT_EQ(window.spurious_resends(), 1U);
    EXPECT_EQ(window.reorder_tolerance(), 6U);
}

TEST(UnorderedWindow, ReorderingWithinTheToleranceIsNotLoss) {
    SendWindow window(Settings{.window = 64, .reorder_tolerance = 3});
    window.add(1, 10);
    for (int s = 0; s < 10; ++s) ASSERT_TRUE(window.next(at(0)));
    // Datagram 0 is late; 1..3 (3 later sends) arrived: within the tolerance.
    window.acknowledge(ack_of(1, 10, {1, 2, 3}), at(1));
    EXPECT_FALSE(window.next(at(1)));
}

TEST(UnorderedWindow, ResendsOnTimeoutOnePerTimeoutBackingOffThenGivesUp) {
    SendWindow window(Settings{.retransmit_timeout = 10ms, .max_sends = 3});
    window.add(1, 2);
    EXPECT_EQ(window.next(at(0))->sequence, 0U);
    EXPECT_EQ(window.next(at(0))->sequence, 1U);
    EXPECT_FALSE(window.next(at(9)));
    EXPECT_EQ(*window.next_timeout(), at(10));
    auto first = window.next(at(10));
    EXPECT_EQ(first->reason, SendReason::kTimeout);
    EXPECT_EQ(first->sequence, 0U);
    // Datagram 1 timed out too, but the timer restarted and doubled: one resend per timeout.
    EXPECT_FALSE(window.next(at(10)));
    EXPECT_FALSE(window.next(at(29)));
    auto second = window.next(at(30));
    EXPECT_EQ(second->reason, SendReason::kTimeout);
    EXPECT_EQ(second->sequence, 1U);
    EXPECT_EQ(window.retransmit_timeout(), 40ms);
    EXPECT_EQ(window.next(at(70))->sequence, 0U);   // its third send
    EXPECT_EQ(window.next(at(150))->sequence, 1U);  // 80 ms later: its third
    try {
        window.next(at(310));
        FAIL() << "a fourth send";
    } catch (const rdmalab::Error& error) {
        EXPECT_NE(std::string(error.what()).find("datagram 0 sent 3 times and never acknowledged"),
                  std::string::npos)
            << error.what();
    }
}

TEST(UnorderedWindow, TheTimeoutFollowsTheRoundTrip) {
    SendWindow window(Settings{.retransmit_timeout = 10ms});
    window.add(1, 100);
    for (int i = 0; i < 100; ++i) {
        ASSERT_TRUE(window.next(at(i * 100)));
        std::vector<std::uint32_t> arrived;
        for (int s = 0; s <= i; ++s) arrived.push_back(static_cast<std::uint32_t>(s));
        window.acknowledge(ack_of(1, 100, arrived), at(i * 100 + 50));  // 50 ms round trips
    }
    EXPECT_GE(window.retransmit_timeout(), 50ms);
    EXPECT_LE(window.retransmit_timeout(), 100ms);
}

TEST(UnorderedWindow, AnAckOfAResendIsNoEvidenceOfAGap) {
    SendWindow window(Settings{.window = 64, .reorder_tolerance = 3, .retransmit_timeout = 10ms});
    window.add(1, 20);
    for (int s = 0; s < 20; ++s) ASSERT_TRUE(window.next(at(0)));
    EXPECT_EQ(window.next(at(10))->reason, SendReason::kTimeout);  // datagram 0 again, order 21
    // Only datagram 0 acknowledged: it may be the first copy's arrival, not proof that the
    // 19 sent before its resend were lost.
    window.acknowledge(ack_of(1, 20, {0}), at(11));
    EXPECT_FALSE(window.next(at(11)));
}

TEST(UnorderedWindow, RefusesAnAckThatLies) {
    SendWindow window(Settings{});
    window.add(1, 4);
    ASSERT_TRUE(window.next(at(0)));
    EXPECT_THROW(window.acknowledge(ack_of(1, 5, {0}), at(1)), rdmalab::Error);     // wrong count
    EXPECT_THROW(window.acknowledge(ack_of(1, 4, {0, 1}), at(1)), rdmalab::Error);  // 1 never sent
    EXPECT_TRUE(window.acknowledge(ack_of(2, 4, {0}), at(1)).empty());  // unknown: ignored
}

// Two paths, 1 ms and 3 ms, datagrams sprayed over them in turn (reordering ~2 ms deep), a
// loss rate, ACKs back on a 1 ms path after every 8 arrivals or 1 ms after an arrival (as the
// Channel does): a discrete simulation in whole microseconds of one sender's window and one
// receiver.
struct Simulated {
    std::uint64_t sends = 0, gap_resends = 0, timeout_resends = 0, lost = 0;
    bool complete = false;
};

Simulated simulate(double loss, std::uint32_t seed) {
    constexpr std::uint32_t kCount = 2000;
    constexpr int kSendGapUs = 100;  // one datagram every 0.1 ms
    Settings settings{.window = 128, .reorder_tolerance = 48, .retransmit_timeout = 20ms};
    SendWindow window(settings);
    window.add(1, kCount);
    Reassembly reassembly(DataHeader{.transfer = 1, .total = kCount, .payload = 1});
    std::mt19937 random(seed);
    std::bernoulli_distribution drop(loss);
    // Events: (time µs, kind 0 = data arrives / 1 = ack arrives / 2 = the receiver's ACK
    // delay ends, sequence).
    using Event = std::tuple<long, int, std::uint32_t>;
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
    std::map<long, Ack> acks;
    Simulated result;
    std::uint32_t since_ack = 0;
    long now = 0, next_send = 0;
    std::uint64_t path = 0;
    while (!window.idle() && now < 60'000'000) {
        if (!events.empty() && std::get<0>(events.top()) <= next_send) {
            auto [time, kind, sequence] = events.top();
            events.pop();
            now = time;
            auto send_ack = [&] {
                since_ack = 0;
                acks[now + 1000] = reassembly.ack();
                events.emplace(now + 1000, 1, 0);
            };
            if (kind == 0) {
                reassembly.record(sequence);
                if (since_ack++ == 0) events.emplace(now + 1000, 2, 0);
                if (since_ack >= 8 || reassembly.complete()) send_ack();
            } else if (kind == 2) {
                if (since_ack > 0) send_ack();
            } else {
                window.acknowledge(acks.at(now), at(0) + std::chrono::microseconds(now));
            }
            continue;
        }
        now = next_send;
        next_send = now + kSendGapUs;
        auto send = window.next(at(0) + std::chrono::microseconds(now));
        if (!send) continue;
        ++result.sends;
        result.gap_resends += send->reason == SendReason::kGap;
        result.timeout_resends += send->reason == SendReason::kTimeout;
        if (drop(random)) {
            ++result.lost;
            continue;
        }
        events.emplace(now + ((path++ % 2) ? 3000 : 1000), 0, send->sequence);
    }
    result.complete = reassembly.complete() && window.idle();
    return result;
}

TEST(UnorderedSimulation, SprayedWithoutLossNothingIsSentTwice) {
    const Simulated run = simulate(0.0, 1);
    EXPECT_TRUE(run.complete);
    EXPECT_EQ(run.sends, 2000U);
    EXPECT_EQ(run.gap_resends + run.timeout_resends, 0U);
}

TEST(UnorderedSimulation, SprayedWithLossOnlyTheLostAreSentAgain) {
    for (std::uint32_t seed : {1U, 2U, 3U}) {
        const Simulated run = simulate(0.02, seed);
        EXPECT_TRUE(run.complete) << "seed " << seed;
        EXPECT_GT(run.lost, 0U);
        // Every resend answers a loss (a lost resend is a loss too): none is spurious.
        EXPECT_EQ(run.gap_resends + run.timeout_resends, run.lost) << "seed " << seed;
        EXPECT_GT(run.gap_resends, run.timeout_resends) << "seed " << seed;
    }
}

}  // namespace
