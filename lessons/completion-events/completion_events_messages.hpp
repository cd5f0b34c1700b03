// The completion-events lesson's messages and the modes they name, in a header of their own so
// that its fuzz target (tests/fuzz/lesson_completion_events.cpp) reads them exactly as the lesson
// does.
//
// Every message starts with five big-endian words: kind, then four whose meaning depends on
// the kind. A ping or pong also repeats its sequence number in its last 4 bytes, so a message
// (or an RDMA WRITE) that landed only partly is caught.
#pragma once

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace rdmalab::completion_events {

// The four rows of the slides' ping-pong table ("Ping-pong performance summary").
enum class Mode : std::uint32_t {
    kSendRecvBusy = 1,         // SEND/RECV, both sides spin on ibv_poll_cq
    kSendRecvEvents = 2,       // SEND/RECV, both sides sleep on the completion channel
    kWriteReadSignaled = 3,    // client: RDMA WRITE (signaled, waited for), then RDMA READ back
    kWriteUnsignaledRead = 4,  // client: unsignaled RDMA WRITE, then RDMA READ; server idle
};
struct ModeName {
    Mode mode;
    const char* name;
};
constexpr std::array<ModeName, 4> kModes{{{Mode::kSendRecvBusy, "send-recv-busy"},
                                          {Mode::kSendRecvEvents, "send-recv-events"},
                                          {Mode::kWriteReadSignaled, "write-read-signaled"},
                                          {Mode::kWriteUnsignaledRead, "write-unsignaled-read"}}};

inline const char* mode_name(Mode mode) {
    for (const auto& entry : kModes)
        if (entry.mode == mode) return entry.name;
    return "unknown";
}
inline bool known_mode(std::uint32_t value) {
    return value >= static_cast<std::uint32_t>(Mode::kSendRecvBusy) &&
           value <= static_cast<std::uint32_t>(Mode::kWriteUnsignaledRead);
}
inline bool uses_send_recv(Mode mode) {
    return mode == Mode::kSendRecvBusy || mode == Mode::kSendRecvEvents;
}

enum class Kind : std::uint32_t { kStart = 1, kPing, kPong, kFinished, kReport, kBye };
constexpr std::size_t kHeaderSize = 20;
constexpr std::uint32_t kMaxIterations = 1'000'000;  // round trips per mode

struct Header {
    Kind kind{};
    std::uint32_t a = 0, b = 0, c = 0, d = 0;
};

inline void write_header(std::span<std::byte> message, const Header& header) {
    ByteWriter out(message, "the message header");
    out.u32(static_cast<std::uint32_t>(header.kind));
    out.u32(header.a);
    out.u32(header.b);
    out.u32(header.c);
    out.u32(header.d);
}
inline Header read_header(std::span<const std::byte> message) {
    if (message.size() < kHeaderSize)
        fail(fmt::format("a {}-byte message is too short for a header", message.size()));
    ByteReader in(message, "the peer's message header");
    // Braced initializers are evaluated in order: the words are read as they are laid out.
    return {static_cast<Kind>(in.u32()), in.u32(), in.u32(), in.u32(), in.u32()};
}

inline void write_ping(std::span<std::byte> message, Kind kind, std::uint32_t sequence) {
    write_header(message, {kind, sequence, 0, 0, 0});
    store_be32(message.last(4), sequence);
}
inline bool ping_matches(std::span<const std::byte> message, Kind kind, std::uint32_t sequence) {
    Header header = read_header(message);
    return header.kind == kind && header.a == sequence && load_be32(message.last(4)) == sequence;
}

// A ping or pong as its receiver checks it: exactly `size` bytes that carry `sequence`.
inline void require_ping(std::span<const std::byte> message, std::size_t size, Kind kind,
                         std::uint32_t sequence) {
    if (message.size() != size || !ping_matches(message, kind, sequence))
        fail(fmt::format("{} {}: expected {} bytes carrying sequence number {}; got {} bytes",
                         kind == Kind::kPong ? "pong" : "ping", sequence, size, sequence,
                         message.size()));
}

// A start message's request (a: mode, b: round trips, c: message size) as the server checks it
// before acting on it: a known mode, 1 to kMaxIterations round trips, kHeaderSize bytes up to
// the server's own size.
struct Start {
    Mode mode{};
    std::uint32_t iterations = 0;
    std::size_t size = 0;
};
inline Start read_start(const Header& request, std::size_t largest) {
    const Start start{static_cast<Mode>(request.a), request.b, request.c};
    if (!known_mode(request.a) || start.iterations == 0 || start.iterations > kMaxIterations ||
        start.size < kHeaderSize || start.size > largest)
        fail(fmt::format(
            "the client asked for mode {}, {} iterations of {} bytes: not something this server "
            "({} bytes) can serve",
            request.a, start.iterations, start.size, largest));
    return start;
}

}  // namespace rdmalab::completion_events
