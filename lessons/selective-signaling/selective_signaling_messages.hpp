// The selective-signaling lesson's control messages, in a header of their own so that its fuzz
// target (tests/fuzz/lesson_selective_signaling.cpp) reads them exactly as the lesson does.
#pragma once

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <array>
#include <cstddef>
#include <cstdint>

namespace rdmalab::selective_signaling {

// Control messages (SEND): six big-endian words. The plan goes first, while the send queue is
// still empty; "done" after the last write; the server's verdict last.
enum class Kind : std::uint32_t { kPlan = 1, kDone, kVerified };
struct Message {
    Kind kind{};
    std::uint32_t writes = 0, size = 0, signal_every = 0, sq_depth = 0, last = 0;
};
using MessageWire = std::array<std::byte, 24>;

inline MessageWire encode(const Message& m) {
    MessageWire wire{};
    ByteWriter out(wire, "the control message");
    for (std::uint32_t word :
         {static_cast<std::uint32_t>(m.kind), m.writes, m.size, m.signal_every, m.sq_depth, m.last})
        out.u32(word);
    out.expect_end();
    return wire;
}
inline Message decode(const MessageWire& wire, std::uint32_t byte_len, Kind expected) {
    if (byte_len != wire.size())
        fail(fmt::format("a control message of {} bytes, expected {}", byte_len, wire.size()));
    ByteReader in(wire, "the peer's control message");
    if (const std::uint32_t kind = in.u32(); kind != static_cast<std::uint32_t>(expected))
        fail(fmt::format("expected control message kind {}, got {}",
                         static_cast<std::uint32_t>(expected), kind));
    // Braced initializers are evaluated in order: the words are read as they are laid out.
    return {expected, in.u32(), in.u32(), in.u32(), in.u32(), in.u32()};
}

}  // namespace rdmalab::selective_signaling
