// The ring-allreduce lesson's report (see allreduce_report.hpp).
#include "rdmalab/allreduce_report.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace rdmalab {

std::string format_allreduce_report(std::string_view who, const AllreduceRuns& runs) {
    const int ranks = runs.ranks;
    std::vector<double> times = runs.times_ms;
    std::sort(times.begin(), times.end());
    const double median_ms = times.empty() ? 0 : times[times.size() / 2];
    const double algbw = static_cast<double>(runs.bytes) / (median_ms / 1e3) / 1e6;
    std::string steps;
    double previous = 0;
    for (double done : runs.step_done_ms) {
        steps += fmt::format(" {:.2f}", done - previous);
        previous = done;
    }
    std::string text = fmt::format("{}: steps of the last allreduce (ms):{}\n", who, steps);
    text += fmt::format(
        "{}: {} bytes written to rank {} per allreduce ({:.3f} of the vector; 2(n-1)/n = {:.3f})\n",
        who, runs.bytes_sent, runs.right, static_cast<double>(runs.bytes_sent) / runs.bytes,
        2.0 * (ranks - 1) / ranks);
    text += fmt::format(
        "{}: allreduce of {} bytes over {} ranks: median {:.2f} ms of {}, algbw {:.3g} MB/s, "
        "busbw {:.3g} MB/s\n",
        who, runs.bytes, ranks, median_ms, times.size(), algbw, algbw * 2 * (ranks - 1) / ranks);
    return text;
}

}  // namespace rdmalab
