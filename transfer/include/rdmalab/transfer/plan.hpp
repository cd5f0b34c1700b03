// The transfer engine's logic, without verbs: what a peer is told about a segment and a rail,
// how a batch's requests become slices, which rail a slice goes to, and what a batch's state is
// while its slices complete, fail over and land. In the manner of Mooncake's Transfer Engine
// and NVIDIA NIXL: register, describe, submit a batch, poll, notify.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace rdmalab::transfer {

using Clock = std::chrono::steady_clock;

inline constexpr std::uint32_t kMaxRails = 8;
// QPs on one rail to the same peer: each its own UDP source port (RoCE v2 takes it from the QP),
// so a fabric that hashes ports spreads them over its paths, and a NIC works on them in parallel.
inline constexpr std::uint32_t kMaxQpsPerRail = 8;

// ---- What the peer is told (big-endian, through codec.hpp; checked on arrival).

// One QP of a rail: "TRRL" | rail (1) | MTU bytes (2) | QP of the rail (1) | QPN (4) | PSN (4) |
// GID (16)
struct RailEndpoint {
    std::uint8_t rail = 0;
    std::uint16_t mtu = 1024;
    std::uint8_t qp = 0;  // which of the rail's QPs, from 0
    std::uint32_t qpn = 0;
    std::uint32_t psn = 0;
    std::array<std::uint8_t, 16> gid{};
};
inline constexpr std::size_t kRailEndpointBytes = 32;

// A registered segment: "TRSG" | id (4) | address (8) | length (8) | rails (4) | rkey per rail (4
// each). The same bytes are registered on every rail's device, each with a key of its own.
struct SegmentDescriptor {
    std::uint32_t id = 0;
    std::uint64_t address = 0;
    std::uint64_t length = 0;
    std::vector<std::uint32_t> rkeys;  // one per rail, in rail order
};

std::vector<std::byte> encode(const RailEndpoint& endpoint);
std::vector<std::byte> encode(const SegmentDescriptor& segment);
// The record, or why it was refused: wrong size or magic, a QPN or PSN wider than 24 bits, an
// MTU that is no IB MTU, a QP index of kMaxQpsPerRail or more; a segment of length 0, one that
// wraps, no rails or more than kMaxRails.
std::variant<RailEndpoint, std::string> decode_rail_endpoint(std::span<const std::byte> bytes);
std::variant<SegmentDescriptor, std::string> decode_segment(std::span<const std::byte> bytes);

// ---- A batch.

enum class Opcode { kRead, kWrite };

// One transfer of a batch: `length` bytes between the local segment at local_offset and the
// peer's segment `remote_segment` at remote_offset. WRITE sends local to remote; READ fetches.
struct Request {
    Opcode opcode = Opcode::kWrite;
    std::uint32_t local_segment = 0;
    std::uint64_t local_offset = 0;
    std::uint32_t remote_segment = 0;
    std::uint64_t remote_offset = 0;
    std::uint64_t length = 0;
};

// A piece of one request, posted as one work request on one rail.
struct Slice {
    std::uint32_t request = 0;  // index in the batch
    std::uint64_t offset = 0;   // within the request
    std::uint32_t length = 0;
};

// Why `request` cannot be carried out between a local segment of local_length bytes and a remote
// one of remote_length, or nullopt: a length of 0, a range past either end (or one that wraps).
std::optional<std::string> refuse_request(const Request& request, std::uint64_t local_length,
                                          std::uint64_t remote_length);

// The batch's requests cut into slices of at most slice_bytes, in order.
std::vector<Slice> cut_into_slices(std::span<const Request> requests, std::uint32_t slice_bytes);

// ---- Rails: which are healthy, and which takes the next slice.

enum class RailPolicy { kRoundRobin, kScore };

// How long an RC QP takes to give up on a dead path: retry_cnt + 1 sends, each waiting
// 4.096 us x 2^timeout for its ACK (14 and 3: 268 ms; NCCL's 20 and 7: 34 s).
std::chrono::nanoseconds retry_time(unsigned retry_cnt, unsigned timeout);

// When a rail that went down is tried again: after `first`, then twice as long after each
// failure in a row, up to `longest` (Mooncake pauses a path for 30 s, doubling to 300 s). A
// `first` of zero: a rail that went down stays down.
struct RailRetry {
    std::chrono::milliseconds first{1000};
    std::chrono::milliseconds longest{30000};
};

struct RailState {
    bool up = true;
    // Down, with a fresh QP whose probe (a WRITE of no bytes) is in flight: not chosen until
    // the probe completes, so a rail still dead costs no slice the time of its retries.
    bool probing = false;
    std::string down_because;  // the completion status that took it down
    Clock::time_point down_since{};
    Clock::time_point retry_at{};  // when a down rail is next tried
    Clock::duration backoff{};     // the wait after its next failure
    Clock::duration last_wait{};   // the wait before its latest try
    std::uint32_t failures = 0;    // times it went down (a failed probe or renewal included)
    // Its first failure's time from its last successful completion: how long the death of a
    // path that had been carrying slices took to be noticed.
    std::optional<Clock::duration> first_detection{};
    std::uint32_t restored = 0;  // times it came back
    Clock::time_point restored_at{};
    std::uint64_t in_flight_bytes = 0;
    std::uint32_t in_flight_slices = 0;  // slices, notifications and probes not yet completed
    std::uint64_t bytes_done = 0;
    Clock::time_point last_completed{};  // its latest successful completion
    Clock::duration busy{};              // time with at least one slice in flight
    Clock::time_point busy_since{};
};

