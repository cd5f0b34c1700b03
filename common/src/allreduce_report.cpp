// The allreduce lessons' report and inputs (see allreduce_report.hpp).
#include "rdmalab/allreduce_report.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace rdmalab {

AllreduceMeasures measure_allreduce(const AllreduceRuns& runs) {
    AllreduceMeasures measures;
    std::vector<double> times = runs.times_ms;
    std::sort(times.begin(), times.end());
    measures.median_ms = times.empty() ? 0 : times[times.size() / 2];
    measures.algbw_mb_s = static_cast<double>(runs.bytes) / (measures.median_ms / 1e3) / 1e6;
    measures.link_share = 2.0 * (runs.ranks - 1) / runs.ranks;
    measures.busbw_mb_s = measures.algbw_mb_s * measures.link_share;
    auto busbw = [&](double ms) {
        return static_cast<double>(runs.bytes) / (ms / 1e3) / 1e6 * measures.link_share;
    };
    if (!times.empty()) {
        measures.busbw_min_mb_s = busbw(times.back());
        measures.busbw_max_mb_s = busbw(times.front());
    }
    double previous = 0;
    for (double done : runs.step_done_ms) {
        measures.step_ms.push_back(done - previous);
        previous = done;
    }
    return measures;
}

std::string format_allreduce_report(std::string_view who, const AllreduceRuns& runs) {
    const int ranks = runs.ranks;
    const AllreduceMeasures measures = measure_allreduce(runs);
    std::string text;
    if (!measures.step_ms.empty()) {
        std::string steps;
        for (double step : measures.step_ms) steps += fmt::format(" {:.2f}", step);
        text += fmt::format("{}: steps of the last allreduce (ms):{}\n", who, steps);
    }
    if (runs.bytes_sent > 0)
        text += fmt::format(
            "{}: {} bytes written to {} per allreduce ({:.3f} of the vector; 2(n-1)/n = "
            "{:.3f})\n",
            who, runs.bytes_sent,
            runs.right ? fmt::format("rank {}", *runs.right) : std::string("its partners"),
            static_cast<double>(runs.bytes_sent) / runs.bytes, measures.link_share);
    text += fmt::format(
        "{}: allreduce of {} bytes over {} ranks: median {:.2f} ms of {}, algbw {:.3g} MB/s, "
        "busbw {:.3g} MB/s\n",
        who, runs.bytes, ranks, measures.median_ms, runs.times_ms.size(), measures.algbw_mb_s,
        measures.busbw_mb_s);
    return text;
}

float allreduce_input(int rank, std::size_t i) {
    return static_cast<float>((rank + 1) * static_cast<int>(i % 251 + 1));
}

std::optional<std::string> allreduce_mismatch(std::span<const float> data, int ranks) {
    for (std::size_t i = 0; i < data.size(); ++i) {
        float expected = 0;
        for (int r = 0; r < ranks; ++r) expected += allreduce_input(r, i);
        if (data[i] != expected)
            return fmt::format("element {} is {} after the allreduce, not {}", i, data[i],
                               expected);
    }
    return std::nullopt;
}

}  // namespace rdmalab
