// Fuzzes the selective-signaling lesson's control messages, with the header the lesson reads them
// with (lessons/selective-signaling/selective_signaling_messages.hpp): decode, for each kind a side
// may expect, given the bytes and the byte_len its receive completed with. Checks: only
// rdmalab::Error refuses; an accepted message is 24 bytes of the expected kind and encode writes it
// back to the same bytes.
#include "../../lessons/selective-signaling/selective_signaling_messages.hpp"
#include "fuzz.hpp"

#include <algorithm>

using namespace rdmalab::selective_signaling;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // The receive buffer holds 24 bytes; the completion's byte_len says how many arrived.
    MessageWire wire{};
    std::copy_n(data, std::min(size, wire.size()), reinterpret_cast<std::uint8_t*>(wire.data()));
    const auto byte_len = static_cast<std::uint32_t>(size);
    for (Kind expected : {Kind::kPlan, Kind::kDone, Kind::kVerified}) {
        Message message;
        if (!rdmalab::fuzz::accepts([&] { message = decode(wire, byte_len, expected); })) continue;
        FUZZ_CHECK(size == wire.size() && message.kind == expected);
        FUZZ_CHECK(encode(message) == wire);
    }
    return 0;
}
