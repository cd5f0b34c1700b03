// An allreduce's measurement (the ring-allreduce and recursive-doubling lessons, mpi-allreduce) in
// the project's record format (records.hpp), so that scripts and tests read it with
// `rdma-bench records`, as they read rdma-bench's own results.
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
    std::size_t segment = 0;  // bytes per WRITE (0: one WRITE per transfer, or not ours to say)
    std::uint32_t slots = 0;  // receive slots per link
    std::string algorithm = "ring";
    std::string tool =
        "ring-allreduce 2";  // the program and its record's version (2: bytes_sent, spread)
};

// One record: "tool", "config" (algorithm, ranks, rank, bytes, segment, slots, iterations),
// "result" (median_ms, algbw_mb_s, busbw_mb_s as the report prints them, busbw_min_mb_s and
// busbw_max_mb_s from the slowest and fastest allreduce, every allreduce's times_ms, the last
// one's step_ms, bytes_sent (0: not counted) and right_rank (a ring's; null for others), and
// link_share = 2(n-1)/n, the share of the vector each link of a ring carries) and "environment".
Record allreduce_record(const AllreduceRuns& runs, const AllreduceSettings& settings,
                        Record environment);

// Writes {"records": [that record]} to path, atomically, with this host's environment.
void write_allreduce_records(const std::string& path, const AllreduceRuns& runs,
                             const AllreduceSettings& settings);

}  // namespace rdmalab::bench
