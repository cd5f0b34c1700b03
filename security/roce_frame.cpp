// RoCE v2 packets built by hand (see roce_frame.hpp).
#include "roce_frame.hpp"

#include <arpa/inet.h>

#include <cstdio>

namespace rdmalab::security {
namespace {

constexpr std::size_t kEthernetBytes = 14;
constexpr std::size_t kIpv4Bytes = 20;
constexpr std::size_t kUdpBytes = 8;
constexpr std::size_t kBthBytes = 12;
constexpr std::size_t kRethBytes = 16;
constexpr std::size_t kIcrcBytes = 4;
constexpr std::uint16_t kRoceV2Port = 4791;

// CRC-32 as Ethernet and zlib compute it (reflected, polynomial 0xedb88320), one byte a step.
std::uint32_t crc32_update(std::uint32_t crc, std::span<const std::uint8_t> bytes) {
    for (std::uint8_t byte : bytes) {
        crc ^= byte;
        for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return crc;
}

void put16(std::vector<std::uint8_t>& out, std::uint16_t value) {
    out.push_back(static_cast<std::uint8_t>(value >> 8));
    out.push_back(static_cast<std::uint8_t>(value));
}

void put32(std::vector<std::uint8_t>& out, std::uint32_t value) {
    put16(out, static_cast<std::uint16_t>(value >> 16));
    put16(out, static_cast<std::uint16_t>(value));
}

std::uint16_t ipv4_checksum(std::span<const std::uint8_t> header) {
    std::uint32_t sum = 0;
    for (std::size_t i = 0; i + 1 < header.size(); i += 2)
        sum += static_cast<std::uint32_t>(header[i] << 8 | header[i + 1]);
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<std::uint16_t>(~sum);
}

}  // namespace

std::uint32_t invariant_crc(std::span<const std::uint8_t> ip_packet) {
    const std::array<std::uint8_t, 8> masked_lrh{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    std::uint32_t crc = crc32_update(0xffffffffu, masked_lrh);
    std::vector<std::uint8_t> headers(ip_packet.begin(),
                                      ip_packet.begin() + kIpv4Bytes + kUdpBytes + kBthBytes);
    headers[1] = 0xff;                           // IP TOS: DSCP and ECN change on the way
    headers[8] = 0xff;                           // TTL
    headers[10] = headers[11] = 0xff;            // the IP checksum follows them
    headers[kIpv4Bytes + 6] = 0xff;              // the UDP checksum
    headers[kIpv4Bytes + 7] = 0xff;              //
    headers[kIpv4Bytes + kUdpBytes + 4] = 0xff;  // the BTH's reserved byte before the QPN
    crc = crc32_update(crc, headers);
    crc = crc32_update(crc, ip_packet.subspan(headers.size()));
    return ~crc;
}

std::vector<std::uint8_t> build_frame(const RdmaWritePacket& p) {
    const std::size_t pad = (4 - p.payload.size() % 4) % 4;
    const std::size_t udp_length =
        kUdpBytes + kBthBytes + kRethBytes + p.payload.size() + pad + kIcrcBytes;
    std::vector<std::uint8_t> frame;
    frame.reserve(kEthernetBytes + kIpv4Bytes + udp_length);
    frame.insert(frame.end(), p.destination_mac.begin(), p.destination_mac.end());
    frame.insert(frame.end(), p.source_mac.begin(), p.source_mac.end());
    put16(frame, 0x0800);  // IPv4
    const std::size_t ip_start = frame.size();
    frame.push_back(0x45);  // version 4, 20-byte header
    frame.push_back(0x00);  // DSCP 0, Not-ECT
    put16(frame, static_cast<std::uint16_t>(kIpv4Bytes + udp_length));
    put16(frame, p.ip_id);
    put16(frame, 0x4000);  // don't fragment
    frame.push_back(p.ttl);
    frame.push_back(17);  // UDP
    put16(frame, 0);      // the checksum, below
    put32(frame, p.source_ip);
    put32(frame, p.destination_ip);
    const std::uint16_t checksum = ipv4_checksum(std::span(frame).subspan(ip_start, kIpv4Bytes));
    frame[ip_start + 10] = static_cast<std::uint8_t>(checksum >> 8);
    frame[ip_start + 11] = static_cast<std::uint8_t>(checksum);
    put16(frame, p.source_port);
    put16(frame, kRoceV2Port);
    put16(frame, static_cast<std::uint16_t>(udp_length));
    put16(frame, 0);  // no UDP checksum (IPv4 allows it; the ICRC covers the packet)
    // #region bth-reth
    // BTH: opcode; solicited 0, migration 0, the pad count, transport version 0; the partition;
    // a reserved byte and the destination QP; the ack request bit and the PSN.
    frame.push_back(kRcRdmaWriteOnly);
    frame.push_back(static_cast<std::uint8_t>(pad << 4));
    put16(frame, p.partition_key);
    put32(frame, p.destination_qpn & 0xffffff);
    put32(frame, (p.ack_request ? 0x80000000u : 0u) | (p.psn & 0xffffff));
    // RETH: where in the target's memory, under which key, how many bytes.
    put32(frame, static_cast<std::uint32_t>(p.virtual_address >> 32));
    put32(frame, static_cast<std::uint32_t>(p.virtual_address));
    put32(frame, p.rkey);
    put32(frame, static_cast<std::uint32_t>(p.payload.size()));
    // #endregion bth-reth
    frame.insert(frame.end(), p.payload.begin(), p.payload.end());
    frame.insert(frame.end(), pad, 0);
    const std::uint32_t icrc = invariant_crc(std::span(frame).subspan(ip_start));
    for (int shift = 0; shift < 32; shift += 8)
        frame.push_back(static_cast<std::uint8_t>(icrc >> shift));
    return frame;
}

std::optional<std::uint32_t> lab_address(const std::string& text) {
    in_addr address{};
    if (inet_pton(AF_INET, text.c_str(), &address) != 1) return std::nullopt;
    const std::uint32_t host_order = ntohl(address.s_addr);
    if ((host_order & 0xffffff00u) != 0xc6336400u) return std::nullopt;  // 198.51.100.0/24
    return host_order;
}

std::optional<MacAddress> parse_mac(const std::string& text) {
    MacAddress mac{};
    unsigned bytes[6];
    char extra = 0;
    if (std::sscanf(text.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &bytes[0], &bytes[1], &bytes[2],
                    &bytes[3], &bytes[4], &bytes[5], &extra) != 6)
        return std::nullopt;
    for (int i = 0; i < 6; ++i) mac[i] = static_cast<std::uint8_t>(bytes[i]);
    return mac;
}

}  // namespace rdmalab::security
