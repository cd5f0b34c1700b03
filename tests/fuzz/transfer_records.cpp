// Fuzzes what a transfer engine's peer sends before and during a run (transfer/plan.hpp): a
// rail's endpoint and a segment's descriptor, and refuse_request over a request and segment
// lengths taken from the bytes. Checks: a record or a non-empty reason; an accepted endpoint is
// 32 bytes, re-encodes to the same bytes, has a QPN of 2 to 2^24 - 1, a 24-bit PSN and an IB MTU;
// an accepted segment re-encodes to the same bytes, is not empty, does not wrap, and has 1 to
// kMaxRails keys; refuse_request passes exactly the requests whose ranges lie inside both segments.
#include "fuzz.hpp"
#include "rdmalab/transfer/plan.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

using namespace rdmalab;
using namespace rdmalab::transfer;

namespace {

bool inside(std::uint64_t offset, std::uint64_t length, std::uint64_t segment) {
    return offset <= segment && length <= segment - offset;
}

std::uint64_t u64_at(std::span<const std::byte> bytes, std::size_t index) {
    std::uint64_t value = 0;
    std::memcpy(&value, bytes.data() + index * 8, 8);
    return value;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto wire = fuzz::bytes(data, size);
    const auto endpoint = decode_rail_endpoint(wire);
    if (const auto* why = std::get_if<std::string>(&endpoint)) {
        FUZZ_CHECK(!why->empty());
    } else {
        const RailEndpoint& e = std::get<RailEndpoint>(endpoint);
        FUZZ_CHECK(wire.size() == kRailEndpointBytes);
        FUZZ_CHECK(std::ranges::equal(encode(e), wire));
        FUZZ_CHECK(e.qpn >= 2 && e.qpn <= 0xffffff && e.psn <= 0xffffff);
        FUZZ_CHECK(e.mtu == 256 || e.mtu == 512 || e.mtu == 1024 || e.mtu == 2048 || e.mtu == 4096);
    }
    const auto segment = decode_segment(wire);
    if (const auto* why = std::get_if<std::string>(&segment)) {
        FUZZ_CHECK(!why->empty());
    } else {
        const SegmentDescriptor& s = std::get<SegmentDescriptor>(segment);
        FUZZ_CHECK(std::ranges::equal(encode(s), wire));
        FUZZ_CHECK(s.length > 0 &&
                   s.address <= std::numeric_limits<std::uint64_t>::max() - s.length);
        FUZZ_CHECK(!s.rkeys.empty() && s.rkeys.size() <= kMaxRails);
    }
    if (wire.size() >= 5 * 8) {
        const Request request{.opcode = (u64_at(wire, 0) & 1) ? Opcode::kRead : Opcode::kWrite,
                              .local_offset = u64_at(wire, 0) >> 1,
                              .remote_offset = u64_at(wire, 1),
                              .length = u64_at(wire, 2)};
        const std::uint64_t local = u64_at(wire, 3), remote = u64_at(wire, 4);
        const auto why = refuse_request(request, local, remote);
        const bool fits = request.length > 0 &&
                          inside(request.local_offset, request.length, local) &&
                          inside(request.remote_offset, request.length, remote);
        FUZZ_CHECK(fits == !why.has_value());
        FUZZ_CHECK(!why || !why->empty());
    }
    return 0;
}
