// rdma-mesh's results: see results.hpp.
#include "rdmalab/mesh/results.hpp"

#include "rdmalab/bench/stats.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace rdmalab::mesh {

using bench::Record;

void add_latency(Record& values, bench::Op op, std::vector<double> samples_ns) {
    const bool half = bench::operation(op).reply != bench::Reply::kCompletion;
    for (double& s : samples_ns)
        if (half) s /= 2;
    const bench::LatencySummary stats = bench::summarize_latency(std::move(samples_ns));
    values["lat_us"] = stats.median_us;
    values["lat_p99_us"] = stats.p99_us;
}

void add_throughput(Record& values, const std::string& what, std::uint64_t ops, std::uint64_t size,
                    double seconds) {
    const double bytes = static_cast<double>(ops) * static_cast<double>(size);
    const double s = seconds;
    if (what == "bw")
        values["bw_gbps"] = s > 0 ? bytes * 8 / s / 1e9 : 0.0;
    else
        values["rate_mops"] = s > 0 ? static_cast<double>(ops) / s / 1e6 : 0.0;
}

Record row_record(int rank, const std::vector<Cell>& cells, const std::vector<Failure>& failures,
                  const Record& pair_seconds) {
    Record row{{"rank", rank},
               {"cells", Record::array()},
               {"failures", Record::array()},
               {"pair_seconds", pair_seconds}};
    for (const Cell& c : cells) row["cells"].push_back(Record{{"to", c.to}, {"values", c.values}});
    for (const Failure& f : failures)
        row["failures"].push_back(Record{{"peer", f.peer}, {"reason", f.reason}});
    return row;
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

Gathered gather_rows(int n, const std::vector<Record>& rows, const std::vector<FailedPair>& lost) {
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
    for (const Record& row : rows) {
        const int from = row.at("rank").get<int>();
        if (from < 0 || from >= n) continue;
        for (const Record& cell : row.at("cells")) {
            const int to = cell.at("to").get<int>();
            if (to < 0 || to >= n || to == from) continue;
            for (Metric& m : g.metrics)
                if (cell.at("values").contains(m.key))
                    m.values[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)] =
                        cell.at("values").at(m.key).get<double>();
        }
        for (const Record& f : row.at("failures")) {
            const int peer = f.at("peer").get<int>();
            add_failure(FailedPair{
                std::min(from, peer), std::max(from, peer),
                fmt::format("seen by rank {}: {}", from, f.at("reason").get<std::string>())});
        }
        for (const Record& p : row.at("pair_seconds")) {
            if (from < p.at("peer").get<int>())
                g.pair_seconds.push_back(records::MeshPairTime{from, p.at("peer").get<int>(),
                                                               p.at("seconds").get<double>()});
        }
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
