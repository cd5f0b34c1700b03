// Unit tests for the verbs helpers that need no device.
#include "rdmalab/verbs.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

using namespace rdmalab;

TEST(Buffer, IsPageAlignedAndZeroed) {
    Buffer buffer(5000);
    EXPECT_EQ(buffer.size(), 5000u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.data()) % 4096, 0u);
    for (std::byte b : buffer.bytes()) ASSERT_EQ(b, std::byte{0});
}

TEST(MtuBytes, MapsEveryEnumValue) {
    EXPECT_EQ(mtu_bytes(IBV_MTU_256), 256);
    EXPECT_EQ(mtu_bytes(IBV_MTU_1024), 1024);
    EXPECT_EQ(mtu_bytes(IBV_MTU_4096), 4096);
    EXPECT_EQ(mtu_bytes(static_cast<ibv_mtu>(6)), 0);  // no port reports it
}

TEST(MtuBytes, ByteCountsBackToTheEnum) {
    EXPECT_EQ(mtu_from_bytes(256), IBV_MTU_256);
    EXPECT_EQ(mtu_from_bytes(2048), IBV_MTU_2048);
    EXPECT_EQ(mtu_from_bytes(4096), IBV_MTU_4096);
    EXPECT_FALSE(mtu_from_bytes(0).has_value());
    EXPECT_FALSE(mtu_from_bytes(1500).has_value());  // an Ethernet MTU is not an RDMA one
    EXPECT_FALSE(mtu_from_bytes(9000).has_value());
    EXPECT_FALSE(mtu_from_bytes(128).has_value());
}

TEST(FormatGid, ShowsIpv4MappedAndLinkLocal) {
    ibv_gid gid{};
    std::memset(gid.raw, 0, sizeof gid.raw);
    gid.raw[10] = gid.raw[11] = 0xff;
    gid.raw[12] = 198;
    gid.raw[13] = 51;
    gid.raw[14] = 100;
    gid.raw[15] = 1;
    EXPECT_EQ(format_gid(gid), "::ffff:198.51.100.1");
    ibv_gid local{};
    local.raw[0] = 0xfe;
    local.raw[1] = 0x80;
    local.raw[15] = 1;
    EXPECT_EQ(format_gid(local), "fe80::1");
}

TEST(IsIpv4Mapped, OnlyTheFfffPrefix) {
    ibv_gid mapped{};
    mapped.raw[10] = mapped.raw[11] = 0xff;
    mapped.raw[12] = 198;
    EXPECT_TRUE(is_ipv4_mapped(mapped));
    ibv_gid local{};
    local.raw[0] = 0xfe;
    local.raw[1] = 0x80;
    local.raw[10] = local.raw[11] = 0xff;
    EXPECT_FALSE(is_ipv4_mapped(local));
}
