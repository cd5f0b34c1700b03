// Unit tests for DCQCN's reaction point (the paper's equations, step by step) and for the RoCE v2
// header reader a notification point uses on packets from the network.
#include "rdmalab/dcqcn.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/roce_header.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

using namespace rdmalab;

namespace {

// Parameters whose timers never fire unless a test moves time past them.
DcqcnParameters quiet() {
    DcqcnParameters p;
    p.line_rate_bps = 40e6;
    p.min_rate_bps = 1e6;
    p.alpha_timer_s = 1;
    p.rate_timer_s = 1;
    p.byte_counter_bytes = 1e9;
    return p;
}

}  // namespace

TEST(Dcqcn, FirstCnpHalvesTheRateAndKeepsItAsTheTarget) {
    ReactionPoint rp(quiet(), 0);
    EXPECT_DOUBLE_EQ(rp.rate_bps(), 40e6);
    EXPECT_DOUBLE_EQ(rp.alpha(), 1);
    rp.on_cnp(0.1);
    EXPECT_DOUBLE_EQ(rp.target_bps(), 40e6);
    EXPECT_DOUBLE_EQ(rp.rate_bps(), 20e6);  // R_C (1 - α/2) with α = 1
    EXPECT_DOUBLE_EQ(rp.alpha(), 1);        // (1 - g)·1 + g
    EXPECT_EQ(rp.cnps(), 1u);
}

TEST(Dcqcn, AlphaDecaysEachPeriodWithoutACnpAndTheNextCutIsSmaller) {
    DcqcnParameters p = quiet();
    p.alpha_timer_s = 0.01;
    p.g = 0.5;  // large, so each step is easy to see
    ReactionPoint rp(p, 0);
    rp.on_cnp(0);       // α stays 1; rate 20 Mbit/s; the α timer restarts at 0
    rp.advance(0.025);  // two periods (0.01, 0.02) without a CNP: α = 1 · 0.5 · 0.5
    EXPECT_DOUBLE_EQ(rp.alpha(), 0.25);
    rp.on_cnp(0.025);
    EXPECT_DOUBLE_EQ(rp.rate_bps(), 20e6 * (1 - 0.25 / 2));
    EXPECT_DOUBLE_EQ(rp.alpha(), 0.5 * 0.25 + 0.5);
}

TEST(Dcqcn, FastRecoveryHalvesTheDistanceToTheTarget) {
    DcqcnParameters p = quiet();
    p.rate_timer_s = 0.01;
    ReactionPoint rp(p, 0);
    rp.on_cnp(0);  // target 40, rate 20 (Mbit/s)
    double expected = 20e6;
    for (int event = 1; event < p.fast_recovery_steps; ++event) {
        rp.advance(0.01 * event + 0.0005);  // just past the event (sums of 0.01 are inexact)
        expected = (40e6 + expected) / 2;
        EXPECT_DOUBLE_EQ(rp.rate_bps(), expected) << "event " << event;
        EXPECT_DOUBLE_EQ(rp.target_bps(), 40e6);
        EXPECT_EQ(rp.stage(), ReactionPoint::Stage::kFastRecovery);
    }
}

TEST(Dcqcn, AdditiveIncreaseRaisesTheTargetAfterFEvents) {
    DcqcnParameters p = quiet();
    p.rate_timer_s = 0.01;
    p.additive_increase_bps = 1e6;
    ReactionPoint rp(p, 0);
    rp.on_cnp(0);
    rp.on_cnp(0);  // target 20, rate 10: room below the line rate to grow into
    rp.advance(0.01 * p.fast_recovery_steps - 0.0005);
    const double target = rp.target_bps(), rate = rp.rate_bps();
    rp.advance(0.01 * p.fast_recovery_steps + 0.0005);  // the F-th timer event: additive
    EXPECT_EQ(rp.stage(), ReactionPoint::Stage::kAdditiveIncrease);
    EXPECT_DOUBLE_EQ(rp.target_bps(), target + 1e6);
    EXPECT_DOUBLE_EQ(rp.rate_bps(), (target + 1e6 + rate) / 2);
}

