// rdma-mesh's results: see results.hpp.
#include "rdmalab/mesh/results.hpp"

#include "rdmalab/bench/stats.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace rdmalab::mesh {

void add_latency(records::MeshCellValues& values, bench::Op op, std::vector<double> samples_ns) {
    const bool half = bench::operation(op).reply != bench::Reply::kCompletion;
    for (double& s : samples_ns)
        if (half) s /= 2;
    const bench::LatencySummary stats = bench::summarize_latency(std::move(samples_ns));
    values.lat_us = stats.median_us;
    values.lat_p99_us = stats.p99_us;
}

void add_throughput(records::MeshCellValues& values, const std::string& what, std::uint64_t ops,
                    std::uint64_t size, double seconds) {
    const double bytes = static_cast<double>(ops) * static_cast<double>(size);
    const double s = seconds;
    if (what == "bw")
        values.bw_gbps = s > 0 ? bytes * 8 / s / 1e9 : 0.0;
    else
        values.rate_mops = s > 0 ? static_cast<double>(ops) / s / 1e6 : 0.0;
}

records::MeshRow row_record(int rank, const std::vector<Cell>& cells,
                            const std::vector<Failure>& failures,
                            const std::vector<records::MeshPeerTime>& pair_seconds) {
    return records::MeshRow{
        .rank = rank, .cells = cells, .failures = failures, .pair_seconds = pair_seconds};
}

bool is_judge_list(const std::string& judge) {
    for (std::size_t start = 0; start <= judge.size();) {
        std::size_t comma = std::min(judge.find(',', start), judge.size());
        const std::string name = judge.substr(start, comma - start);
        if (name != "bw" && name != "rate" && name != "lat" && name != "lat-p99") return false;
        start = comma + 1;
    }
    return true;
}

bool judges(const std::string& judge, const std::string& key) {
    const std::string name = key == "bw_gbps"     ? "bw"
                             : key == "rate_mops" ? "rate"
                             : key == "lat_us"    ? "lat"
                                                  : "lat-p99";
    return ("," + judge + ",").find("," + name + ",") != std::string::npos;
}

Gathered gather_rows(int n, const std::vector<records::MeshRow>& rows,
                     const std::vector<FailedPair>& lost) {
    Gathered g;
    for (const MetricInfo& m : kMetrics)
        g.metrics.push_back(Metric{m.key, m.label, m.higher, empty_matrix(n)});
    // Both ends of a failed pair may report it: the first report of each pair is kept.
    auto add_failure = [&](FailedPair f) {
        for (const FailedPair& seen : g.failed)
            if (seen.a == f.a && seen.b == f.b) return;
        g.failed.push_back(std::move(f));
    };
    for (const FailedPair& f : lost) add_failure(f);
    for (const records::MeshRow& row : rows) {
        const int from = row.rank;
        if (from < 0 || from >= n) continue;
        for (const Cell& cell : row.cells) {
            if (cell.to < 0 || cell.to >= n || cell.to == from) continue;
            for (Metric& m : g.metrics)
                if (const std::optional<double> v = cell.values.of(m.key))
                    m.values[static_cast<std::size_t>(from)][static_cast<std::size_t>(cell.to)] =
                        *v;
        }
        for (const Failure& f : row.failures)
            add_failure(FailedPair{std::min(from, f.peer), std::max(from, f.peer),
                                   fmt::format("seen by rank {}: {}", from, f.reason)});
        for (const records::MeshPeerTime& p : row.pair_seconds)
            if (from < p.peer)
                g.pair_seconds.push_back(records::MeshPairTime{from, p.peer, p.seconds});
    }
    return g;
}

std::vector<FailedPair> lost_pairs(const std::vector<Round>& rounds, int n, int rank,
                                   const std::string& reason) {
    std::vector<FailedPair> lost;
    for (int p = 0; p < n; ++p)
        if (p != rank && std::any_of(rounds.begin(), rounds.end(),
                                     [&](const Round& x) { return partner_in(x, rank) == p; }))
            lost.push_back(FailedPair{std::min(rank, p), std::max(rank, p), reason});
    return lost;
}

std::vector<std::string> report_lines(const Verdict& stats, const std::vector<Metric>& metrics,
                                      const Verdict& verdict, const std::vector<Metric>& judged,
                                      const std::vector<std::string>& hosts) {
    std::vector<std::string> lines = summary_lines(stats, metrics, hosts);
    lines.resize(metrics.size());  // the typical values of every metric, then the verdict's
    const std::vector<std::string> verdict_lines = summary_lines(verdict, judged, hosts);
    lines.insert(lines.end(), verdict_lines.begin() + static_cast<long>(judged.size()),
                 verdict_lines.end());
    return lines;
}

std::vector<records::MeshMetric> matrices_record(const std::vector<Metric>& metrics,
                                                 const Verdict& stats, const std::string& judge) {
    std::vector<records::MeshMetric> out;
    for (std::size_t k = 0; k < metrics.size(); ++k)
        out.push_back(records::MeshMetric{.key = metrics[k].key,
                                          .label = metrics[k].label,
                                          .median = stats.metrics[k].median,
                                          .typical = stats.metrics[k].typical,
                                          .threshold = stats.metrics[k].threshold,
                                          .judged = judges(judge, metrics[k].key),
                                          .matrix = metrics[k].values});
    return out;
}

std::vector<records::MeshFailedPair> failed_record(const std::vector<FailedPair>& failed) {
    std::vector<records::MeshFailedPair> out;
    for (const FailedPair& f : failed) out.push_back({f.a, f.b, f.reason});
    return out;
}

std::vector<records::MeshSlowPair> slow_record(const std::vector<FlaggedPair>& slow) {
    std::vector<records::MeshSlowPair> out;
    for (const FlaggedPair& p : slow) out.push_back({p.a, p.b, p.reasons});
    return out;
}

std::vector<records::MeshCulprit> culprits_record(const std::vector<Culprit>& culprits,
                                                  const std::vector<Identity>& who) {
    std::vector<records::MeshCulprit> out;
    for (const Culprit& c : culprits)
        out.push_back({c.rank, who[static_cast<std::size_t>(c.rank)].label(), c.pairs});
    return out;
}

std::string csv_text(const std::vector<Identity>& who, const std::vector<Metric>& metrics,
                     const std::string& date, const std::string& kernel, const std::string& tool) {
    const int n = static_cast<int>(who.size());
    std::string csv =
        "from,from_host,from_device,from_gid,to,to_host,to_device,to_gid,bw_gbps,rate_mops,lat_us,"
        "lat_p99_us,date,kernel,tool\n";
    for (int from = 0; from < n; ++from)
        for (int to = 0; to < n; ++to) {
            if (from == to) continue;
            const Identity& a = who[static_cast<std::size_t>(from)];
            const Identity& b = who[static_cast<std::size_t>(to)];
            csv += fmt::format("{},{},{},{},{},{},{},{}", from, a.label(), a.device, a.gid, to,
                               b.label(), b.device, b.gid);
            for (const Metric& m : metrics) {
                const auto& v =
                    m.values[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)];
                csv += v ? fmt::format(",{:.6g}", *v) : std::string(",");
            }
            csv += fmt::format(",{},{},{}\n", date, kernel, tool);
        }
    return csv;
}

}  // namespace rdmalab::mesh