class Rails {
  public:
    Rails(std::size_t count, RailPolicy policy, std::uint32_t max_in_flight, RailRetry retry = {});
    // The rail for a slice of `length` bytes: round-robin over the healthy rails with room, or
    // the one with the least (in-flight bytes + length) / measured bandwidth (Mooncake's score).
    // nullopt when every healthy rail is full, or none is healthy.
    std::optional<std::size_t> choose(std::uint32_t length);
    void posted(std::size_t rail, std::uint32_t length, Clock::time_point now);
    void completed(std::size_t rail, std::uint32_t length, Clock::time_point now);
    // A work request on `rail` failed: the rail is down from now on (its other work requests
    // flush), to be tried again after its back-off, which then doubles.
    void failed(std::size_t rail, std::uint32_t length, const std::string& why,
                Clock::time_point now);
    // The down rails due to be tried again: back-off passed, not probing, and every work
    // request of the old QP accounted for (so the QP can go).
    std::vector<std::size_t> due_for_retry(Clock::time_point now) const;
    // A retry reached no peer (its new QP could not be connected): down again, back-off doubled.
    void retry_failed(std::size_t rail, const std::string& why, Clock::time_point now);
    // A rail whose QPs held work with no completion long after they should have failed: they
    // are gone (destroyed), what they held is no longer in flight, and the rail is down.
    void gave_up(std::size_t rail, const std::string& why, Clock::time_point now);
    void probing(std::size_t rail);                          // a fresh QP's probe is in flight
    void restored(std::size_t rail, Clock::time_point now);  // the probe completed: up again
    bool any_up() const;
    std::size_t count() const { return rails_.size(); }
    const RailState& operator[](std::size_t rail) const { return rails_[rail]; }
    // Why none is up: "rail 1: transport retry counter exceeded; rail 2: …".
    std::string why_all_down() const;

  private:
    double bandwidth(std::size_t rail) const;  // bytes per second done while busy, or a prior
    void went_down(RailState& state, const std::string& why, Clock::time_point now);

    std::vector<RailState> rails_;
    RailPolicy policy_;
    std::uint32_t max_in_flight_;
    RailRetry retry_;
    std::size_t next_ = 0;  // round-robin's next rail to try
};

// ---- One batch's slices as they are posted, complete, fail over and land.

enum class BatchState { kPending, kNotifying, kCompleted, kFailed };

class BatchProgress {
  public:
    BatchProgress(std::vector<Slice> slices, bool notify);
    // The next slice to post (one never posted, or one whose rail failed), or nullopt.
    std::optional<std::uint32_t> next_slice();
    void posted(std::uint32_t slice, std::size_t rail);
    void completed(std::uint32_t slice);  // it landed: never posted again
    // Its rail failed before it completed: posted again, on another rail. A slice that had
    // completed is not (a flushed duplicate is ignored).
    void failed(std::uint32_t slice);
    // Every slice landed: with a notification, it is due now (QPs on different rails do not
    // order each other, so only after every slice's completion); then the batch is done.
    bool all_landed() const { return landed_ == slices_.size(); }
    void notification_posted() { state_ = BatchState::kNotifying; }
    void notification_failed() { state_ = BatchState::kPending; }  // sent again, elsewhere
    void notification_completed() { state_ = BatchState::kCompleted; }
    void completed_without_notification() { state_ = BatchState::kCompleted; }
    void fail(std::string why);
    BatchState state() const { return state_; }
    bool notify() const { return notify_; }
    const std::string& error() const { return error_; }
    const Slice& slice(std::uint32_t index) const { return slices_[index]; }
    std::size_t slices() const { return slices_.size(); }
    std::size_t landed() const { return landed_; }
    std::uint32_t reposted() const { return reposted_; }  // slices posted again after a failure
    // The rail each slice landed through (when it has): for the per-rail counts.
    std::optional<std::size_t> landed_on(std::uint32_t slice) const;
    // The slices in flight on `rail`.
    std::vector<std::uint32_t> in_flight_on(std::size_t rail) const;

  private:
    enum class SliceState : std::uint8_t { kWaiting, kInFlight, kLanded };
    std::vector<Slice> slices_;
    std::vector<SliceState> states_;
    std::vector<std::size_t> rails_;
    std::deque<std::uint32_t> waiting_;
    std::size_t landed_ = 0;
    std::uint32_t reposted_ = 0;
    bool notify_;
    BatchState state_ = BatchState::kPending;
    std::string error_;
};

}  // namespace rdmalab::transfer
