// Unit tests of security/roce_frame: a RoCE v2 RDMA WRITE built by hand is byte for byte the
// packet Soft-RoCE itself sent (captured in the lab: exercise 13's server writing 10 bytes into
// a client's buffer), Invariant CRC included; and the attack tools' address guard.
#include "roce_frame.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace rdmalab::security;

namespace {

// Frame 32 of a lab capture (2026-11-28, kernel 6.1, rxe): 198.51.100.1 → .2, RDMA WRITE Only,
// QP 0x12, PSN 0x08d561, 10 bytes and 2 of pad; its last 4 bytes the ICRC rxe computed.
const std::string kCapturedWrite =
    "5254005e02015254005e01020800450000489cdd40004011495dc6336401c6336402fa9812b7003400000a20"
    "ffff000000128008d5610000560adc3c4828000007fb0000000af77afd800386098c0f920000da44eeca";

std::vector<std::uint8_t> roce_frame_bytes(const std::string& hex) {
    std::vector<std::uint8_t> bytes;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
        bytes.push_back(static_cast<std::uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
    return bytes;
}

RdmaWritePacket captured_write_fields() {
    RdmaWritePacket p;
    p.destination_mac = *parse_mac("52:54:00:5e:02:01");
    p.source_mac = *parse_mac("52:54:00:5e:01:02");
    p.source_ip = *lab_address("198.51.100.1");
    p.destination_ip = *lab_address("198.51.100.2");
    p.ip_id = 0x9cdd;
    p.source_port = 0xfa98;
    p.destination_qpn = 0x12;
    p.psn = 0x08d561;
    p.virtual_address = 0x0000560adc3c4828;
    p.rkey = 0x7fb;
    p.payload = {0xf7, 0x7a, 0xfd, 0x80, 0x03, 0x86, 0x09, 0x8c, 0x0f, 0x92};
    return p;
}

}  // namespace

TEST(RoceFrame, TheInvariantCrcIsTheOneSoftRoceWrote) {
    const auto frame = roce_frame_bytes(kCapturedWrite);
    const auto ip_packet = std::span(frame).subspan(14, frame.size() - 14 - 4);
    const std::uint32_t icrc = invariant_crc(ip_packet);
    EXPECT_EQ(icrc, 0xcaee44dau);  // on the wire least significant byte first: da 44 ee ca
    // Routers may change TOS and TTL: the ICRC does not cover them.
    auto rerouted = frame;
    rerouted[14 + 1] = 0x68;
    rerouted[14 + 8] = 12;
    EXPECT_EQ(invariant_crc(std::span(rerouted).subspan(14, frame.size() - 18)), icrc);
    // One payload bit flipped, and the receiver drops the packet.
    auto corrupt = frame;
    corrupt[frame.size() - 8] ^= 1;
    EXPECT_NE(invariant_crc(std::span(corrupt).subspan(14, frame.size() - 18)), icrc);
}

TEST(RoceFrame, ABuiltWriteIsTheCapturedOneByteForByte) {
    EXPECT_EQ(build_frame(captured_write_fields()), roce_frame_bytes(kCapturedWrite));
}

TEST(RoceFrame, PayloadsArePaddedToFourBytes) {
    RdmaWritePacket p = captured_write_fields();
    for (std::size_t length : {1u, 4u, 7u, 1024u}) {
        p.payload.assign(length, 0xab);
        const auto frame = build_frame(p);
        const std::size_t pad = (4 - length % 4) % 4;
        EXPECT_EQ(frame.size(), 14 + 20 + 8 + 12 + 16 + length + pad + 4) << length;
        EXPECT_EQ(frame[14 + 20 + 8 + 1] >> 4, static_cast<int>(pad)) << length;
    }
}

TEST(RoceFrame, OnlyTheLabsOwnAddressesAreAccepted) {
    EXPECT_EQ(lab_address("198.51.100.3"), 0xc6336403u);
    for (const char* outside : {"10.0.0.1", "192.168.1.1", "127.0.0.1", "8.8.8.8", "198.51.101.1",
                                "198.51.100", "", "198.51.100.1 ", "::1"})
        EXPECT_FALSE(lab_address(outside).has_value()) << outside;
    EXPECT_FALSE(parse_mac("52:54:00:5e:01").has_value());
    EXPECT_FALSE(parse_mac("52:54:00:5e:01:02:03").has_value());
    EXPECT_TRUE(parse_mac("52:54:00:5e:01:02").has_value());
}
