// rdma-mesh's results: who each rank is, what one measurement gives its cell, the row each rank
// sends rank 0, and what rank 0 makes of the rows: the matrices, the failed pairs, the summary,
// mesh.json's parts and mesh.csv. Pure logic over records: the tool does the MPI and the files.
#pragma once

#include "rdmalab/bench/operations.hpp"
#include "rdmalab/bench/records.hpp"
#include "rdmalab/mesh/schedule.hpp"
#include "rdmalab/mesh/verdict.hpp"
#include "rdmalab/records/mesh.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace rdmalab::mesh {

// Who a rank is, told to every other rank once at the start, and kept in mesh.json's "ranks": the
// records library's type (records::to_json, records::mesh_rank_from_json).
using Identity = records::MeshRank;

// ---- One rank's measurements.

// What a rank measured towards one peer, and a pair that did not complete as it saw it: the
// parts of the row it sends rank 0 (records::MeshRow).
using Cell = records::MeshCell;
using Failure = records::MeshRowFailure;

// A latency measurement's values: the samples' (ns) median as lat_us and p99 as lat_p99_us,
// each half the round trip (perftest's convention) unless the operation's reply is its own
// completion (a READ: the whole round trip).
void add_latency(records::MeshCellValues& values, bench::Op op, std::vector<double> samples_ns);
// A bandwidth measurement's value: what "bw" gives bw_gbps (Gb/s of ops × size bytes), any other
// what rate_mops (million ops/s); 0 when no time passed.
void add_throughput(records::MeshCellValues& values, const std::string& what, std::uint64_t ops,
                    std::uint64_t size, double seconds);

// The row a rank sends rank 0 (records::to_json writes it, records::mesh_row_from_json reads it).
records::MeshRow row_record(int rank, const std::vector<Cell>& cells,
                            const std::vector<Failure>& failures,
                            const std::vector<records::MeshPeerTime>& pair_seconds);

// ---- Rank 0: the rows into matrices, the verdict's inputs and the files.

struct MetricInfo {
    const char* key;
    const char* label;
    bool higher;
};
// The metrics, in the order of mesh.json's matrices, mesh.csv's columns and the figures.
inline constexpr MetricInfo kMetrics[] = {{"bw_gbps", "bandwidth (Gb/s)", true},
                                          {"rate_mops", "message rate (million/s)", true},
                                          {"lat_us", "latency median (µs)", false},
                                          {"lat_p99_us", "latency p99 (µs)", false}};

// Whether --judge (a comma list of bw, rate, lat, lat-p99) is such a list, and whether it names
// a metric ("bw_gbps" is judged by "bw", "lat_p99_us" by "lat-p99").
bool is_judge_list(const std::string& judge);
bool judges(const std::string& judge, const std::string& key);

struct Gathered {
    std::vector<Metric> metrics;     // kMetrics', each an n×n matrix filled from the rows' cells
    std::vector<FailedPair> failed;  // the first report of each pair (lost ones first)
    std::vector<records::MeshPairTime> pair_seconds;  // each pair as its lower rank timed it
};
// The rows of n ranks (row_record), and the pairs lost with a rank that sent none. Cells and
// pairs naming a rank outside 0..n−1 (or the row's own) are left out.
Gathered gather_rows(int n, const std::vector<records::MeshRow>& rows,
                     const std::vector<FailedPair>& lost);

// The pairs a rank that sent no results was to meet in the rounds (of n ranks), each failed
// with reason.
std::vector<FailedPair> lost_pairs(const std::vector<Round>& rounds, int n, int rank,
                                   const std::string& reason);

// The summary: the typical values of every metric (stats: the verdict over all of them), then
// the verdict's lines over the judged metrics. hosts: each rank's Identity::label.
std::vector<std::string> report_lines(const Verdict& stats, const std::vector<Metric>& metrics,
                                      const Verdict& verdict, const std::vector<Metric>& judged,
                                      const std::vector<std::string>& hosts);

// mesh.json's parts (records::MeshRecord): each metric's statistics and matrix (null: not
// measured), the failed and slow pairs, the culprits with their hosts.
std::vector<records::MeshMetric> matrices_record(const std::vector<Metric>& metrics,
                                                 const Verdict& stats, const std::string& judge);
std::vector<records::MeshFailedPair> failed_record(const std::vector<FailedPair>& failed);
std::vector<records::MeshSlowPair> slow_record(const std::vector<FlaggedPair>& slow);
std::vector<records::MeshCulprit> culprits_record(const std::vector<Culprit>& culprits,
                                                  const std::vector<Identity>& who);

// mesh.csv: one row per directed pair with both ends' identity, the metrics (empty: not
// measured), and the run's date, kernel and tool.
std::string csv_text(const std::vector<Identity>& who, const std::vector<Metric>& metrics,
                     const std::string& date, const std::string& kernel, const std::string& tool);

}  // namespace rdmalab::mesh