TEST(Dcqcn, HyperIncreaseNeedsBothTheTimerAndTheByteCounter) {
    DcqcnParameters p = quiet();
    p.rate_timer_s = 0.01;
    p.byte_counter_bytes = 1000;
    p.additive_increase_bps = 1e3;
    p.hyper_increase_bps = 1e5;
    p.min_rate_bps = 1e3;
    ReactionPoint rp(p, 0);
    for (int i = 0; i < 10; ++i) rp.on_cnp(0);                       // far below the line rate
    rp.advance(0.01 * (p.fast_recovery_steps + 1) + 0.0005);         // timer events: F + 1
    EXPECT_EQ(rp.stage(), ReactionPoint::Stage::kAdditiveIncrease);  // bytes: none yet
    rp.on_bytes_sent(1000 * (p.fast_recovery_steps + 1), 0.065);     // byte events: F + 1
    EXPECT_EQ(rp.stage(), ReactionPoint::Stage::kHyperIncrease);
    const double target = rp.target_bps();
    rp.on_bytes_sent(1000, 0.066);  // byte events F + 2, timer F + 1: i = min - F = 1
    EXPECT_DOUBLE_EQ(rp.target_bps(), target + 1e5);
}

TEST(Dcqcn, RateStaysBetweenTheFloorAndTheLineRate) {
    DcqcnParameters p = quiet();
    p.rate_timer_s = 0.001;
    ReactionPoint rp(p, 0);
    for (int i = 0; i < 100; ++i) rp.on_cnp(0);
    EXPECT_DOUBLE_EQ(rp.rate_bps(), p.min_rate_bps);
    rp.advance(100);  // 100,000 increase events
    EXPECT_LE(rp.rate_bps(), p.line_rate_bps);
    EXPECT_GT(rp.rate_bps(), 0.99 * p.line_rate_bps);
}

TEST(Dcqcn, ParametersParseWithUnitsAndRefuseNonsense) {
    const auto p = parse_dcqcn_parameters("rate=100m,rai=80k,t=2ms,n=500us,g=0.01,b=64K,f=3");
    EXPECT_DOUBLE_EQ(p.line_rate_bps, 100e6);
    EXPECT_DOUBLE_EQ(p.additive_increase_bps, 80e3);
    EXPECT_DOUBLE_EQ(p.rate_timer_s, 2e-3);
    EXPECT_DOUBLE_EQ(p.cnp_interval_s, 500e-6);
    EXPECT_DOUBLE_EQ(p.g, 0.01);
    EXPECT_DOUBLE_EQ(p.byte_counter_bytes, 65536);
    EXPECT_EQ(p.fast_recovery_steps, 3);
    EXPECT_EQ(parse_dcqcn_parameters("").line_rate_bps, DcqcnParameters{}.line_rate_bps);
    EXPECT_THROW(parse_dcqcn_parameters("speed=1m"), Error);
    EXPECT_THROW(parse_dcqcn_parameters("rate"), Error);
    EXPECT_THROW(parse_dcqcn_parameters("rate=-5m"), Error);
    EXPECT_THROW(parse_dcqcn_parameters("rate=fast"), Error);
    EXPECT_THROW(parse_dcqcn_parameters("g=2"), Error);
    EXPECT_THROW(parse_dcqcn_parameters("rate=1m,min=2m"), Error);
}

