// Latency statistics from nanosecond samples, in floating point (perftest's integer stdev
// prints sub-microsecond jitter as 0).
#pragma once

#include <cstdint>
#include <vector>

namespace rdmalab::bench {

struct LatencySummary {
    std::size_t samples = 0;
    double min_us = 0, median_us = 0, mean_us = 0, stdev_us = 0, p99_us = 0, p999_us = 0,
           max_us = 0;
};

// Percentiles by the nearest-rank method (rdmalab/percentile.hpp). Empty input gives zeros.
LatencySummary summarize_latency(std::vector<double> samples_ns);

}  // namespace rdmalab::bench
