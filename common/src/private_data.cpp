// The private-data codec: see private_data.hpp.
#include "rdmalab/private_data.hpp"
#include "rdmalab/byte_order.hpp"

#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <limits>

namespace rdmalab {

namespace {

constexpr std::array<std::uint8_t, 4> kMagic = {'R', 'D', 'L', 'B'};
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
    std::copy(kMagic.begin(), kMagic.end(), wire.begin());
    wire[4] = kVersion;
    wire[5] = static_cast<std::uint8_t>(buffer.use);
    store_be(&wire[8], buffer.address);
    store_be(&wire[16], buffer.rkey);
    store_be(&wire[20], buffer.length);
    return wire;
}

std::variant<RemoteBuffer, std::string> decode_remote_buffer(std::span<const std::uint8_t> bytes,
                                                             BufferUse expected_use) {
    if (bytes.size() < kRemoteBufferWireSize)
        return fmt::format("private data too short: {} bytes, expected at least {}", bytes.size(),
                           kRemoteBufferWireSize);
    if (!std::equal(kMagic.begin(), kMagic.end(), bytes.begin()))
        return std::string("private data is not an rdmalab buffer advertisement (bad magic)");
    if (bytes[4] != kVersion)
        return fmt::format("private data has version {}, expected {}", bytes[4], kVersion);
    if (bytes[5] != static_cast<std::uint8_t>(expected_use))
        return fmt::format("the peer advertised a buffer for {}, expected one for {}",
                           use_name(bytes[5]), use_name(static_cast<std::uint8_t>(expected_use)));
    RemoteBuffer buffer{
        .address = load_be<std::uint64_t>(&bytes[8]),
        .rkey = load_be<std::uint32_t>(&bytes[16]),
        .length = load_be<std::uint32_t>(&bytes[20]),
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

RemoteBuffer decode_remote_buffer_or_throw(std::span<const std::uint8_t> bytes,
                                           BufferUse expected_use) {
    auto result = decode_remote_buffer(bytes, expected_use);
    if (auto* reason = std::get_if<std::string>(&result)) fail(*reason);
    return std::get<RemoteBuffer>(result);
}

RemoteBuffer decode_remote_buffer_or_throw(std::span<const std::uint8_t> bytes,
                                           BufferUse expected_use, std::size_t needed) {
    RemoteBuffer buffer = decode_remote_buffer_or_throw(bytes, expected_use);
    if (needed > buffer.length) {
        const char* verb = expected_use == BufferUse::kReadSource ? "read" : "write";
        fail(fmt::format("the server's buffer holds {} bytes; cannot {} {} (use -s {} or less)",
                         buffer.length, verb, needed, buffer.length));
    }
    return buffer;
}

void store_be32(std::span<std::uint8_t, 4> out, std::uint32_t value) {
    store_be(out.data(), value);
}

std::uint32_t load_be32(std::span<const std::uint8_t, 4> in) {
    return load_be<std::uint32_t>(in.data());
}

}  // namespace rdmalab