namespace {

// An IPv4/UDP/BTH packet as a link carries it: TOS, source, UDP destination port, BTH.
std::vector<std::byte> roce_packet(std::uint8_t tos, std::uint16_t port, std::uint32_t qp,
                                   std::uint32_t psn) {
    std::vector<std::uint8_t> p = {
        0x45, tos,  0,    0,    0x12, 0x34, 0x40, 0, 64,   17, 0, 0,  // DF set, TTL 64, UDP
        198,  51,   100,  2,    198,  51,   100,  3,                  // source, destination
        0xc0, 0x00, 0,    0,    0,    0,    0,    0,                  // UDP: ports and length below
        0x0a, 0x00, 0xff, 0xff, 0,    0,    0,    0, 0x80, 0,  0, 0};  // BTH: RC WRITE First
    p.resize(p.size() + 64);                                           // payload
    p[2] = static_cast<std::uint8_t>(p.size() >> 8);
    p[3] = static_cast<std::uint8_t>(p.size());
    p[22] = static_cast<std::uint8_t>(port >> 8);
    p[23] = static_cast<std::uint8_t>(port);
    const std::size_t udp_length = p.size() - 20;
    p[24] = static_cast<std::uint8_t>(udp_length >> 8);
    p[25] = static_cast<std::uint8_t>(udp_length);
    p[33] = static_cast<std::uint8_t>(qp >> 16);
    p[34] = static_cast<std::uint8_t>(qp >> 8);
    p[35] = static_cast<std::uint8_t>(qp);
    p[37] = static_cast<std::uint8_t>(psn >> 16);
    p[38] = static_cast<std::uint8_t>(psn >> 8);
    p[39] = static_cast<std::uint8_t>(psn);
    std::vector<std::byte> out;
    for (auto b : p) out.push_back(static_cast<std::byte>(b));
    return out;
}

}  // namespace

TEST(RoceHeader, ReadsEcnSourceQpAndPsn) {
    const auto headers = parse_roce_v2_ipv4(roce_packet(106 | 1, kRoceV2Port, 0x123456, 0xabcdef));
    ASSERT_TRUE(headers);
    EXPECT_EQ(headers->dscp, 26);
    EXPECT_EQ(headers->ecn, Ecn::kCongestionExperienced);  // 106 | 1 = DSCP 26, ECN 11
    EXPECT_EQ(headers->source_ipv4, 0xc6336402u);          // 198.51.100.2
    EXPECT_EQ(headers->opcode, 0x0a);
    EXPECT_EQ(headers->destination_qp, 0x123456u);
    EXPECT_EQ(headers->psn, 0xabcdefu);
    EXPECT_EQ(parse_roce_v2_ipv4(roce_packet(106, kRoceV2Port, 17, 0))->ecn, Ecn::kEct0);
}

TEST(RoceHeader, RefusesWhatIsNotAWholeRoceV2Packet) {
    EXPECT_FALSE(parse_roce_v2_ipv4(roce_packet(106, 4792, 17, 0)));  // another UDP port
    auto packet = roce_packet(106, kRoceV2Port, 17, 0);
    for (std::size_t cut : {0u, 19u, 27u, 39u})  // shorter than each header
        EXPECT_FALSE(parse_roce_v2_ipv4(std::span(packet).first(cut))) << cut;
    // The headers alone (a copy cut after the BTH, as the lesson's socket takes it) are enough.
    EXPECT_TRUE(parse_roce_v2_ipv4(std::span(packet).first(40)));
    // A total length too small for the headers it carries.
    auto short_total = packet;
    short_total[2] = std::byte{0};
    short_total[3] = std::byte{39};
    EXPECT_FALSE(parse_roce_v2_ipv4(short_total));
    // A UDP length longer than the IP packet around it.
    auto long_udp = packet;
    long_udp[24] = std::byte{0xff};
    EXPECT_FALSE(parse_roce_v2_ipv4(long_udp));
    auto fragment = packet;
    fragment[6] = std::byte{0x20};  // more fragments
    EXPECT_FALSE(parse_roce_v2_ipv4(fragment));
    auto tcp = packet;
    tcp[9] = std::byte{6};
    EXPECT_FALSE(parse_roce_v2_ipv4(tcp));
    auto ipv6 = packet;
    ipv6[0] = std::byte{0x60};
    EXPECT_FALSE(parse_roce_v2_ipv4(ipv6));
    auto short_udp = packet;
    short_udp[25] = std::byte{8};
    short_udp[24] = std::byte{0};  // a UDP length with no room for the BTH
    EXPECT_FALSE(parse_roce_v2_ipv4(short_udp));
}
