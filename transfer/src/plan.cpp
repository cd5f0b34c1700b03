#include "rdmalab/transfer/plan.hpp"

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <limits>

namespace rdmalab::transfer {

namespace {

constexpr std::uint32_t kRailMagic = 0x5452524c;     // "TRRL"
constexpr std::uint32_t kSegmentMagic = 0x54525347;  // "TRSG"
constexpr std::size_t kSegmentFixedBytes = 28;

bool is_ib_mtu(std::uint32_t bytes) {
    return bytes == 256 || bytes == 512 || bytes == 1024 || bytes == 2048 || bytes == 4096;
}

}  // namespace

std::vector<std::byte> encode(const RailEndpoint& endpoint) {
    std::vector<std::byte> bytes;
    ByteWriter writer(bytes, "a rail's endpoint");
    writer.u32(kRailMagic);
    writer.u8(endpoint.rail);
    writer.u16(endpoint.mtu);
    writer.u8(endpoint.qp);
    writer.u32(endpoint.qpn);
    writer.u32(endpoint.psn);
    writer.bytes(std::as_bytes(std::span(endpoint.gid)));
    return bytes;
}

std::vector<std::byte> encode(const SegmentDescriptor& segment) {
    std::vector<std::byte> bytes;
    ByteWriter writer(bytes, "a segment's descriptor");
    writer.u32(kSegmentMagic);
    writer.u32(segment.id);
    writer.u64(segment.address);
    writer.u64(segment.length);
    writer.u32(static_cast<std::uint32_t>(segment.rkeys.size()));
    for (std::uint32_t rkey : segment.rkeys) writer.u32(rkey);
    return bytes;
}

std::variant<RailEndpoint, std::string> decode_rail_endpoint(std::span<const std::byte> bytes) {
    if (bytes.size() != kRailEndpointBytes)
        return fmt::format("a rail's endpoint of {} bytes (it has {})", bytes.size(),
                           kRailEndpointBytes);
    ByteReader reader(bytes, "a rail's endpoint");
    if (reader.u32() != kRailMagic) return std::string("a rail's endpoint without its magic");
    RailEndpoint endpoint;
    endpoint.rail = reader.u8();
    endpoint.mtu = reader.u16();
    endpoint.qp = reader.u8();
    endpoint.qpn = reader.u32();
    endpoint.psn = reader.u32();
    auto gid = reader.bytes(16);
    std::transform(gid.begin(), gid.end(), endpoint.gid.begin(),
                   [](std::byte b) { return std::to_integer<std::uint8_t>(b); });
    if (endpoint.rail >= kMaxRails)
        return fmt::format("a rail's endpoint for rail {} (at most {} rails)", endpoint.rail + 1,
                           kMaxRails);
    if (!is_ib_mtu(endpoint.mtu))
        return fmt::format("rail {}: an MTU of {} bytes is no InfiniBand MTU", endpoint.rail + 1,
                           endpoint.mtu);
    if (endpoint.qp >= kMaxQpsPerRail)
        return fmt::format("rail {}: an endpoint for its QP {} (at most {} QPs a rail)",
                           endpoint.rail + 1, endpoint.qp + 1, kMaxQpsPerRail);
    if (endpoint.qpn > 0xffffff || endpoint.psn > 0xffffff)
        return fmt::format("rail {}: a QPN ({:#x}) or PSN ({:#x}) wider than 24 bits",
                           endpoint.rail + 1, endpoint.qpn, endpoint.psn);
    // QPs 0 and 1 are each port's management QPs: no peer's connected QP is either.
    if (endpoint.qpn < 2)
        return fmt::format("rail {}: QPN {} is a management QP's", endpoint.rail + 1, endpoint.qpn);
    return endpoint;
}

std::variant<SegmentDescriptor, std::string> decode_segment(std::span<const std::byte> bytes) {
    if (bytes.size() < kSegmentFixedBytes)
        return fmt::format("a segment's descriptor of {} bytes (at least {})", bytes.size(),
                           kSegmentFixedBytes);
    ByteReader reader(bytes, "a segment's descriptor");
    if (reader.u32() != kSegmentMagic)
        return std::string("a segment's descriptor without its magic");
    SegmentDescriptor segment;
    segment.id = reader.u32();
    segment.address = reader.u64();
    segment.length = reader.u64();
    const std::uint32_t rails = reader.u32();
    if (rails == 0 || rails > kMaxRails)
        return fmt::format("segment {}: keys for {} rails (1 to {})", segment.id, rails, kMaxRails);
    if (reader.remaining() != std::size_t{rails} * 4)
        return fmt::format("segment {}: {} bytes of keys for {} rails", segment.id,
                           reader.remaining(), rails);
    for (std::uint32_t rail = 0; rail < rails; ++rail) segment.rkeys.push_back(reader.u32());
    if (segment.length == 0) return fmt::format("segment {}: a length of 0", segment.id);
    if (segment.address > std::numeric_limits<std::uint64_t>::max() - segment.length)
        return fmt::format("segment {}: {} bytes at {:#x} wrap around", segment.id, segment.length,
                           segment.address);
    return segment;
}

std::optional<std::string> refuse_request(const Request& request, std::uint64_t local_length,
                                          std::uint64_t remote_length) {
    if (request.length == 0) return std::string("a request of 0 bytes");
    if (request.local_offset > local_length || request.length > local_length - request.local_offset)
        return fmt::format("{} bytes at offset {} of local segment {} pass its end ({} bytes)",
                           request.length, request.local_offset, request.local_segment,
                           local_length);
    if (request.remote_offset > remote_length ||
        request.length > remote_length - request.remote_offset)
        return fmt::format("{} bytes at offset {} of remote segment {} pass its end ({} bytes)",
                           request.length, request.remote_offset, request.remote_segment,
                           remote_length);
    return std::nullopt;
}

std::vector<Slice> cut_into_slices(std::span<const Request> requests, std::uint32_t slice_bytes) {
    if (slice_bytes == 0) fail("cut_into_slices: slices of 0 bytes");
    std::vector<Slice> slices;
    for (std::size_t r = 0; r < requests.size(); ++r)
        for (std::uint64_t offset = 0; offset < requests[r].length; offset += slice_bytes)
            slices.push_back({static_cast<std::uint32_t>(r), offset,
                              static_cast<std::uint32_t>(std::min<std::uint64_t>(
                                  slice_bytes, requests[r].length - offset))});
    return slices;
}

// ---- Rails

Rails::Rails(std::size_t count, RailPolicy policy, std::uint32_t max_in_flight, RailRetry retry)
    : rails_(count), policy_(policy), max_in_flight_(max_in_flight), retry_(retry) {
    if (count == 0 || count > kMaxRails) fail(fmt::format("{} rails (1 to {})", count, kMaxRails));
    if (retry_.longest < retry_.first) retry_.longest = retry_.first;
    for (RailState& state : rails_) state.backoff = retry_.first;
}

double Rails::bandwidth(std::size_t rail) const {
    const RailState& state = rails_[rail];
    const double seconds = std::chrono::duration<double>(state.busy).count();
    // Until a rail has carried something, every rail is taken to be as fast as the others.
    return state.bytes_done > 0 && seconds > 0 ? state.bytes_done / seconds : 1.0;
}

std::optional<std::size_t> Rails::choose(std::uint32_t length) {
    std::optional<std::size_t> best;
    double best_score = 0;
    for (std::size_t i = 0; i < rails_.size(); ++i) {
        const std::size_t rail = (next_ + i) % rails_.size();
        const RailState& state = rails_[rail];
        if (!state.up || state.in_flight_slices >= max_in_flight_) continue;
        if (policy_ == RailPolicy::kRoundRobin) {
            next_ = (rail + 1) % rails_.size();
            return rail;
        }
        // A rail that has measured nothing yet scores as if it were as fast as the fastest.
        double speed = bandwidth(rail);
        if (state.bytes_done == 0)
            for (std::size_t other = 0; other < rails_.size(); ++other)
                speed = std::max(speed, bandwidth(other));
        const double score = static_cast<double>(state.in_flight_bytes + length) / speed;
        if (!best || score < best_score) {
            best = rail;
            best_score = score;
        }
    }
    return best;
}

void Rails::posted(std::size_t rail, std::uint32_t length, Clock::time_point now) {
    RailState& state = rails_[rail];
    if (state.in_flight_slices++ == 0) state.busy_since = now;
    state.in_flight_bytes += length;
}

void Rails::completed(std::size_t rail, std::uint32_t length, Clock::time_point now) {
    RailState& state = rails_[rail];
    if (state.in_flight_slices == 0)
        fail(fmt::format("rail {}: a completion never posted", rail + 1));
    state.in_flight_bytes -= length;
    state.bytes_done += length;
    state.last_completed = now;
    if (--state.in_flight_slices == 0) state.busy += now - state.busy_since;
    // Back for as long as it last waited: the next failure starts the back-off afresh. A rail
    // that fails again sooner waits longer each time.
    if (state.up && state.backoff > retry_.first && now - state.restored_at >= state.last_wait)
        state.backoff = retry_.first;
}

void Rails::went_down(RailState& state, const std::string& why, Clock::time_point now) {
    if (state.failures == 0 && state.bytes_done > 0)
        state.first_detection = now - state.last_completed;
    state.up = false;
    state.probing = false;
    state.down_because = why;
    state.down_since = now;
    ++state.failures;
    state.retry_at = now + state.backoff;
    state.last_wait = state.backoff;
    state.backoff = std::min<Clock::duration>(state.backoff * 2, retry_.longest);
}

void Rails::failed(std::size_t rail, std::uint32_t length, const std::string& why,
                   Clock::time_point now) {
    RailState& state = rails_[rail];
    if (state.in_flight_slices == 0) fail(fmt::format("rail {}: a failure never posted", rail + 1));
    state.in_flight_bytes -= length;
    if (--state.in_flight_slices == 0) state.busy += now - state.busy_since;
    if (state.up || state.probing) went_down(state, why, now);
}

std::vector<std::size_t> Rails::due_for_retry(Clock::time_point now) const {
    std::vector<std::size_t> due;
    if (retry_.first.count() == 0) return due;
    for (std::size_t rail = 0; rail < rails_.size(); ++rail) {
        const RailState& state = rails_[rail];
        if (!state.up && !state.probing && state.in_flight_slices == 0 && now >= state.retry_at)
            due.push_back(rail);
    }
    return due;
}

void Rails::retry_failed(std::size_t rail, const std::string& why, Clock::time_point now) {
    went_down(rails_[rail], why, now);
}

std::chrono::nanoseconds retry_time(unsigned retry_cnt, unsigned timeout) {
    return (retry_cnt + 1) * std::chrono::nanoseconds(4096) * (std::int64_t{1} << timeout);
}

void Rails::gave_up(std::size_t rail, const std::string& why, Clock::time_point now) {
    RailState& state = rails_[rail];
    if (state.in_flight_slices > 0) state.busy += now - state.busy_since;
    state.in_flight_slices = 0;
    state.in_flight_bytes = 0;
    if (state.up) went_down(state, why, now);
}

void Rails::probing(std::size_t rail) {
    rails_[rail].probing = true;
}

void Rails::restored(std::size_t rail, Clock::time_point now) {
    RailState& state = rails_[rail];
    state.up = true;
    state.probing = false;
    state.down_because.clear();
    ++state.restored;
    state.restored_at = now;
}

bool Rails::any_up() const {
    return std::any_of(rails_.begin(), rails_.end(), [](const RailState& s) { return s.up; });
}

std::string Rails::why_all_down() const {
    std::string why;
    for (std::size_t rail = 0; rail < rails_.size(); ++rail)
        if (!rails_[rail].up)
            why += fmt::format("{}rail {}: {}", why.empty() ? "" : "; ", rail + 1,
                               rails_[rail].down_because);
    return why;
}

// ---- BatchProgress

BatchProgress::BatchProgress(std::vector<Slice> slices, bool notify)
    : slices_(std::move(slices)),
      states_(slices_.size(), SliceState::kWaiting),
      rails_(slices_.size(), 0),
      notify_(notify) {
    for (std::uint32_t i = 0; i < slices_.size(); ++i) waiting_.push_back(i);
}

std::optional<std::uint32_t> BatchProgress::next_slice() {
    if (waiting_.empty() || state_ == BatchState::kFailed) return std::nullopt;
    return waiting_.front();
}

void BatchProgress::posted(std::uint32_t slice, std::size_t rail) {
    if (waiting_.empty() || waiting_.front() != slice)
        rdmalab::fail(fmt::format("slice {} posted out of turn", slice));
    waiting_.pop_front();
    states_[slice] = SliceState::kInFlight;
    rails_[slice] = rail;
}

void BatchProgress::completed(std::uint32_t slice) {
    if (states_[slice] != SliceState::kInFlight)
        rdmalab::fail(fmt::format("slice {} completed while not in flight", slice));
    states_[slice] = SliceState::kLanded;
    ++landed_;
}

void BatchProgress::failed(std::uint32_t slice) {
    if (states_[slice] != SliceState::kInFlight) return;
    states_[slice] = SliceState::kWaiting;
    waiting_.push_front(slice);  // first in line: the batch waits on it
    ++reposted_;
}

void BatchProgress::fail(std::string why) {
    state_ = BatchState::kFailed;
    error_ = std::move(why);
}

std::vector<std::uint32_t> BatchProgress::in_flight_on(std::size_t rail) const {
    std::vector<std::uint32_t> slices;
    for (std::uint32_t s = 0; s < states_.size(); ++s)
        if (states_[s] == SliceState::kInFlight && rails_[s] == rail) slices.push_back(s);
    return slices;
}

std::optional<std::size_t> BatchProgress::landed_on(std::uint32_t slice) const {
    if (states_[slice] != SliceState::kLanded) return std::nullopt;
    return rails_[slice];
}

}  // namespace rdmalab::transfer
