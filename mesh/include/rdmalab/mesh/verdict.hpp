// rdma-mesh's verdict: from the N×N matrices of one run, the typical pair, every pair that is
// slow or failed, and every rank whose pairs are all bad (its NIC or link is the likely
// culprit). Pure logic: the tool and the unit tests feed it matrices.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rdmalab::mesh {

// A directed matrix: cell [from][to] is what `from` measured towards `to` (nullopt: not
// measured, or failed). The diagonal stays empty.
using Matrix = std::vector<std::vector<std::optional<double>>>;
Matrix empty_matrix(int n);

struct Metric {
    std::string key;    // "bw_gbps", "rate_mops", "lat_us", "lat_p99_us"
    std::string label;  // "bandwidth (Gb/s)"
    bool higher_is_better = true;
    Matrix values;
};

// A pair whose measurement did not complete, and why (said by the rank that saw it).
struct FailedPair {
    int a = 0, b = 0;  // a < b
    std::string reason;
};

struct Thresholds {
    double low_fraction = 0.8;  // higher-is-better metrics: slow below this × typical
    double high_factor = 1.5;   // latencies: slow above this × typical
};

struct MetricSummary {
    std::string key;
    double median = 0;     // the plain median of every directed cell
    double typical = 0;    // the reference: the median over ranks of each rank's median cell
    double threshold = 0;  // typical × fraction (or × factor)
    int cells = 0;         // directed cells measured
};

struct FlaggedPair {
    int a = 0, b = 0;                  // a < b
    std::vector<std::string> reasons;  // "bw_gbps 3→0: 0.12 < 0.81 (80% of typical 1.01)"
};

struct Culprit {
    int rank = 0;
    int pairs = 0;  // all of them bad
};

struct Verdict {
    std::vector<MetricSummary> metrics;
    std::vector<FlaggedPair> slow;
    std::vector<FailedPair> failed;
    std::vector<Culprit> culprits;
    bool flagged() const { return !slow.empty() || !failed.empty(); }
};

// Median with the mean of the two middle values for an even count (a reference, not a
// reported sample: percentile.hpp's nearest rank would take the lower one). Empty: 0.
double middle(std::vector<double> values);

// The typical value is the median of per-rank medians rather than the plain median: with one
// bad host of four, half of all pairs involve it and the plain median falls among the bad
// ones, while each good rank's median still sits among its good pairs.
// A rank is a culprit when none of its pairs (at least two) could be measured; or when, among
// the pairs without such a rank, it has at least two, all of them slow or failed, and some pair
// there is neither (else nothing singles it out).
// planned: the pairs the run set out to measure (a < b; empty: every pair): with --pairs sample,
// ring or rail a rank is judged by its planned pairs only.
Verdict judge(int n, const std::vector<Metric>& metrics, const std::vector<FailedPair>& failed,
              const Thresholds& thresholds, const std::vector<std::pair<int, int>>& planned = {});

// The plain summary, one line each: the typical pair per metric, each slow and failed pair,
// each culprit ("host X (rank 3): all 3 of its pairs slow or failed — its NIC or link").
// host_of names each rank's host.
std::vector<std::string> summary_lines(const Verdict& verdict, const std::vector<Metric>& metrics,
                                       const std::vector<std::string>& host_of);

}  // namespace rdmalab::mesh
