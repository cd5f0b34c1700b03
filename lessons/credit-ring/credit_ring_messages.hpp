// The credit-ring lesson's one message, in a header of its own so that its fuzz target
// (tests/fuzz/lesson_credit_ring.cpp) reads it exactly as the lesson does.
//   ring request, client → server, 32 bytes: "RING", then the advertisement (private_data.hpp's
//   wire format) of the client's credit word, then the number of messages the ring will carry.
// Big-endian (codec.hpp), so the tag reads as its letters on the wire.
#pragma once

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/private_data.hpp"

#include <fmt/core.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace rdmalab::credit_ring {

constexpr std::size_t kRequestBytes = 4 + kRemoteBufferWireSize + 4;
constexpr std::uint32_t kRingTag = 0x52494e47;  // "RING": my credit word (kWriteTarget), a count
constexpr std::uint32_t kMaxRingMessages = 1'000'000;

using RequestMessage = std::array<std::byte, kRequestBytes>;

inline RequestMessage make_request(const RemoteBuffer& credit_word, std::uint32_t count) {
    RequestMessage message{};
    ByteWriter out(message, "the ring request");
    out.u32(kRingTag);
    out.bytes(encode_remote_buffer(credit_word));
    out.u32(count);
    out.expect_end();
    return message;
}

// The client's request as the server reads it: the received bytes, checked before use. The
// credit word's advertisement is decoded (for kWriteTarget) where it is used.
struct RingRequest {
    std::span<const std::byte> credit_word;
    std::uint32_t count = 0;
};
inline RingRequest read_request(std::span<const std::byte> received) {
    if (received.size() != kRequestBytes)
        fail(fmt::format("expected a {}-byte ring request, got {} bytes", kRequestBytes,
                         received.size()));
    ByteReader in(received, "the client's ring request");
    if (const std::uint32_t tag = in.u32(); tag != kRingTag)
        fail(fmt::format("expected the ring tag {:#010x}, got {:#010x}", kRingTag, tag));
    RingRequest request;
    request.credit_word = in.bytes(kRemoteBufferWireSize);
    request.count = in.u32();
    if (request.count == 0 || request.count > kMaxRingMessages)
        fail(fmt::format("the client announces {} ring messages; 1 to {} are allowed",
                         request.count, kMaxRingMessages));
    return request;
}

}  // namespace rdmalab::credit_ring
