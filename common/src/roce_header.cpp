// RoCE v2 headers from an IPv4 packet: see roce_header.hpp.
#include "rdmalab/roce_header.hpp"

#include "rdmalab/codec.hpp"

namespace rdmalab {

std::optional<RoceHeaders> parse_roce_v2_ipv4(std::span<const std::byte> packet) {
    constexpr std::size_t kUdpBytes = 8, kBthBytes = 12;
    if (packet.size() < 20) return std::nullopt;
    const auto byte_at = [&](std::size_t i) { return std::to_integer<std::uint8_t>(packet[i]); };
    const std::uint8_t version = byte_at(0) >> 4;
    const std::size_t header_bytes = std::size_t{byte_at(0) & 0x0fu} * 4;
    if (version != 4 || header_bytes < 20) return std::nullopt;
    // The headers must be in what was copied; the lengths the packet claims must hold them too.
    if (packet.size() < header_bytes + kUdpBytes + kBthBytes) return std::nullopt;
    const std::size_t total = load_be16(packet.subspan(2, 2));
    if (total < header_bytes + kUdpBytes + kBthBytes) return std::nullopt;
    // A fragment (more-fragments set, or an offset) carries no whole UDP datagram.
    if ((load_be16(packet.subspan(6, 2)) & 0x3fff) != 0) return std::nullopt;
    if (byte_at(9) != 17) return std::nullopt;  // UDP
    const auto udp = packet.subspan(header_bytes, kUdpBytes + kBthBytes);
    if (load_be16(udp.subspan(2, 2)) != kRoceV2Port) return std::nullopt;
    const std::size_t udp_length = load_be16(udp.subspan(4, 2));
    if (udp_length < kUdpBytes + kBthBytes || udp_length > total - header_bytes)
        return std::nullopt;
    const auto bth = udp.subspan(kUdpBytes, kBthBytes);
    RoceHeaders headers;
    headers.source_ipv4 = load_be32(packet.subspan(12, 4));
    headers.dscp = byte_at(1) >> 2;
    headers.ecn = static_cast<Ecn>(byte_at(1) & 0x3u);
    headers.opcode = std::to_integer<std::uint8_t>(bth[0]);
    headers.destination_qp = load_be32(bth.subspan(4, 4)) & 0xffffffu;
    headers.psn = load_be32(bth.subspan(8, 4)) & 0xffffffu;
    return headers;
}

}  // namespace rdmalab
