// Latency statistics: see stats.hpp.
#include "rdmalab/bench/stats.hpp"

#include "rdmalab/percentile.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace rdmalab::bench {

LatencySummary summarize_latency(std::vector<double> samples_ns) {
    LatencySummary summary;
    summary.samples = samples_ns.size();
    if (samples_ns.empty()) return summary;
    std::sort(samples_ns.begin(), samples_ns.end());
    const double n = static_cast<double>(samples_ns.size());
    const double mean = std::accumulate(samples_ns.begin(), samples_ns.end(), 0.0) / n;
    double squares = 0;
    for (double s : samples_ns) squares += (s - mean) * (s - mean);
    summary.min_us = samples_ns.front() / 1000;
    summary.max_us = samples_ns.back() / 1000;
    summary.mean_us = mean / 1000;
    summary.stdev_us = samples_ns.size() > 1 ? std::sqrt(squares / (n - 1)) / 1000 : 0;
    summary.median_us = percentile(samples_ns, 0.5) / 1000;
    summary.p99_us = percentile(samples_ns, 0.99) / 1000;
    summary.p999_us = percentile(samples_ns, 0.999) / 1000;
    return summary;
}

}  // namespace rdmalab::bench
