// Unit tests for rdma-bench's knob values and sweeps.
#include "rdmalab/bench/sweep.hpp"

#include <gtest/gtest.h>

using namespace rdmalab::bench;

namespace {

std::vector<std::uint64_t> values(const std::string& text, std::uint64_t min = 1,
                                  std::uint64_t max = 1ull << 40) {
    auto result = parse_values(text, min, max);
    if (auto* reason = std::get_if<std::string>(&result)) ADD_FAILURE() << text << ": " << *reason;
    auto* parsed = std::get_if<std::vector<std::uint64_t>>(&result);
    return parsed ? *parsed : std::vector<std::uint64_t>{};
}

std::string sweep_refusal(const std::string& text, std::uint64_t min = 1,
                          std::uint64_t max = 1ull << 40) {
    auto result = parse_values(text, min, max);
    auto* reason = std::get_if<std::string>(&result);
    return reason ? *reason : "(accepted)";
}

}  // namespace

TEST(ParseValues, SingleListAndPowerOfTwoRange) {
    EXPECT_EQ(values("64"), (std::vector<std::uint64_t>{64}));
    EXPECT_EQ(values("4,64"), (std::vector<std::uint64_t>{4, 64}));
    EXPECT_EQ(values("32..256"), (std::vector<std::uint64_t>{32, 64, 128, 256}));
    EXPECT_EQ(values("1K..4K"), (std::vector<std::uint64_t>{1024, 2048, 4096}));
    EXPECT_EQ(values("0,64", 0), (std::vector<std::uint64_t>{0, 64}));
}

TEST(ParseValues, RefusesGarbageBadRangesAndOutOfBounds) {
    EXPECT_NE(sweep_refusal("abc").find("not a number"), std::string::npos);
    EXPECT_NE(sweep_refusal("4,,8").find("not a number"), std::string::npos);
    EXPECT_NE(sweep_refusal("3..64").find("powers of two"), std::string::npos);
    EXPECT_NE(sweep_refusal("64..32").find("backwards"), std::string::npos);
    EXPECT_NE(sweep_refusal("8192", 1, 4096).find("outside 1..4096"), std::string::npos);
    EXPECT_NE(sweep_refusal("0").find("outside"), std::string::npos);
    EXPECT_NE(sweep_refusal("1..8192", 1, 4096).find("outside"), std::string::npos);
}

TEST(CrossProduct, FirstKnobVariesSlowest) {
    auto points = cross_product({{"size", {32, 64}}, {"window", {4, 64, 128}}});
    ASSERT_EQ(points.size(), 6u);
    EXPECT_EQ(points[0].at("size"), 32u);
    EXPECT_EQ(points[0].at("window"), 4u);
    EXPECT_EQ(points[2].at("window"), 128u);
    EXPECT_EQ(points[3].at("size"), 64u);
    EXPECT_EQ(points[3].at("window"), 4u);
}

TEST(CrossProduct, NoKnobsIsOnePoint) {
    EXPECT_EQ(cross_product({}).size(), 1u);
}
