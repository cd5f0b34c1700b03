// The buffer advertisement: how a server tells its client where its buffer is (address, rkey,
// length), a big-endian record (codec.hpp) inside rdma_cm's connection private data. Everything
// that arrives from a peer is validated before use.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <variant>

namespace rdmalab {

// What the advertised buffer may be used for; the client checks it matches its operation.
enum class BufferUse : std::uint8_t { kWriteTarget = 1, kReadSource = 2, kAtomicTarget = 3 };

struct RemoteBuffer {
    std::uint64_t address = 0;
    std::uint32_t rkey = 0;
    std::uint32_t length = 0;
    BufferUse use = BufferUse::kWriteTarget;
};

// Wire format, 24 bytes: "RDLB" | version 1 | use | 2 reserved (0) | address (8) | rkey (4) |
// length (4).
inline constexpr std::size_t kRemoteBufferWireSize = 24;
using RemoteBufferWire = std::array<std::byte, kRemoteBufferWireSize>;

RemoteBufferWire encode_remote_buffer(const RemoteBuffer& buffer);

// Either the decoded buffer or the reason it was refused. IB/RoCE CM delivers private data
// padded with zeros to the size of its message field, so longer input is accepted.
std::variant<RemoteBuffer, std::string> decode_remote_buffer(std::span<const std::byte> bytes,
                                                             BufferUse expected_use);

// Throws rdmalab::Error naming the reason instead of returning it.
RemoteBuffer decode_remote_buffer_or_throw(std::span<const std::byte> bytes,
                                           BufferUse expected_use);

// The same, and the buffer must hold at least `needed` bytes: "the server's buffer holds 4096
// bytes; cannot write 8192 (use -s 4096 or less)".
RemoteBuffer decode_remote_buffer_or_throw(std::span<const std::byte> bytes, BufferUse expected_use,
                                           std::size_t needed);

}  // namespace rdmalab
