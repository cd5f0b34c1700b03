// Unit tests for the data checks lessons print as "verified": they must catch real damage.
#include "rdmalab/pattern.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace rdmalab;

TEST(Pattern, FilledBufferVerifies) {
    std::vector<std::byte> buffer(10000);
    fill_pattern(buffer, 7);
    EXPECT_FALSE(find_pattern_mismatch(buffer, 7).has_value());
}

TEST(Pattern, FindsASingleFlippedByte) {
    std::vector<std::byte> buffer(4096);
    fill_pattern(buffer, 7);
    buffer[1234] ^= std::byte{0x01};
    EXPECT_EQ(find_pattern_mismatch(buffer, 7), 1234u);
}

TEST(Pattern, ZerosAndOtherSeedsDoNotPass) {
    std::vector<std::byte> zeros(64);
    EXPECT_TRUE(find_pattern_mismatch(zeros, 7).has_value());
    std::vector<std::byte> other(64);
    fill_pattern(other, 8);
    EXPECT_TRUE(find_pattern_mismatch(other, 7).has_value());
}

TEST(Pattern, AShiftedCopyDoesNotPass) {
    std::vector<std::byte> buffer(257);
    fill_pattern(buffer, 3);
    std::vector<std::byte> shifted(buffer.begin() + 1, buffer.end());
    EXPECT_TRUE(find_pattern_mismatch(shifted, 3).has_value());
}

TEST(AllZero, SeesAnyNonZeroByte) {
    std::vector<std::byte> buffer(100);
    EXPECT_TRUE(all_zero(buffer));
    buffer[99] = std::byte{1};
    EXPECT_FALSE(all_zero(buffer));
}

TEST(MessageLength, CyclesThroughDistinctLengthsWithinBounds) {
    EXPECT_EQ(message_length(0, 4096), 4096u);
    EXPECT_EQ(message_length(1, 4096), 1365u);
    EXPECT_EQ(message_length(2, 4096), 1u);
    EXPECT_EQ(message_length(3, 4096), 4095u);
    EXPECT_EQ(message_length(4, 4096), 4096u);
    for (std::size_t i = 0; i < 8; ++i) {
        EXPECT_GE(message_length(i, 1), 1u);
        EXPECT_LE(message_length(i, 1), 1u);
    }
}
