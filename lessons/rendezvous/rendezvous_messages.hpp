// The rendezvous lesson's two messages, in a header of their own so that its fuzz target
// (tests/fuzz/lesson_rendezvous.cpp) reads them exactly as the lesson does. Big-endian
// (codec.hpp), so the tags read as their letters on the wire.
//   offer, client → server, 28 bytes: "RNDV", then a buffer advertisement (private_data.hpp's
//          wire format) the server may RDMA READ;
//   FIN,   server → client, 8 bytes: "FIN\0", then the number of bytes the server verified.
#pragma once

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/private_data.hpp"

#include <fmt/core.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace rdmalab::rendezvous {

constexpr std::size_t kOfferBytes = 4 + kRemoteBufferWireSize;
constexpr std::size_t kFinBytes = 8;
constexpr std::uint32_t kOfferTag = 0x524e4456;  // "RNDV": read my buffer (kReadSource)
constexpr std::uint32_t kFinTag = 0x46494e00;    // "FIN\0"

using OfferMessage = std::array<std::byte, kOfferBytes>;
using FinMessage = std::array<std::byte, kFinBytes>;

inline OfferMessage make_offer(const RemoteBuffer& buffer) {
    OfferMessage message{};
    ByteWriter out(message, "the offer");
    out.u32(kOfferTag);
    out.bytes(encode_remote_buffer(buffer));
    out.expect_end();
    return message;
}

// The client's offer as the server reads it: the received bytes, checked before use. Returns
// the buffer advertisement, which the server decodes (for kReadSource) where it uses it.
inline std::span<const std::byte> read_offer(std::span<const std::byte> received) {
    if (received.size() != kOfferBytes)
        fail(fmt::format("expected a {}-byte offer, got {} bytes", kOfferBytes, received.size()));
    ByteReader in(received, "the client's offer");
    if (const std::uint32_t tag = in.u32(); tag != kOfferTag)
        fail(fmt::format("expected the offer tag {:#010x}, got {:#010x}", kOfferTag, tag));
    return in.bytes(kRemoteBufferWireSize);
}

inline FinMessage make_fin(std::uint32_t verified) {
    FinMessage message{};
    ByteWriter out(message, "the FIN message");
    out.u32(kFinTag);
    out.u32(verified);
    return message;
}

// The server's FIN as the client reads it: the number of bytes the server verified.
inline std::uint32_t read_fin(std::span<const std::byte> received) {
    if (received.size() != kFinBytes)
        fail(fmt::format("expected an {}-byte FIN, got {} bytes", kFinBytes, received.size()));
    ByteReader in(received, "the server's FIN");
    if (const std::uint32_t tag = in.u32(); tag != kFinTag)
        fail(fmt::format("expected the FIN tag {:#010x}, got {:#010x}", kFinTag, tag));
    return in.u32();
}

}  // namespace rdmalab::rendezvous
