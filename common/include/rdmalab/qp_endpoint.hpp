// The endpoint record: what one side of a hand-made connection must know about the other to
// reach its QP (QPN, first PSN, GID or LID, MTU, the Q_Key of a UD QP, and optionally a buffer),
// as the validated big-endian bytes both sides swap over TCP.
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <variant>

namespace rdmalab {

// Whether the record carries a buffer (address, rkey, length) the peer may use.
enum class PeerBuffer { kAdvertised, kNone };

struct QpEndpoint {
    ibv_qp_type qp_type = IBV_QPT_RC;  // both sides must use the same transport
    std::uint8_t link_layer = IBV_LINK_LAYER_ETHERNET;
    ibv_mtu active_mtu = IBV_MTU_1024;  // the path MTU is the smaller of the two sides'
    std::uint32_t qpn = 0;              // 24 bits
    std::uint32_t psn = 0;              // 24 bits: the first packet sequence number it sends
    std::uint16_t lid = 0;              // InfiniBand: the port's LID
    ibv_gid gid{};                      // RoCE (or IB with a GRH): the source GID it uses
    std::uint64_t address = 0;
    std::uint32_t rkey = 0;
    std::uint32_t length = 0;  // 0 with PeerBuffer::kNone
    std::uint32_t qkey = 0;    // UD: the Q_Key its QP accepts (below 0x80000000); RC, UC: 0
};

// Wire format, 56 bytes, big-endian: "RDQP" | version 2 | QP type | link layer | MTU |
// QPN (4) | PSN (4) | LID (2) | 2 reserved (0) | GID (16) | address (8) | rkey (4) | length (4) |
// Q_Key (4). (Version 1 had no Q_Key.)
inline constexpr std::size_t kQpEndpointWireSize = 56;
using QpEndpointWire = std::array<std::byte, kQpEndpointWireSize>;

QpEndpointWire encode_qp_endpoint(const QpEndpoint& endpoint);

// Either the decoded record or the reason it was refused: wrong size, magic or version, a QP
// type other than expected_type, a QPN or PSN wider than 24 bits, an unknown MTU or link layer,
// a buffer of length 0 or one that wraps (kAdvertised), a buffer where none belongs (kNone), a
// controlled Q_Key (top bit set) on UD, or any Q_Key on RC or UC.
std::variant<QpEndpoint, std::string> decode_qp_endpoint(std::span<const std::byte> bytes,
                                                         ibv_qp_type expected_type,
                                                         PeerBuffer expected_buffer);
QpEndpoint decode_qp_endpoint_or_throw(std::span<const std::byte> bytes, ibv_qp_type expected_type,
                                       PeerBuffer expected_buffer);

// A random 24-bit starting PSN, so packets of an earlier connection cannot pass as this one's.
std::uint32_t random_psn();

}  // namespace rdmalab
