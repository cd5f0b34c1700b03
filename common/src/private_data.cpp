// The buffer advertisement: see private_data.hpp.
#include "rdmalab/private_data.hpp"

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <limits>

namespace rdmalab {

namespace {

constexpr std::uint32_t kMagic = 0x52444c42;  // "RDLB"
constexpr std::uint8_t kVersion = 1;

const char* use_name(std::uint8_t use) {
    switch (static_cast<BufferUse>(use)) {
        case BufferUse::kWriteTarget:
            return "RDMA WRITE target";
        case BufferUse::kReadSource:
            return "RDMA READ source";
        case BufferUse::kAtomicTarget:
            return "atomic target";
    }
    return "unknown use";
}

}  // namespace

RemoteBufferWire encode_remote_buffer(const RemoteBuffer& buffer) {
    RemoteBufferWire wire{};
    ByteWriter out(wire, "the buffer advertisement");
    out.u32(kMagic);
    out.u8(kVersion);
    out.u8(static_cast<std::uint8_t>(buffer.use));
    out.zeros(2);  // reserved
    out.u64(buffer.address);
    out.u32(buffer.rkey);
    out.u32(buffer.length);
    out.expect_end();
    return wire;
}

std::variant<RemoteBuffer, std::string> decode_remote_buffer(std::span<const std::byte> bytes,
                                                             BufferUse expected_use) {
    if (bytes.size() < kRemoteBufferWireSize)
        return fmt::format("private data too short: {} bytes, expected at least {}", bytes.size(),
                           kRemoteBufferWireSize);
    // Only the record: what follows it is the CM's zero padding.
    ByteReader in(bytes.first(kRemoteBufferWireSize), "the peer's buffer advertisement");
    if (in.u32() != kMagic)
        return std::string("private data is not an rdmalab buffer advertisement (bad magic)");
    if (const std::uint8_t version = in.u8(); version != kVersion)
        return fmt::format("private data has version {}, expected {}", version, kVersion);
    if (const std::uint8_t use = in.u8(); use != static_cast<std::uint8_t>(expected_use))
        return fmt::format("the peer advertised a buffer for {}, expected one for {}",
                           use_name(use), use_name(static_cast<std::uint8_t>(expected_use)));
    if (std::ranges::any_of(in.bytes(2), [](std::byte b) { return b != std::byte{0}; }))
        return std::string("the peer's buffer advertisement has non-zero reserved bytes");
    // Braced initializers are evaluated in order: the fields are read as they are laid out.
    RemoteBuffer buffer{
        .address = in.u64(),
        .rkey = in.u32(),
        .length = in.u32(),
        .use = expected_use,
    };
    if (buffer.length == 0) return std::string("the peer advertised a buffer of length 0");
    if (buffer.address > std::numeric_limits<std::uint64_t>::max() - buffer.length)
        return fmt::format(
            "the peer advertised a buffer that wraps around the address space "
            "(address {:#x}, length {})",
            buffer.address, buffer.length);
    return buffer;
}

RemoteBuffer decode_remote_buffer_or_throw(std::span<const std::byte> bytes,
                                           BufferUse expected_use) {
    auto result = decode_remote_buffer(bytes, expected_use);
    if (auto* reason = std::get_if<std::string>(&result)) fail(*reason);
    return std::get<RemoteBuffer>(result);
}

RemoteBuffer decode_remote_buffer_or_throw(std::span<const std::byte> bytes, BufferUse expected_use,
                                           std::size_t needed) {
    RemoteBuffer buffer = decode_remote_buffer_or_throw(bytes, expected_use);
    if (needed > buffer.length) {
        const char* verb = expected_use == BufferUse::kReadSource ? "read" : "write";
        fail(fmt::format("the server's buffer holds {} bytes; cannot {} {} (use -s {} or less)",
                         buffer.length, verb, needed, buffer.length));
    }
    return buffer;
}

}  // namespace rdmalab
