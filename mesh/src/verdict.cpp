// The verdict over a run's matrices; see verdict.hpp.
#include "rdmalab/mesh/verdict.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace rdmalab::mesh {

Matrix empty_matrix(int n) {
    return Matrix(static_cast<std::size_t>(n),
                  std::vector<std::optional<double>>(static_cast<std::size_t>(n)));
}

double middle(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const std::size_t half = values.size() / 2;
    if (values.size() % 2 == 1) return values[half];
    return (values[half - 1] + values[half]) / 2;
}

namespace {

std::optional<double> cell(const Matrix& m, int from, int to) {
    if (from < 0 || to < 0 || static_cast<std::size_t>(from) >= m.size()) return std::nullopt;
    const auto& row = m[static_cast<std::size_t>(from)];
    if (static_cast<std::size_t>(to) >= row.size()) return std::nullopt;
    return row[static_cast<std::size_t>(to)];
}

std::string number(double value) {
    if (value >= 100) return fmt::format("{:.0f}", value);
    if (value >= 10) return fmt::format("{:.1f}", value);
    return fmt::format("{:.3g}", value);
}

}  // namespace

Verdict judge(int n, const std::vector<Metric>& metrics, const std::vector<FailedPair>& failed,
              const Thresholds& thresholds, const std::vector<std::pair<int, int>>& planned) {
    Verdict verdict;
    verdict.failed = failed;
    std::map<std::pair<int, int>, std::vector<std::string>> slow;
    for (const Metric& metric : metrics) {
        MetricSummary summary{.key = metric.key};
        std::vector<double> all, rank_medians;
        for (int r = 0; r < n; ++r) {
            std::vector<double> mine;
            for (int p = 0; p < n; ++p) {
                if (p == r) continue;
                if (auto v = cell(metric.values, r, p)) mine.push_back(*v);
                if (auto v = cell(metric.values, p, r)) mine.push_back(*v);
                if (auto v = cell(metric.values, r, p)) all.push_back(*v);
            }
            if (!mine.empty()) rank_medians.push_back(middle(mine));
        }
        summary.cells = static_cast<int>(all.size());
        summary.median = middle(all);
        summary.typical = middle(rank_medians);
        summary.threshold = metric.higher_is_better ? summary.typical * thresholds.low_fraction
                                                    : summary.typical * thresholds.high_factor;
        verdict.metrics.push_back(summary);
        if (summary.cells == 0) continue;
        for (int from = 0; from < n; ++from)
            for (int to = 0; to < n; ++to) {
                auto v = cell(metric.values, from, to);
                if (from == to || !v) continue;
                const bool bad =
                    metric.higher_is_better ? *v < summary.threshold : *v > summary.threshold;
                if (!bad) continue;
                slow[{std::min(from, to), std::max(from, to)}].push_back(fmt::format(
                    "{} {}→{}: {} {} {} ({} typical {})", metric.key, from, to, number(*v),
                    metric.higher_is_better ? "<" : ">", number(summary.threshold),
                    metric.higher_is_better
                        ? fmt::format("{:.0f}% of", thresholds.low_fraction * 100)
                        : fmt::format("{:.2g}×", thresholds.high_factor),
                    number(summary.typical)));
            }
    }
    for (auto& [pair, reasons] : slow)
        verdict.slow.push_back(FlaggedPair{pair.first, pair.second, std::move(reasons)});

    std::set<std::pair<int, int>> bad, failed_pairs;
    for (const FlaggedPair& p : verdict.slow) bad.insert({p.a, p.b});
    for (const FailedPair& p : failed) {
        bad.insert({std::min(p.a, p.b), std::max(p.a, p.b)});
        failed_pairs.insert({std::min(p.a, p.b), std::max(p.a, p.b)});
    }
    auto key = [](int a, int b) { return std::pair{std::min(a, b), std::max(a, b)}; };
    // The pairs the run meant to measure; a pair left out of the plan says nothing of a rank.
    std::set<std::pair<int, int>> plan;
    for (const auto& [a, b] : planned) plan.insert(key(a, b));
    auto in_plan = [&](int a, int b) {
        return a != b && (plan.empty() || plan.contains(key(a, b)));
    };
    // First the ranks none of whose pairs could be measured (silent, no device): their failures
    // explain their pairs, so the others are judged without those pairs. Otherwise a noisy pair
    // between two good ranks, beside their failed pairs with the silent one, would make every
    // rank look bad and single out none.
    // (Only where some pair between two other ranks was measured: when every pair failed,
    // nothing singles one rank out.)
    std::set<int> named;
    for (int r = 0; r < n; ++r) {
        int planned_here = 0, failed_here = 0;
        for (int p = 0; p < n; ++p)
            if (in_plan(r, p)) {
                ++planned_here;
                if (failed_pairs.contains(key(r, p))) ++failed_here;
            }
        bool others_measured = false;
        for (int a = 0; a < n; ++a)
            for (int b = a + 1; b < n; ++b)
                if (a != r && b != r && in_plan(a, b) && !failed_pairs.contains({a, b}))
                    others_measured = true;
        if (planned_here >= 2 && failed_here == planned_here && others_measured) named.insert(r);
    }
    // Then, among the pairs left, a rank with at least two of them, all slow or failed, while
    // some pair left is neither (else nothing singles it out).
    int pairs_left = 0, bad_left = 0;
    for (int a = 0; a < n; ++a)
        for (int b = a + 1; b < n; ++b)
            if (in_plan(a, b) && !named.contains(a) && !named.contains(b)) {
                ++pairs_left;
                if (bad.contains({a, b})) ++bad_left;
            }
    std::set<int> slow_ranks;
    if (bad_left < pairs_left)
        for (int r = 0; r < n; ++r) {
            if (named.contains(r)) continue;
            int mine = 0, bad_mine = 0;
            for (int p = 0; p < n; ++p)
                if (in_plan(r, p) && !named.contains(p)) {
                    ++mine;
                    if (bad.contains(key(r, p))) ++bad_mine;
                }
            if (mine >= 2 && bad_mine == mine) slow_ranks.insert(r);
        }
    for (int r = 0; r < n; ++r) {
        if (!named.contains(r) && !slow_ranks.contains(r)) continue;
        int bad_pairs = 0;
        for (int p = 0; p < n; ++p)
            if (p != r && bad.contains(key(r, p))) ++bad_pairs;
        verdict.culprits.push_back(Culprit{r, bad_pairs});
    }
    return verdict;
}

