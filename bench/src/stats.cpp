// Latency statistics: see stats.hpp.
#include "rdmalab/bench/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace rdmalab::bench {

namespace {

// Nearest rank: the smallest sample with at least p of all samples at or below it.
double nearest_rank(const std::vector<double>& sorted, double p) {
    const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
    return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

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
    summary.median_us = nearest_rank(samples_ns, 0.5) / 1000;
    summary.p99_us = nearest_rank(samples_ns, 0.99) / 1000;
    summary.p999_us = nearest_rank(samples_ns, 0.999) / 1000;
    return summary;
}

}  // namespace rdmalab::bench
