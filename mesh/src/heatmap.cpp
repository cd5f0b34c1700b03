// Draws the heatmap; see heatmap.hpp.
#include "rdmalab/mesh/heatmap.hpp"

#include "rdmalab/bench/plot.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace rdmalab::mesh {

namespace {

// Green at the typical value (or better), through yellow, to red at half of it (latency: at
// twice it), so a slow link stands out whatever the absolute numbers are.
std::string colour(double value, double typical, bool higher_is_better) {
    if (typical <= 0 || value <= 0) return "#dddddd";
    double ratio = higher_is_better ? value / typical : typical / value;  // 1 = typical
    double bad = std::clamp((1.0 - ratio) / 0.5, 0.0, 1.0);               // 0 good … 1 bad
    int r = bad < 0.5 ? static_cast<int>(80 + 350 * bad) : 235;
    int g = bad < 0.5 ? 190 : static_cast<int>(190 - 300 * (bad - 0.5));
    return fmt::format("#{:02x}{:02x}{:02x}", std::clamp(r, 0, 255), std::clamp(g, 0, 255), 70);
}

std::string cell_text(double value) {
    if (value >= 100) return fmt::format("{:.0f}", value);
    if (value >= 10) return fmt::format("{:.1f}", value);
    return fmt::format("{:.2f}", value);
}

}  // namespace

std::string render_heatmap(const Heatmap& h) {
    using bench::xml_escape;
    const int n = h.metric ? static_cast<int>(h.metric->values.size()) : 0;
    const int cell = n <= 8 ? 64 : std::max(6, 512 / std::max(n, 1));
    const bool text_in_cells = cell >= 40;
    const int left = 150, top = 70, grid = cell * n;
    const int width = std::max(left + grid + 40, 560), height = top + grid + 110;
    std::ostringstream svg;
    svg << fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} "
        "{}\" font-family=\"sans-serif\">\n",
        width, height, width, height);
    svg << fmt::format("<rect width=\"{}\" height=\"{}\" fill=\"white\"/>\n", width, height);
    svg << fmt::format("<text x=\"{}\" y=\"24\" font-size=\"16\" font-weight=\"bold\">{}</text>\n",
                       12, xml_escape(h.title));
    svg << fmt::format(
        "<text x=\"{}\" y=\"46\" font-size=\"13\">row: the rank that sent (or pinged); column: its "
        "peer. Typical {}, flagged beyond {}</text>\n",
        12, cell_text(h.typical), cell_text(h.threshold));
    for (int i = 0; i < n; ++i) {
        const std::string label = i < static_cast<int>(h.labels.size())
                                      ? h.labels[static_cast<std::size_t>(i)]
                                      : std::to_string(i);
        svg << fmt::format(
            "<text x=\"{}\" y=\"{}\" font-size=\"13\" text-anchor=\"end\" "
            "dominant-baseline=\"middle\">{}</text>\n",
            left - 8, top + i * cell + cell / 2, xml_escape(label));
        svg << fmt::format(
            "<text x=\"{}\" y=\"{}\" font-size=\"13\" text-anchor=\"middle\">{}</text>\n",
            left + i * cell + cell / 2, top + grid + 18, i);
    }
    svg << fmt::format(
        "<text x=\"{}\" y=\"{}\" font-size=\"13\" text-anchor=\"middle\">peer "
        "rank</text>\n",
        left + grid / 2, top + grid + 36);
    for (int from = 0; from < n; ++from)
        for (int to = 0; to < n; ++to) {
            const int x = left + to * cell, y = top + from * cell;
            const bool planned =
                h.planned.empty() || std::any_of(h.planned.begin(), h.planned.end(), [&](auto p) {
                    return (p.first == from && p.second == to) ||
                           (p.first == to && p.second == from);
                });
            if (from == to || !planned) {
                svg << fmt::format(
                    "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f4f4f4\" "
                    "stroke=\"white\"/>\n",
                    x, y, cell, cell);
                continue;
            }
            const bool failed = std::any_of(h.failed.begin(), h.failed.end(), [&](auto p) {
                return (p.first == from && p.second == to) || (p.first == to && p.second == from);
            });
            const auto& v =
                h.metric->values[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)];
            std::string fill =
                failed || !v ? "#777777" : colour(*v, h.typical, h.metric->higher_is_better);
            const bool flagged =
                v && (h.metric->higher_is_better ? *v < h.threshold : *v > h.threshold);
            svg << fmt::format(
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"{}\" "
                "stroke-width=\"{}\"/>\n",
                x, y, cell, cell, fill, flagged ? "black" : "white", flagged ? 3 : 1);
            if (text_in_cells)
                svg << fmt::format(
                    "<text x=\"{}\" y=\"{}\" font-size=\"13\" text-anchor=\"middle\" "
                    "dominant-baseline=\"middle\">{}</text>\n",
                    x + cell / 2, y + cell / 2, failed || !v ? "failed" : cell_text(*v));
        }
    int line = 0;
    std::istringstream caption(h.caption);
    for (std::string text; std::getline(caption, text) && line < 3; ++line)
        svg << fmt::format("<text x=\"12\" y=\"{}\" font-size=\"12\" fill=\"#444\">{}</text>\n",
                           top + grid + 62 + line * 16, xml_escape(text));
    svg << "</svg>\n";
    return svg.str();
}

}  // namespace rdmalab::mesh