std::vector<std::string> summary_lines(const Verdict& verdict, const std::vector<Metric>& metrics,
                                       const std::vector<std::string>& host_of) {
    auto host = [&](int rank) {
        return rank >= 0 && static_cast<std::size_t>(rank) < host_of.size()
                   ? host_of[static_cast<std::size_t>(rank)]
                   : fmt::format("rank {}", rank);
    };
    std::vector<std::string> lines;
    for (std::size_t i = 0; i < verdict.metrics.size() && i < metrics.size(); ++i) {
        const MetricSummary& s = verdict.metrics[i];
        lines.push_back(
            fmt::format("{}: median pair {}, typical {} over {} cells; pairs {} {} are flagged",
                        metrics[i].label, number(s.median), number(s.typical), s.cells,
                        metrics[i].higher_is_better ? "below" : "above", number(s.threshold)));
    }
    for (const FlaggedPair& p : verdict.slow)
        for (const std::string& reason : p.reasons)
            lines.push_back(fmt::format("slow pair {}–{} ({} – {}): {}", p.a, p.b, host(p.a),
                                        host(p.b), reason));
    for (const FailedPair& p : verdict.failed)
        lines.push_back(fmt::format("failed pair {}–{} ({} – {}): {}", p.a, p.b, host(p.a),
                                    host(p.b), p.reason));
    for (const Culprit& c : verdict.culprits)
        lines.push_back(
            fmt::format("host {} (rank {}): all {} of its pairs slow or failed — its "
                        "NIC or link",
                        host(c.rank), c.rank, c.pairs));
    if (!verdict.flagged())
        lines.push_back("verdict: every pair within the thresholds");
    else
        lines.push_back(fmt::format("verdict: {} slow pair(s), {} failed pair(s), {} host(s) named",
                                    verdict.slow.size(), verdict.failed.size(),
                                    verdict.culprits.size()));
    return lines;
}

}  // namespace rdmalab::mesh
