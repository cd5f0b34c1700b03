// Unit tests for the private-data codec: round trip, and refusal of everything a peer could
// send wrong.
#include "rdmalab/private_data.hpp"
#include "rdmalab/error.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace rdmalab;

namespace {

const RemoteBuffer kSample{.address = 0x00007f1234560000ull,
                           .rkey = 0xabcd1234u,
                           .length = 65536,
                           .use = BufferUse::kWriteTarget};

std::string refusal(std::span<const std::byte> bytes, BufferUse use = BufferUse::kWriteTarget) {
    auto result = decode_remote_buffer(bytes, use);
    auto* reason = std::get_if<std::string>(&result);
    return reason ? *reason : std::string("(accepted)");
}

}  // namespace

TEST(PrivateData, RoundTrips) {
    auto wire = encode_remote_buffer(kSample);
    auto decoded = decode_remote_buffer_or_throw(wire, BufferUse::kWriteTarget);
    EXPECT_EQ(decoded.address, kSample.address);
    EXPECT_EQ(decoded.rkey, kSample.rkey);
    EXPECT_EQ(decoded.length, kSample.length);
}

TEST(PrivateData, IsBigEndianOnTheWire) {
    auto wire = encode_remote_buffer(kSample);
    EXPECT_EQ(wire[16], std::byte{0xab});  // rkey's most significant byte comes first
    EXPECT_EQ(wire[19], std::byte{0x34});
    EXPECT_EQ(wire[8], std::byte{0x00});
    EXPECT_EQ(wire[10], std::byte{0x7f});
}

TEST(PrivateData, AcceptsZeroPaddingAfterTheRecord) {
    // IB CM delivers the whole private-data field (e.g. 196 bytes for an accept), zero padded.
    auto wire = encode_remote_buffer(kSample);
    std::vector<std::byte> padded(wire.begin(), wire.end());
    padded.resize(196, std::byte{0});
    EXPECT_EQ(decode_remote_buffer_or_throw(padded, BufferUse::kWriteTarget).rkey, kSample.rkey);
}

TEST(PrivateData, RefusesShortInput) {
    auto wire = encode_remote_buffer(kSample);
    EXPECT_NE(refusal(std::span(wire).first(23)).find("too short"), std::string::npos);
    EXPECT_NE(refusal({}).find("too short"), std::string::npos);
}

TEST(PrivateData, RefusesBadMagicVersionAndUse) {
    auto wire = encode_remote_buffer(kSample);
    auto bad_magic = wire;
    bad_magic[0] = std::byte{'X'};
    EXPECT_NE(refusal(bad_magic).find("magic"), std::string::npos);
    auto bad_version = wire;
    bad_version[4] = std::byte{9};
    EXPECT_NE(refusal(bad_version).find("version 9"), std::string::npos);
    EXPECT_NE(refusal(wire, BufferUse::kReadSource).find("expected one for RDMA READ source"),
              std::string::npos);
}

TEST(PrivateData, RefusesNonZeroReservedBytes) {
    // Found by tests/fuzz/private_data: such a record was accepted and did not re-encode to itself.
    auto wire = encode_remote_buffer(kSample);
    wire[7] = std::byte{0x34};
    EXPECT_NE(refusal(wire).find("non-zero reserved bytes"), std::string::npos);
}

TEST(PrivateData, RefusesZeroLengthAndWrapAround) {
    auto zero = kSample;
    zero.length = 0;
    EXPECT_NE(refusal(encode_remote_buffer(zero)).find("length 0"), std::string::npos);
    auto wrapping = kSample;
    wrapping.address = ~0ull - 10;
    EXPECT_NE(refusal(encode_remote_buffer(wrapping)).find("wraps"), std::string::npos);
}

TEST(PrivateData, OrThrowThrowsTheReason) {
    EXPECT_THROW(decode_remote_buffer_or_throw({}, BufferUse::kWriteTarget), Error);
}

TEST(PrivateData, OrThrowChecksTheNeededLength) {
    auto wire = encode_remote_buffer(kSample);
    EXPECT_EQ(decode_remote_buffer_or_throw(wire, BufferUse::kWriteTarget, 65536).length, 65536u);
    try {
        decode_remote_buffer_or_throw(wire, BufferUse::kWriteTarget, 65537);
        FAIL() << "a buffer too small was accepted";
    } catch (const Error& e) {
        EXPECT_STREQ(
            e.what(),
            "the server's buffer holds 65536 bytes; cannot write 65537 (use -s 65536 or less)");
    }
}
