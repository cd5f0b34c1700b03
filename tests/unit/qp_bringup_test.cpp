// Unit tests for the QP endpoint record (qp_bringup): exact big-endian layout, round trip, and
// refusal of everything a peer could send wrong; and the names printed for masks and states.
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/error.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace rdmalab;

namespace {

QpEndpoint sample_endpoint() {
    QpEndpoint endpoint{.qp_type = IBV_QPT_RC,
                        .link_layer = IBV_LINK_LAYER_ETHERNET,
                        .active_mtu = IBV_MTU_1024,
                        .qpn = 0x123456,
                        .psn = 0xabcdef,
                        .lid = 0x1234,
                        .gid = {},
                        .address = 0x00007f1234560000ull,
                        .rkey = 0xabcd1234u,
                        .length = 65536};
    for (int i = 0; i < 16; ++i) endpoint.gid.raw[i] = static_cast<std::uint8_t>(0xf0 + i);
    return endpoint;
}

std::string endpoint_refusal(std::span<const std::byte> bytes, ibv_qp_type type = IBV_QPT_RC,
                             PeerBuffer buffer = PeerBuffer::kAdvertised) {
    auto result = decode_qp_endpoint(bytes, type, buffer);
    auto* reason = std::get_if<std::string>(&result);
    return reason ? *reason : std::string("(accepted)");
}

bool mentions(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST(QpEndpoint, RoundTrips) {
    const QpEndpoint in = sample_endpoint();
    const QpEndpoint out =
        decode_qp_endpoint_or_throw(encode_qp_endpoint(in), IBV_QPT_RC, PeerBuffer::kAdvertised);
    EXPECT_EQ(out.qp_type, in.qp_type);
    EXPECT_EQ(out.link_layer, in.link_layer);
    EXPECT_EQ(out.active_mtu, in.active_mtu);
    EXPECT_EQ(out.qpn, in.qpn);
    EXPECT_EQ(out.psn, in.psn);
    EXPECT_EQ(out.lid, in.lid);
    EXPECT_EQ(0, std::memcmp(out.gid.raw, in.gid.raw, 16));
    EXPECT_EQ(out.address, in.address);
    EXPECT_EQ(out.rkey, in.rkey);
    EXPECT_EQ(out.length, in.length);
}

TEST(QpEndpoint, HasAFixedBigEndianLayout) {
    const auto wire = encode_qp_endpoint(sample_endpoint());
    const std::vector<std::uint8_t> expected = {
        'R',          'D',  'Q',  'P',  2,    IBV_QPT_RC, IBV_LINK_LAYER_ETHERNET,
        IBV_MTU_1024,                    // header
        0x00,         0x12, 0x34, 0x56,  // QPN
        0x00,         0xab, 0xcd, 0xef,  // PSN
        0x12,         0x34, 0,    0,     // LID, reserved
        0xf0,         0xf1, 0xf2, 0xf3, 0xf4, 0xf5,       0xf6,
        0xf7,  // GID, as is
        0xf8,         0xf9, 0xfa, 0xfb, 0xfc, 0xfd,       0xfe,
        0xff,  //
        0x00,         0x00, 0x7f, 0x12, 0x34, 0x56,       0x00,
        0x00,                            // address
        0xab,         0xcd, 0x12, 0x34,  // rkey
        0x00,         0x01, 0x00, 0x00,  // length
        0x00,         0x00, 0x00, 0x00,  // Q_Key: RC has none
    };
    ASSERT_EQ(wire.size(), kQpEndpointWireSize);
    std::vector<std::uint8_t> actual;
    for (std::byte b : wire) actual.push_back(std::to_integer<std::uint8_t>(b));
    EXPECT_EQ(actual, expected);
}

TEST(QpEndpoint, RefusesAnyOtherSize) {
    const auto wire = encode_qp_endpoint(sample_endpoint());
    EXPECT_TRUE(mentions(endpoint_refusal(std::span(wire).first(55)), "55 bytes, expected 56"));
    std::vector<std::byte> longer(wire.begin(), wire.end());
    longer.push_back(std::byte{0});
    EXPECT_TRUE(mentions(endpoint_refusal(longer), "57 bytes"));
    EXPECT_TRUE(mentions(endpoint_refusal({}), "0 bytes"));
}

TEST(QpEndpoint, RefusesBadMagicVersionAndReservedBytes) {
    const auto wire = encode_qp_endpoint(sample_endpoint());
    auto bad = wire;
    bad[1] = std::byte{'X'};
    EXPECT_TRUE(mentions(endpoint_refusal(bad), "magic"));
    bad = wire;
    bad[4] = std::byte{1};  // version 1 had no Q_Key
    EXPECT_TRUE(mentions(endpoint_refusal(bad), "version 1, expected 2"));
    bad = wire;
    bad[19] = std::byte{1};
    EXPECT_TRUE(mentions(endpoint_refusal(bad), "reserved"));
}

TEST(QpEndpoint, RefusesAnotherTransport) {
    const auto wire = encode_qp_endpoint(sample_endpoint());
    EXPECT_TRUE(mentions(endpoint_refusal(wire, IBV_QPT_UC), "the peer's QP is RC"));
    auto uc = sample_endpoint();
    uc.qp_type = IBV_QPT_UC;
    EXPECT_TRUE(
        mentions(endpoint_refusal(encode_qp_endpoint(uc), IBV_QPT_RC), "the peer's QP is UC"));
    EXPECT_EQ(endpoint_refusal(encode_qp_endpoint(uc), IBV_QPT_UC), "(accepted)");
}

TEST(QpEndpoint, RefusesUnknownLinkLayerAndMtu) {
    const auto wire = encode_qp_endpoint(sample_endpoint());
    auto bad = wire;
    bad[6] = std::byte{0};
    EXPECT_TRUE(mentions(endpoint_refusal(bad), "link layer"));
    bad = wire;
    bad[7] = std::byte{0};
    EXPECT_TRUE(mentions(endpoint_refusal(bad), "MTU code 0"));
    bad[7] = std::byte{6};
    EXPECT_TRUE(mentions(endpoint_refusal(bad), "MTU code 6"));
    bad[7] = static_cast<std::byte>(IBV_MTU_4096);
    EXPECT_EQ(endpoint_refusal(bad), "(accepted)");
}

TEST(QpEndpoint, QpnAndPsnAre24Bits) {
    auto endpoint = sample_endpoint();
    endpoint.qpn = 0xffffff;
    endpoint.psn = 0xffffff;
    EXPECT_EQ(endpoint_refusal(encode_qp_endpoint(endpoint)), "(accepted)");
    endpoint.qpn = 0x1000000;
    EXPECT_TRUE(mentions(endpoint_refusal(encode_qp_endpoint(endpoint)), "QPN 0x1000000"));
    endpoint.qpn = 1;  // the GSI QP, never a connected one
    EXPECT_TRUE(mentions(endpoint_refusal(encode_qp_endpoint(endpoint)), "QPN 0x1"));
    endpoint.qpn = 0x12;
    endpoint.psn = 0x1000000;
    EXPECT_TRUE(mentions(endpoint_refusal(encode_qp_endpoint(endpoint)), "PSN 0x1000000"));
    endpoint.psn = 0;
    EXPECT_EQ(endpoint_refusal(encode_qp_endpoint(endpoint)), "(accepted)");
}

TEST(QpEndpoint, ChecksTheAdvertisedBuffer) {
    auto endpoint = sample_endpoint();
    endpoint.length = 0;
    EXPECT_TRUE(mentions(endpoint_refusal(encode_qp_endpoint(endpoint)), "length 0"));
    endpoint.length = 4096;
    endpoint.address = ~0ull - 100;
    EXPECT_TRUE(mentions(endpoint_refusal(encode_qp_endpoint(endpoint)), "wraps"));
}

TEST(QpEndpoint, RefusesABufferWhereNoneBelongs) {
    EXPECT_TRUE(mentions(
        endpoint_refusal(encode_qp_endpoint(sample_endpoint()), IBV_QPT_RC, PeerBuffer::kNone),
        "none was expected"));
    auto endpoint = sample_endpoint();
    endpoint.address = 0;
    endpoint.rkey = 0;
    endpoint.length = 0;
    EXPECT_EQ(endpoint_refusal(encode_qp_endpoint(endpoint), IBV_QPT_RC, PeerBuffer::kNone),
              "(accepted)");
}

TEST(QpEndpoint, CarriesAUdQkeyAndRefusesOthers) {
    QpEndpoint ud = sample_endpoint();
    ud.qp_type = IBV_QPT_UD;
    ud.address = ud.rkey = ud.length = 0;
    ud.qkey = 0x1ab2c3d4;
    const auto wire = encode_qp_endpoint(ud);
    EXPECT_EQ(std::to_integer<int>(wire[52]), 0x1a);  // big-endian, last field
    EXPECT_EQ(std::to_integer<int>(wire[55]), 0xd4);
    EXPECT_EQ(decode_qp_endpoint_or_throw(wire, IBV_QPT_UD, PeerBuffer::kNone).qkey, 0x1ab2c3d4u);
    ud.qkey = 0x80000001;  // controlled: only privileged senders may use it
    EXPECT_TRUE(mentions(endpoint_refusal(encode_qp_endpoint(ud), IBV_QPT_UD, PeerBuffer::kNone),
                         "controlled key"));
    QpEndpoint rc = sample_endpoint();
    rc.qkey = 7;
    EXPECT_TRUE(mentions(endpoint_refusal(encode_qp_endpoint(rc)), "only a UD QP has one"));
}

TEST(QpEndpoint, ThrowsTheReason) {
    auto wire = encode_qp_endpoint(sample_endpoint());
    wire[0] = std::byte{0};
    EXPECT_THROW(decode_qp_endpoint_or_throw(wire, IBV_QPT_RC, PeerBuffer::kAdvertised), Error);
}

TEST(QpEndpoint, RandomPsnsFitIn24BitsAndVary) {
    std::uint32_t first = random_psn();
    bool varied = false;
    for (int i = 0; i < 64; ++i) {
        const std::uint32_t psn = random_psn();
        EXPECT_LE(psn, 0xffffffu);
        varied = varied || psn != first;
    }
    EXPECT_TRUE(varied);
}

TEST(QpNames, MasksAccessFlagsAndStates) {
    EXPECT_EQ(
        qp_attr_mask_names(IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
        "IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS");
    EXPECT_EQ(qp_attr_mask_names(IBV_QP_STATE), "IBV_QP_STATE");
    EXPECT_EQ(qp_attr_mask_names(0), "0");
    EXPECT_EQ(access_flag_names(0), "none");
    EXPECT_EQ(access_flag_names(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE),
              "LOCAL_WRITE | REMOTE_WRITE");
    EXPECT_STREQ(qp_state_name(IBV_QPS_RTS), "RTS");
    EXPECT_STREQ(qp_state_name(IBV_QPS_ERR), "ERROR");
    EXPECT_EQ(wc_status_name(IBV_WC_REM_ACCESS_ERR), "IBV_WC_REM_ACCESS_ERR");
}

TEST(QpTransitions, UcLeavesOutTheRcOnlyAttributes) {
    PortAddress local{};
    local.gid_index = 1;
    local.active_mtu = IBV_MTU_4096;
    QpEndpoint remote = sample_endpoint();  // MTU 1024: the path MTU is the smaller one
    const Reliability reliability{};
    const auto rc = rtr_transition(IBV_QPT_RC, local, remote, reliability);
    const auto uc = rtr_transition(IBV_QPT_UC, local, remote, reliability);
    EXPECT_EQ(rc.attributes.path_mtu, IBV_MTU_1024);
    EXPECT_EQ(rc.mask & ~uc.mask, IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    EXPECT_EQ(uc.attributes.rq_psn, remote.psn);
    EXPECT_EQ(uc.attributes.dest_qp_num, remote.qpn);
    EXPECT_EQ(uc.attributes.ah_attr.is_global, 1);
    const auto rts_rc = rts_transition(IBV_QPT_RC, 5, reliability);
    const auto rts_uc = rts_transition(IBV_QPT_UC, 5, reliability);
    EXPECT_EQ(rts_uc.mask, IBV_QP_STATE | IBV_QP_SQ_PSN);
    EXPECT_EQ(rts_rc.mask & ~rts_uc.mask,
              IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

TEST(QpTransitions, InfiniBandWithoutGidUsesTheLid) {
    PortAddress local{};
    local.link_layer = IBV_LINK_LAYER_INFINIBAND;
    local.gid_index = -1;
    QpEndpoint remote = sample_endpoint();
    remote.link_layer = IBV_LINK_LAYER_INFINIBAND;
    const auto rtr = rtr_transition(IBV_QPT_RC, local, remote, Reliability{});
    EXPECT_EQ(rtr.attributes.ah_attr.is_global, 0);
    EXPECT_EQ(rtr.attributes.ah_attr.dlid, 0x1234);
}
