// The ring-allreduce lesson's report (see allreduce_report.hpp).
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
    std::string steps;
    for (double step : measures.step_ms) steps += fmt::format(" {:.2f}", step);
    std::string text = fmt::format("{}: steps of the last allreduce (ms):{}\n", who, steps);
    text += fmt::format(
        "{}: {} bytes written to rank {} per allreduce ({:.3f} of the vector; 2(n-1)/n = {:.3f})\n",
        who, runs.bytes_sent, runs.right, static_cast<double>(runs.bytes_sent) / runs.bytes,
        measures.link_share);
    text += fmt::format(
        "{}: allreduce of {} bytes over {} ranks: median {:.2f} ms of {}, algbw {:.3g} MB/s, "
        "busbw {:.3g} MB/s\n",
        who, runs.bytes, ranks, measures.median_ms, runs.times_ms.size(), measures.algbw_mb_s,
        measures.busbw_mb_s);
    return text;
}

}  // namespace rdmalab
