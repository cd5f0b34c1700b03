// Unit tests for rdma-bench's latency statistics.
#include "rdmalab/bench/stats.hpp"
#include "rdmalab/percentile.hpp"

#include <gtest/gtest.h>

using namespace rdmalab::bench;

TEST(SummarizeLatency, NearestRankPercentilesInMicroseconds) {
    std::vector<double> samples;
    for (int i = 1000; i >= 1; --i) samples.push_back(i * 1000.0);  // 1..1000 µs, unsorted
    auto summary = summarize_latency(samples);
    EXPECT_EQ(summary.samples, 1000u);
    EXPECT_DOUBLE_EQ(summary.min_us, 1);
    EXPECT_DOUBLE_EQ(summary.max_us, 1000);
    EXPECT_DOUBLE_EQ(summary.median_us, 500);
    EXPECT_DOUBLE_EQ(summary.p99_us, 990);
    EXPECT_DOUBLE_EQ(summary.p999_us, 999);
    EXPECT_DOUBLE_EQ(summary.mean_us, 500.5);
}

TEST(SummarizeLatency, KeepsSubMicrosecondJitter) {
    auto summary = summarize_latency({1000, 1200, 1400});
    EXPECT_NEAR(summary.stdev_us, 0.2, 1e-9);  // an integer stdev would print 0
}

TEST(SummarizeLatency, EmptyAndSingle) {
    EXPECT_EQ(summarize_latency({}).samples, 0u);
    auto one = summarize_latency({2500});
    EXPECT_DOUBLE_EQ(one.median_us, 2.5);
    EXPECT_DOUBLE_EQ(one.p999_us, 2.5);
    EXPECT_DOUBLE_EQ(one.stdev_us, 0);
}

// The one percentile definition (rdmalab/percentile.hpp) that the lessons, rdma-bench and
// gpu-memory-bench share: nearest rank, always a measured value.
TEST(Percentile, NearestRankIsAMeasuredValue) {
    const std::vector<double> samples = {5, 1, 4, 2, 3};
    EXPECT_EQ(rdmalab::percentile(samples, 0.5), 3);
    EXPECT_EQ(rdmalab::percentile(samples, 0.99), 5);
    EXPECT_EQ(rdmalab::percentile(samples, 0.2), 1);
    EXPECT_EQ(rdmalab::median({4, 1, 3, 2}), 2);  // even count: the lower middle
    EXPECT_EQ(rdmalab::percentile({}, 0.5), 0);
}
