// What a notification point reads from a RoCE v2 packet as it arrives: the IPv4 header's ECN
// bits and source, and the BTH's opcode, destination QP and PSN. The bytes come from the network
// (an AF_PACKET socket hands over whatever the link carried): every length is checked first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace rdmalab {

inline constexpr std::uint16_t kRoceV2Port = 4791;  // RoCE v2's UDP destination port (IANA)

enum class Ecn : std::uint8_t { kNotEct = 0, kEct1 = 1, kEct0 = 2, kCongestionExperienced = 3 };

struct RoceHeaders {
    std::uint32_t source_ipv4 = 0;  // host byte order
    std::uint8_t dscp = 0;
    Ecn ecn = Ecn::kNotEct;
    std::uint8_t opcode = 0;
    std::uint32_t destination_qp = 0;  // 24 bits
    std::uint32_t psn = 0;             // 24 bits
};

// An IPv4 packet (from its IP header on) → its RoCE v2 headers; nullopt for anything else (not
// IPv4, not UDP to port 4791, a fragment, headers cut short, or lengths that cannot hold them).
// The bytes may be only the packet's beginning (a capture's snap length): the payload is not read.
std::optional<RoceHeaders> parse_roce_v2_ipv4(std::span<const std::byte> packet);

}  // namespace rdmalab
