// The srq lesson's messages, in a header of their own so that its fuzz target
// (tests/fuzz/lesson_srq.cpp) reads them exactly as the lesson does.
#pragma once

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace rdmalab::srq {

constexpr std::uint32_t kMaxMessages = 1000;
constexpr std::uint32_t kMaxClients = 64;
constexpr std::size_t kMessageHeader = 8;  // index and count, big-endian, then the pattern

// Server → client, 12 bytes: "go" (your number, how many clients, the largest message the
// SRQ's buffers take), then later "verified" (your number, messages verified).
using Control = std::array<std::byte, 12>;

// The "go" message: written by the server; as the client reads it, the received bytes, checked
// before use.
struct Go {
    std::uint32_t number = 0, clients = 0, largest = 0;
};
inline Control encode_go(const Go& go) {
    Control message{};
    ByteWriter out(message, "the control message");
    out.u32(go.number);
    out.u32(go.clients);
    out.u32(go.largest);
    return message;
}
inline Go read_go(std::span<const std::byte> received) {
    if (received.size() != sizeof(Control)) fail("expected the server's 12-byte go message");
    ByteReader in(received, "the server's go message");
    // Braced initializers are evaluated in order: the words are read as they are laid out.
    Go go{in.u32(), in.u32(), in.u32()};
    if (go.number == 0 || go.number > go.clients || go.clients > kMaxClients)
        fail(fmt::format("the server calls us client {} of {}", go.number, go.clients));
    return go;
}

// "verified": the client's number and how many of its messages the server verified (then a
// zero word).
struct Verified {
    std::uint32_t number = 0, count = 0;
};
inline Control encode_verified(const Verified& verified) {
    Control message{};
    ByteWriter out(message, "the control message");
    out.u32(verified.number);
    out.u32(verified.count);
    out.u32(0);
    return message;
}
inline Verified read_verified(std::span<const std::byte> received) {
    if (received.size() != sizeof(Control)) fail("expected the server's 12-byte verdict");
    ByteReader in(received, "the server's verdict");
    return {in.u32(), in.u32()};  // braced: read in order
}

// A client's message header: as the client writes it in front of the pattern, and as the server
// reads it, index and announced count, checked.
struct MessageHeader {
    std::uint32_t index = 0, count = 0;
};
inline void write_message_header(std::span<std::byte> message, const MessageHeader& header) {
    ByteWriter out(message, "the message header");
    out.u32(header.index);
    out.u32(header.count);
}
inline MessageHeader read_message_header(std::span<const std::byte> message) {
    if (message.size() < kMessageHeader)
        fail(fmt::format("a message of {} bytes is shorter than its header", message.size()));
    ByteReader in(message.first(kMessageHeader), "the client's message header");
    MessageHeader header{in.u32(), in.u32()};
    if (header.count == 0 || header.count > kMaxMessages)
        fail(fmt::format("a client announces {} messages (1 to {})", header.count, kMaxMessages));
    if (header.index >= header.count)
        fail(fmt::format("a client sends message {} of {}", header.index, header.count));
    return header;
}

}  // namespace rdmalab::srq
