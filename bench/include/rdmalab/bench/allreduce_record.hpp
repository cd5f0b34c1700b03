// The ring-allreduce lesson's measurement in the project's record format (records.hpp), so that
// scripts and tests read it with `rdma-bench records`, as they read rdma-bench's own results.
#pragma once

#include "rdmalab/allreduce_report.hpp"
#include "rdmalab/bench/records.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace rdmalab::bench {

// How the rank ran, beside what AllreduceRuns holds.
struct AllreduceSettings {
    int rank = 0;
    std::size_t segment = 0;  // bytes per WRITE
    std::uint32_t slots = 0;  // receive slots per link
};

// One record: "tool", "config" (algorithm, ranks, rank, bytes, segment, slots, iterations),
// "result" (median_ms, algbw_mb_s, busbw_mb_s as the report prints them, every allreduce's
// times_ms, the last one's step_ms, bytes_to_right and right_rank, and link_share = 2(n-1)/n,
// the share of the vector each link carries) and "environment".
Record allreduce_record(const AllreduceRuns& runs, const AllreduceSettings& settings,
                        Record environment);

// Writes {"records": [that record]} to path, atomically, with this host's environment.
void write_allreduce_records(const std::string& path, const AllreduceRuns& runs,
                             const AllreduceSettings& settings);

}  // namespace rdmalab::bench
