// What a rank of an allreduce (the ring-allreduce and recursive-doubling lessons, mpi-allreduce)
// reports after its allreduces, in nccl-tests' measures: algbw = bytes / time, and busbw =
// algbw × 2(n-1)/n, what each link of a ring carries — comparable across rank counts and
// algorithms, and with a link's own rate. And the inputs they all reduce, with their check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
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
    std::uint64_t bytes_sent = 0;      // written by this rank in one allreduce; 0: not counted
    std::optional<int> right;          // a ring's right neighbour, whom all of it went to
};

// What the report gives: the median time (the upper middle one for an even count), algbw and
// busbw in MB/s (10^6 bytes a second), busbw's spread (from the slowest and the fastest
// allreduce), the share of the vector each link of a ring carries, 2(n-1)/n (busbw = algbw ×
// link_share), and each step's own time in the last allreduce.
struct AllreduceMeasures {
    double median_ms = 0;
    double algbw_mb_s = 0;
    double busbw_mb_s = 0;
    double busbw_min_mb_s = 0;
    double busbw_max_mb_s = 0;
    double link_share = 0;
    std::vector<double> step_ms;
};
AllreduceMeasures measure_allreduce(const AllreduceRuns& runs);

// Up to three lines, each "who: …" and a newline: each step's own time (if timed), the bytes
// written (if counted) against 2(n-1)/n of the vector, and the median time (the upper middle one
// for an even count) with algbw and busbw in MB/s.
std::string format_allreduce_report(std::string_view who, const AllreduceRuns& runs);

// Rank r's element i before the allreduce: small integers, so that every sum is exact in float32
// whatever the order of the additions, and the result can be checked for equality.
float allreduce_input(int rank, std::size_t i);

// The first element of data that is not the sum of the inputs of that many ranks, said in one
// line; nothing when every element is.
std::optional<std::string> allreduce_mismatch(std::span<const float> data, int ranks);

}  // namespace rdmalab
