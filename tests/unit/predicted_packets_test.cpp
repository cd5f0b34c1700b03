// Unit tests for the packets the on-the-wire lesson predicts: PSNs wrap at 24 bits, a message's
// packets are named as tshark names them, and a long run of Middle packets prints as one line.
#include "rdmalab/predicted_packets.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace rdmalab;

TEST(PredictedPackets, PsnsWrapAt24Bits) {
    EXPECT_EQ(next_psn(5), 6u);
    EXPECT_EQ(next_psn(0xffffff), 0u);
    EXPECT_EQ(next_psn(0xfffffe, 3), 1u);
}

TEST(PredictedPackets, NamesEachPartOfAMessage) {
    EXPECT_EQ(message_part(0, 1), "Only");
    EXPECT_EQ(message_part(0, 3), "First");
    EXPECT_EQ(message_part(1, 3), "Middle");
    EXPECT_EQ(message_part(2, 3), "Last");
    EXPECT_EQ(message_part(0, 2), "First");
    EXPECT_EQ(message_part(1, 2), "Last");
}

TEST(PredictedPackets, OneLineAPacket) {
    const std::vector<PredictedPacket> packets = {
        {true, "SEND Only", 0x10, 512, "AckReq"},
        {false, "Acknowledge", 0x10, 0, "AETH ACK msn 1"}};
    EXPECT_EQ(format_predicted_packets("client", packets, 0x12, 0x11),
              "client:   client → server SEND Only                          QP 0x000012 PSN       "
              "16   512 B  AckReq\n"
              "client:   server → client Acknowledge                        QP 0x000011 PSN       "
              "16     0 B  AETH ACK msn 1\n");
}

TEST(PredictedPackets, ARunOfMiddlePacketsTakesOneLine) {
    // A 16-packet WRITE whose PSNs wrap: First, 14 × Middle, Last, one ACK.
    std::vector<PredictedPacket> packets;
    std::uint32_t psn = 0xfffff8;
    for (std::uint32_t i = 0; i < 16; ++i) {
        packets.push_back({true, "RDMA WRITE " + message_part(i, 16), psn, 1024,
                           i == 0 ? "RETH" : (i == 15 ? "AckReq" : "")});
        if (i < 15) psn = next_psn(psn);
    }
    packets.push_back({false, "Acknowledge", psn, 0, "AETH ACK msn 1"});
    const std::string text = format_predicted_packets("client", packets, 1, 2);
    std::vector<std::string> lines;
    for (std::size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos;
         start = end + 1)
        lines.push_back(text.substr(start, end - start));
    ASSERT_EQ(lines.size(), 4u);
    EXPECT_NE(lines[1].find("RDMA WRITE Middle × 14"), std::string::npos) << lines[1];
    EXPECT_NE(lines[1].find("PSN 16777209–6"), std::string::npos) << lines[1];
    EXPECT_NE(lines[1].find(" B  each"), std::string::npos) << lines[1];
    EXPECT_NE(lines[2].find("RDMA WRITE Last"), std::string::npos) << lines[2];
}

TEST(PredictedPackets, TwoAlikePacketsAreNotARun) {
    const std::vector<PredictedPacket> packets = {{true, "RDMA WRITE Middle", 1, 1024, ""},
                                                  {true, "RDMA WRITE Middle", 2, 1024, ""}};
    const std::string text = format_predicted_packets("client", packets, 1, 2);
    EXPECT_EQ(text.find("×"), std::string::npos);
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
}
