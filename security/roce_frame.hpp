// A RoCE v2 packet built byte by byte, as an attacker on the lab's wire builds one: Ethernet,
// IPv4, UDP to port 4791, the Base Transport Header, the RDMA Extended Transport Header, the
// payload, its pad, and the Invariant CRC the receiving NIC checks. Nothing here sends; the
// attack tool (rdma-attack.cpp) puts the frame on a raw socket, inside the lab's guests only.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rdmalab::security {

using MacAddress = std::array<std::uint8_t, 6>;

// BTH opcodes of RC this module builds (IBTA vol. 1, table 38).
inline constexpr std::uint8_t kRcRdmaWriteOnly = 0x0a;

// One RC RDMA WRITE Only packet, every field the receiver checks.
struct RdmaWritePacket {
    MacAddress destination_mac{};
    MacAddress source_mac{};
    std::uint32_t source_ip = 0;       // host order: 198.51.100.2 is 0xc6336402
    std::uint32_t destination_ip = 0;  // host order
    std::uint16_t ip_id = 0;
    std::uint8_t ttl = 64;
    std::uint16_t source_port = 0xc000;  // RoCE v2 puts entropy here; the receiver ignores it
    std::uint32_t destination_qpn = 0;   // 24 bits
    std::uint32_t psn = 0;               // 24 bits
    bool ack_request = true;
    std::uint16_t partition_key = 0xffff;
    std::uint64_t virtual_address = 0;
    std::uint32_t rkey = 0;
    std::vector<std::uint8_t> payload;  // at most one path MTU
};

// The Invariant CRC of a RoCE v2 IPv4 packet, `ip_packet` from the IP header to the end of the
// pad (the ICRC's own 4 bytes excluded): CRC-32 over 8 bytes of 0xff (the masked LRH of
// InfiniBand), the IP and UDP headers with the fields a router may change masked to ones (TOS,
// TTL, the IP checksum, the UDP checksum), the BTH with its reserved byte masked, and the rest.
// The NIC writes it after the pad, least significant byte first.
std::uint32_t invariant_crc(std::span<const std::uint8_t> ip_packet);

// The whole Ethernet frame: headers, payload, pad to a multiple of 4, the ICRC.
std::vector<std::uint8_t> build_frame(const RdmaWritePacket& packet);

// The lab's own subnet (198.51.100.0/24, TEST-NET-2: never routed on the internet): the only
// addresses the attack tools accept. "198.51.100.7" -> 0xc6336407; nullopt for anything else.
std::optional<std::uint32_t> lab_address(const std::string& text);

// "52:54:00:5e:01:02" -> its six bytes; nullopt when malformed.
std::optional<MacAddress> parse_mac(const std::string& text);

}  // namespace rdmalab::security
