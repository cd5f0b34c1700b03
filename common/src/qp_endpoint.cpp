// The endpoint record's codec: see qp_endpoint.hpp.
#include "rdmalab/qp_endpoint.hpp"

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/verbs_names.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <random>

namespace rdmalab {

namespace {

constexpr std::uint32_t kMagic = 0x52445150;  // "RDQP"
constexpr std::uint8_t kVersion = 2;
constexpr std::uint32_t kControlledQkeyBit = 0x80000000;
constexpr std::uint32_t kMax24Bits = 0xFFFFFF;

}  // namespace

QpEndpointWire encode_qp_endpoint(const QpEndpoint& endpoint) {
    QpEndpointWire wire{};
    ByteWriter out(wire, "the endpoint record");
    out.u32(kMagic);
    out.u8(kVersion);
    out.u8(static_cast<std::uint8_t>(endpoint.qp_type));
    out.u8(endpoint.link_layer);
    out.u8(static_cast<std::uint8_t>(endpoint.active_mtu));
    out.u32(endpoint.qpn);
    out.u32(endpoint.psn);
    out.u16(endpoint.lid);
    out.zeros(2);                                           // reserved
    out.bytes(std::as_bytes(std::span(endpoint.gid.raw)));  // already network order
    out.u64(endpoint.address);
    out.u32(endpoint.rkey);
    out.u32(endpoint.length);
    out.u32(endpoint.qkey);
    out.expect_end();
    return wire;
}

std::variant<QpEndpoint, std::string> decode_qp_endpoint(std::span<const std::byte> bytes,
                                                         ibv_qp_type expected_type,
                                                         PeerBuffer expected_buffer) {
    if (bytes.size() != kQpEndpointWireSize)
        return fmt::format("endpoint record has {} bytes, expected {}", bytes.size(),
                           kQpEndpointWireSize);
    ByteReader in(bytes, "the peer's endpoint record");
    if (in.u32() != kMagic)
        return std::string("the peer's endpoint record is not an rdmalab QP record (bad magic)");
    if (const std::uint8_t version = in.u8(); version != kVersion)
        return fmt::format("the peer's endpoint record has version {}, expected {}", version,
                           kVersion);
    if (const std::uint8_t type = in.u8(); type != static_cast<std::uint8_t>(expected_type))
        return fmt::format(
            "the peer's QP is {} (type {}), this one is {}: run the same lesson on both sides",
            qp_type_name(type), type, qp_type_name(expected_type));
    const std::uint8_t link_layer = in.u8();
    if (link_layer != IBV_LINK_LAYER_INFINIBAND && link_layer != IBV_LINK_LAYER_ETHERNET)
        return fmt::format("the peer's link layer {} is neither InfiniBand (1) nor Ethernet (2)",
                           link_layer);
    const std::uint8_t mtu = in.u8();
    if (mtu < IBV_MTU_256 || mtu > IBV_MTU_4096)
        return fmt::format("the peer's MTU code {} is not an ibv_mtu (1..5)", mtu);
    const std::uint32_t qpn = in.u32();
    const std::uint32_t psn = in.u32();
    const std::uint16_t lid = in.u16();
    const std::uint16_t reserved = in.u16();
    ibv_gid gid{};
    std::ranges::copy(in.bytes(16), std::as_writable_bytes(std::span(gid.raw)).begin());
    // Braced initializers are evaluated in order: the last fields are read as they are laid out.
    QpEndpoint endpoint{
        .qp_type = expected_type,
        .link_layer = link_layer,
        .active_mtu = static_cast<ibv_mtu>(mtu),
        .qpn = qpn,
        .psn = psn,
        .lid = lid,
        .gid = gid,
        .address = in.u64(),
        .rkey = in.u32(),
        .length = in.u32(),
        .qkey = in.u32(),
    };
    // QP numbers and PSNs are 24-bit fields in every packet header; 0 and 1 are the special QPs.
    if (endpoint.qpn > kMax24Bits || endpoint.qpn < 2)
        return fmt::format("the peer's QPN {:#x} is not a QP number (2..0xffffff)", endpoint.qpn);
    if (endpoint.psn > kMax24Bits)
        return fmt::format("the peer's PSN {:#x} does not fit in 24 bits", endpoint.psn);
    if (reserved != 0) return std::string("the peer's endpoint record has non-zero reserved bytes");
    // Only UD names a Q_Key; keys with the top bit set are "controlled" (privileged senders only).
    if (expected_type == IBV_QPT_UD && (endpoint.qkey & kControlledQkeyBit))
        return fmt::format("the peer's Q_Key {:#x} is a controlled key (top bit set)",
                           endpoint.qkey);
    if (expected_type != IBV_QPT_UD && endpoint.qkey != 0)
        return fmt::format("the peer sent Q_Key {:#x}, but only a UD QP has one", endpoint.qkey);
    if (expected_buffer == PeerBuffer::kNone) {
        if (endpoint.address != 0 || endpoint.rkey != 0 || endpoint.length != 0)
            return std::string("the peer advertised a buffer where none was expected");
        return endpoint;
    }
    if (endpoint.length == 0) return std::string("the peer advertised a buffer of length 0");
    if (endpoint.address > std::numeric_limits<std::uint64_t>::max() - endpoint.length)
        return fmt::format(
            "the peer advertised a buffer that wraps around the address space "
            "(address {:#x}, length {})",
            endpoint.address, endpoint.length);
    return endpoint;
}

QpEndpoint decode_qp_endpoint_or_throw(std::span<const std::byte> bytes, ibv_qp_type expected_type,
                                       PeerBuffer expected_buffer) {
    auto result = decode_qp_endpoint(bytes, expected_type, expected_buffer);
    if (auto* reason = std::get_if<std::string>(&result)) fail(*reason);
    return std::get<QpEndpoint>(result);
}

std::uint32_t random_psn() {
    std::random_device source;
    return std::uniform_int_distribution<std::uint32_t>(0, kMax24Bits)(source);
}

}  // namespace rdmalab
