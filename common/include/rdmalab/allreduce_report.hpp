// What a rank of the ring-allreduce lesson reports after its allreduces, in nccl-tests'
// measures: algbw = bytes / time, and busbw = algbw × 2(n-1)/n, what each link of the ring
// carried — comparable across rank counts, and with a link's own rate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rdmalab {

// What one rank measured.
struct AllreduceRuns {
    std::size_t bytes = 0;  // the vector, per rank
    int ranks = 2;
    std::vector<double> times_ms;      // each allreduce's
    std::vector<double> step_done_ms;  // the last allreduce: when each step had finished here
    std::uint64_t bytes_sent = 0;      // written to the right neighbour in one allreduce
    int right = 0;                     // the right neighbour's rank
};

// What the report gives: the median time (the upper middle one for an even count), algbw and
// busbw in MB/s (10^6 bytes a second), the share of the vector each link carries, 2(n-1)/n
// (busbw = algbw × link_share), and each step's own time in the last allreduce.
struct AllreduceMeasures {
    double median_ms = 0;
    double algbw_mb_s = 0;
    double busbw_mb_s = 0;
    double link_share = 0;
    std::vector<double> step_ms;
};
AllreduceMeasures measure_allreduce(const AllreduceRuns& runs);

// Three lines, each "who: …" and a newline: each step's own time, the bytes written against
// 2(n-1)/n of the vector, and the median time (the upper middle one for an even count) with
// algbw and busbw in MB/s.
std::string format_allreduce_report(std::string_view who, const AllreduceRuns& runs);

}  // namespace rdmalab
