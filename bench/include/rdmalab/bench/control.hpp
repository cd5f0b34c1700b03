// rdma-bench's control channel: JSON messages over one TCP connection, each a 4-byte big-endian
// length then the text. The client drives; the server follows and reports what it counted.
#pragma once

#include "rdmalab/bench/records.hpp"
#include "rdmalab/tcp_exchange.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rdmalab::bench {

// Bumped whenever a message changes; both sides refuse a peer with another version.
inline constexpr int kProtocolVersion = 2;  // 2: each side's memory kind and registration path
// The tool that speaks it, named in every hello and record (and in the refusal of a peer that
// speaks another protocol).
inline constexpr const char* kToolVersion = "rdma-bench 0.1";
// A message larger than this is refused before reading it (endpoints of 1024 QPs fit easily).
inline constexpr std::uint32_t kMaxControlMessage = 1 << 20;

class ControlChannel {
  public:
    explicit ControlChannel(TcpExchange tcp) : tcp_(std::move(tcp)) {}

    void send(const Record& message);
    // Waits up to timeout for the next message; throws on timeout, a closed connection, an
    // oversized or unparsable message, or a message carrying {"error": …} from the peer (whose
    // text it repeats, so the side that finds a problem and the side that asked both say it).
    Record receive(std::chrono::milliseconds timeout);
    // receive, then throws unless the message's "type" is `type`.
    Record expect(const std::string& type, std::chrono::milliseconds timeout);
    // Tells the peer why this side stops (best effort: never throws).
    void send_error(const std::string& why) noexcept;
    // True once the peer has sent something (or hung up): polled without blocking.
    bool readable() const;

  private:
    TcpExchange tcp_;
};

// What receive does with the bytes, for the channel and for tests: the 4-byte length prefix
// (throws unless 1..kMaxControlMessage), then the text (throws unless it is a JSON object
// nested at most kMaxJsonDepth deep; one carrying {"error": …} throws with the peer's text).
std::uint32_t decode_control_length(std::span<const std::byte> prefix);
Record decode_control_message(std::string_view text);

// Lower-case hex of bytes, and back (nullopt-free: throws rdmalab::Error on bad text).
std::string to_hex(std::span<const std::byte> bytes);
std::vector<std::byte> from_hex(const std::string& text);

// A field of a peer's message, type-checked: throws rdmalab::Error naming the field. An unsigned
// integer must be a JSON integer that T holds (no fraction, no sign, no wrap-around).
template <typename T>
T field(const Record& message, const char* name);

}  // namespace rdmalab::bench
