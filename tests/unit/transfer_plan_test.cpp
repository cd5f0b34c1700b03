// The transfer engine's logic (transfer/plan.hpp), without verbs: the records a peer is sent,
// requests checked and cut into slices, rail choice, and a batch failing over from a dead rail.
#include "rdmalab/error.hpp"
#include "rdmalab/transfer/plan.hpp"

#include <gtest/gtest.h>

namespace {

using namespace rdmalab::transfer;

// Why a decoder refused its input ("" when it took it).
template <typename Record>
std::string refusal_of(const std::variant<Record, std::string>& result) {
    return std::holds_alternative<std::string>(result) ? std::get<std::string>(result) : "";
}

TEST(TransferRecords, SegmentAndRailRoundTrip) {
    const SegmentDescriptor segment{
        .id = 3, .address = 0x7f0000001000, .length = 1 << 20, .rkeys = {0x1234, 0x5678}};
    auto decoded = decode_segment(encode(segment));
    ASSERT_TRUE(std::holds_alternative<SegmentDescriptor>(decoded)) << refusal_of(decoded);
    const auto& back = std::get<SegmentDescriptor>(decoded);
    EXPECT_EQ(back.id, 3U);
    EXPECT_EQ(back.address, segment.address);
    EXPECT_EQ(back.rkeys, segment.rkeys);

    RailEndpoint rail{.rail = 1, .mtu = 4096, .qpn = 0x11, .psn = 0xabcdef, .gid = {}};
    rail.gid[15] = 7;
    auto endpoint = decode_rail_endpoint(encode(rail));
    ASSERT_TRUE(std::holds_alternative<RailEndpoint>(endpoint));
    EXPECT_EQ(std::get<RailEndpoint>(endpoint).psn, 0xabcdefU);
    EXPECT_EQ(std::get<RailEndpoint>(endpoint).gid[15], 7);
}

TEST(TransferRecords, RefusesWhatAPeerMustNotSend) {
    SegmentDescriptor segment{
        .id = 1, .address = ~std::uint64_t{0} - 10, .length = 100, .rkeys = {1}};
    EXPECT_NE(refusal_of(decode_segment(encode(segment))).find("wrap around"), std::string::npos);
    segment.address = 0x1000;
    segment.length = 0;
    EXPECT_NE(refusal_of(decode_segment(encode(segment))).find("a length of 0"), std::string::npos);
    segment.length = 10;
    segment.rkeys.clear();
    EXPECT_NE(refusal_of(decode_segment(encode(segment))).find("keys for 0 rails"),
              std::string::npos);
    segment.rkeys = {1, 2};
    auto bytes = encode(segment);
    bytes.pop_back();
    EXPECT_NE(refusal_of(decode_segment(bytes)).find("bytes of keys for 2 rails"),
              std::string::npos);
    RailEndpoint rail{.rail = 0, .mtu = 1500, .qpn = 1, .psn = 1, .gid = {}};
    auto refused = decode_rail_endpoint(encode(rail));
    ASSERT_TRUE(std::holds_alternative<std::string>(refused));
    EXPECT_NE(std::get<std::string>(refused).find("no InfiniBand MTU"), std::string::npos);
    rail.mtu = 1024;
    rail.qpn = 1U << 24;
    EXPECT_TRUE(std::holds_alternative<std::string>(decode_rail_endpoint(encode(rail))));
    rail.qpn = 1;  // the GSI QP: no peer's connected QP
    EXPECT_NE(refusal_of(decode_rail_endpoint(encode(rail))).find("management QP"),
              std::string::npos);
    rail.qpn = 0x11;
    rail.qp = 3;  // the rail's fourth QP: carried, and read back
    auto fourth = decode_rail_endpoint(encode(rail));
    ASSERT_TRUE(std::holds_alternative<RailEndpoint>(fourth));
    EXPECT_EQ(std::get<RailEndpoint>(fourth).qp, 3);
    auto too_many = encode(rail);
    too_many[7] = std::byte{kMaxQpsPerRail};  // one past the last QP a rail may have
    EXPECT_NE(refusal_of(decode_rail_endpoint(too_many)).find("QPs a rail"), std::string::npos);
}

TEST(TransferRequests, CheckedAgainstBothSegmentsAndCutIntoSlices) {
    const Request request{.opcode = Opcode::kWrite,
                          .local_segment = 1,
                          .local_offset = 4096,
                          .remote_segment = 2,
                          .remote_offset = 0,
                          .length = 150 * 1024};
    EXPECT_FALSE(refuse_request(request, 4096 + 150 * 1024, 150 * 1024));
    EXPECT_NE(refuse_request(request, 150 * 1024, 1 << 20)->find("local segment 1 pass its end"),
              std::string::npos);
    EXPECT_NE(refuse_request(request, 1 << 20, 100)->find("remote segment 2 pass its end"),
              std::string::npos);
    Request empty = request;
    empty.length = 0;
    EXPECT_TRUE(refuse_request(empty, 1 << 20, 1 << 20));
    Request wraps = request;
    wraps.remote_offset = ~std::uint64_t{0};
    EXPECT_TRUE(refuse_request(wraps, 1 << 20, 1 << 20));

    const std::vector<Request> batch{request, request};
    auto slices = cut_into_slices(batch, 64 * 1024);
    ASSERT_EQ(slices.size(), 6U);  // 64 + 64 + 22 KiB, twice
    EXPECT_EQ(slices[2].offset, 128U * 1024);
    EXPECT_EQ(slices[2].length, 22U * 1024);
    EXPECT_EQ(slices[3].request, 1U);
}

TEST(TransferRails, RoundRobinSkipsFullAndDeadRails) {
    Rails rails(3, RailPolicy::kRoundRobin, 1);
    const auto now = Clock::now();
    EXPECT_EQ(rails.choose(100), 0U);
    rails.posted(0, 100, now);
    EXPECT_EQ(rails.choose(100), 1U);
    rails.posted(1, 100, now);
    rails.failed(1, 100, "IBV_WC_RETRY_EXC_ERR", now);
    EXPECT_EQ(rails.choose(100), 2U);
    rails.posted(2, 100, now);
    EXPECT_FALSE(rails.choose(100));  // 0 and 2 full, 1 down
    rails.completed(0, 100, now);
    EXPECT_EQ(rails.choose(100), 0U);
}

TEST(TransferRails, TheScorePrefersTheRailThatDrainsFirst) {
    Rails rails(2, RailPolicy::kScore, 16);
    auto t = Clock::now();
    // Rail 1 measured at 1 MB/s, rail 2 at 4 MB/s.
    rails.posted(0, 1000, t);
    rails.completed(0, 1000, t + std::chrono::milliseconds(1));
    rails.posted(1, 4000, t);
    rails.completed(1, 4000, t + std::chrono::milliseconds(1));
    // 3500 bytes queued on rail 2: a 1000-byte slice would be done in (3500 + 1000) / 4 MB/s
    // = 1.125 ms there, in 1000 / 1 MB/s = 1 ms on idle rail 1: rail 1.
    rails.posted(1, 3500, t);
    EXPECT_EQ(rails.choose(1000), 0U);
    // Once rail 2 has drained (7500 bytes in 3 ms busy: 2.5 MB/s), 0.4 ms beats 1 ms.
    rails.completed(1, 3500, t + std::chrono::milliseconds(2));
    EXPECT_EQ(rails.choose(1000), 1U);
}

TEST(TransferBatch, SlicesOfADeadRailGoToTheOtherAndTheBatchLands) {
    std::vector<Request> requests{{.length = 4 * 64 * 1024}};
    BatchProgress batch(cut_into_slices(requests, 64 * 1024), true);
    Rails rails(2, RailPolicy::kRoundRobin, 8);
    const auto now = Clock::now();
    std::vector<std::size_t> rail_of(4);
    while (auto slice = batch.next_slice()) {
        const std::size_t rail = *rails.choose(64 * 1024);
        rails.posted(rail, 64 * 1024, now);
        batch.posted(*slice, rail);
        rail_of[*slice] = rail;
    }
    // Rail 1's first slice landed; then rail 2 dies: its slices fail (the first with the
    // error, the rest flushed), and are posted again on rail 1.
    batch.completed(0);
    rails.completed(rail_of[0], 64 * 1024, now);
    for (std::uint32_t s = 0; s < 4; ++s)
        if (rail_of[s] == 1) {
            rails.failed(1, 64 * 1024, "IBV_WC_RETRY_EXC_ERR", now);
            batch.failed(s);
        }
    EXPECT_FALSE(rails[1].up);
    EXPECT_EQ(batch.reposted(), 2U);
    while (auto slice = batch.next_slice()) {
        EXPECT_EQ(*rails.choose(64 * 1024), 0U);
        batch.posted(*slice, 0);
    }
    for (std::uint32_t s = 1; s < 4; ++s) batch.completed(s);
    batch.failed(1);  // a late flush of a slice that landed changes nothing
    EXPECT_TRUE(batch.all_landed());
    EXPECT_EQ(batch.reposted(), 2U);
    EXPECT_EQ(batch.landed_on(1), 0U);
}

TEST(TransferRails, AQPsRetryTimeIsItsSendsTimesItsAckTimeout) {
    EXPECT_EQ(retry_time(3, 14), std::chrono::nanoseconds(268'435'456));     // the tuned pair
    EXPECT_EQ(retry_time(7, 20), std::chrono::nanoseconds(34'359'738'368));  // NCCL's defaults
}

TEST(TransferBatch, ARailGivenUpOnHandsBackWhatItHeldAndGoesDown) {
    std::vector<Request> requests{{.length = 4 * 64 * 1024}};
    BatchProgress batch(cut_into_slices(requests, 64 * 1024), false);
    Rails rails(2, RailPolicy::kRoundRobin, 8, RailRetry{.first = std::chrono::milliseconds(500)});
    const auto now = Clock::now();
    while (auto slice = batch.next_slice()) {
        const std::size_t rail = *rails.choose(64 * 1024);
        rails.posted(rail, 64 * 1024, now);
        batch.posted(*slice, rail);
    }
    EXPECT_EQ(batch.in_flight_on(1), (std::vector<std::uint32_t>{1, 3}));
    // Rail 2's QPs gave no completion at all: its slices go back to waiting, nothing is in flight
    // on it, it is down, and (nothing left to account for) it can be renewed after its back-off.
    for (const std::uint32_t slice : batch.in_flight_on(1)) batch.failed(slice);
    rails.gave_up(1, "no completion", now);
    EXPECT_TRUE(batch.in_flight_on(1).empty());
    EXPECT_FALSE(rails[1].up);
    EXPECT_EQ(rails[1].in_flight_slices, 0U);
    EXPECT_EQ(rails[1].in_flight_bytes, 0U);
    EXPECT_EQ(rails[1].down_because, "no completion");
    EXPECT_EQ(rails.due_for_retry(now + std::chrono::milliseconds(500)),
              std::vector<std::size_t>{1});
    EXPECT_EQ(batch.reposted(), 2U);
    EXPECT_EQ(*batch.next_slice(), 3U);  // first in line again
}

TEST(TransferBatch, NoRailLeftSaysWhy) {
    Rails rails(2, RailPolicy::kScore, 8);
    const auto now = Clock::now();
    rails.posted(0, 10, now);
    rails.posted(1, 10, now);
    rails.failed(0, 10, "IBV_WC_RETRY_EXC_ERR (12)", now);
    rails.failed(1, 10, "IBV_WC_WR_FLUSH_ERR (5)", now);
    EXPECT_FALSE(rails.any_up());
    EXPECT_FALSE(rails.choose(10));
    EXPECT_EQ(rails.why_all_down(),
              "rail 1: IBV_WC_RETRY_EXC_ERR (12); rail 2: IBV_WC_WR_FLUSH_ERR (5)");
}

TEST(TransferRails, ADownRailIsTriedAgainAfterABackOffThatDoublesWhileItFails) {
    using std::chrono::milliseconds;
    Rails rails(2, RailPolicy::kRoundRobin, 4,
                {.first = milliseconds(100), .longest = milliseconds(300)});
    auto t = Clock::now();
    rails.posted(1, 10, t);
    rails.posted(1, 10, t);
    rails.failed(1, 10, "IBV_WC_RETRY_EXC_ERR", t);
    // Down, and not due while a flush of its old QP is outstanding, nor before its back-off.
    EXPECT_TRUE(rails.due_for_retry(t + milliseconds(200)).empty());
    rails.failed(1, 10, "IBV_WC_WR_FLUSH_ERR", t);
    EXPECT_EQ(rails[1].failures, 1U);
    EXPECT_TRUE(rails.due_for_retry(t + milliseconds(99)).empty());
    EXPECT_EQ(rails.due_for_retry(t + milliseconds(100)), std::vector<std::size_t>{1});
    // The probe of its fresh QP fails: down again, for 200 ms; a renewal that reaches no
    // peer: 300 ms (the longest); again: still 300.
    t += milliseconds(100);
    rails.probing(1);
    EXPECT_TRUE(rails.due_for_retry(t).empty());
    EXPECT_EQ(rails.choose(10), 0U);
    EXPECT_EQ(rails.choose(10), 0U);  // a probing rail takes no slice
    rails.posted(1, 0, t);
    rails.failed(1, 0, "IBV_WC_RETRY_EXC_ERR", t);
    EXPECT_EQ(rails[1].retry_at - t, milliseconds(200));
    t += milliseconds(200);
    rails.retry_failed(1, "the peer did not answer", t);
    EXPECT_EQ(rails[1].retry_at - t, milliseconds(300));
    t += milliseconds(300);
    rails.retry_failed(1, "the peer did not answer", t);
    EXPECT_EQ(rails[1].retry_at - t, milliseconds(300));
    EXPECT_EQ(rails[1].failures, 4U);
    // Its probe completes: up, chosen again; after it has stayed up as long as it last
    // waited, the back-off starts afresh.
    t += milliseconds(300);
    rails.probing(1);
    rails.posted(1, 0, t);
    rails.completed(1, 0, t);
    rails.restored(1, t);
    EXPECT_TRUE(rails[1].up);
    EXPECT_EQ(rails[1].restored, 1U);
    EXPECT_EQ(rails.choose(10), 1U);
    rails.posted(1, 10, t);
    rails.completed(1, 10, t + milliseconds(300));
    rails.posted(1, 10, t);
    rails.failed(1, 10, "IBV_WC_RETRY_EXC_ERR", t + milliseconds(301));
    EXPECT_EQ(rails[1].retry_at - (t + milliseconds(301)), milliseconds(100));
}

TEST(TransferRails, ARetryOfZeroLeavesADownRailDown) {
    Rails rails(2, RailPolicy::kScore, 4, {.first = std::chrono::milliseconds(0)});
    const auto t = Clock::now();
    rails.posted(0, 10, t);
    rails.failed(0, 10, "IBV_WC_RETRY_EXC_ERR", t);
    EXPECT_TRUE(rails.due_for_retry(t + std::chrono::hours(1)).empty());
}

}  // namespace
