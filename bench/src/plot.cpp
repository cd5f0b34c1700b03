// SVG figures: see plot.hpp.
#include "rdmalab/bench/plot.hpp"

#include "rdmalab/bench/knobs.hpp"
#include "rdmalab/bench/records.hpp"
#include "rdmalab/error.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace rdmalab::bench {

namespace {

constexpr double kWidth = 760, kHeight = 470;
// Margins; legend on the right. Below the plot: tick labels, the x-axis label, then the caption's
// two lines, each on a row of its own.
constexpr double kLeft = 70, kRight = 200, kTop = 40, kBottom = 100;
constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                   "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

const Record* find_dotted(const Record& record, const std::string& dotted) {
    const Record* node = &record;
    std::size_t start = 0;
    while (true) {
        std::size_t dot = dotted.find('.', start);
        std::string key =
            dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (!node->is_object() || !node->contains(key)) return nullptr;
        node = &(*node)[key];
        if (dot == std::string::npos) return node;
        start = dot + 1;
    }
}

std::string size_label(double bytes) {
    if (bytes >= 1 << 30) return fmt::format("{:g}G", bytes / (1 << 30));
    if (bytes >= 1 << 20) return fmt::format("{:g}M", bytes / (1 << 20));
    if (bytes >= 1 << 10) return fmt::format("{:g}K", bytes / (1 << 10));
    return fmt::format("{:g}", bytes);
}

// A round step giving about five intervals from 0 to top.
double nice_step(double top) {
    const double rough = top / 5;
    const double magnitude = std::pow(10, std::floor(std::log10(rough)));
    for (double factor : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (factor * magnitude >= rough) return factor * magnitude;
    return 10 * magnitude;
}

// A record's member, where the record may be anything a file holds: null unless record is an
// object with that key. (nlohmann's value() and operator[] throw on other types.)
const Record& member(const Record& record, const std::string& key) {
    static const Record kNull;
    if (!record.is_object()) return kNull;
    auto found = record.find(key);
    return found == record.end() ? kNull : *found;
}

// A point the axes can hold: x within 2^-64..2^64 on the log2 axis (message sizes are 1..2^30)
// and y below 10^300. Records read from a file may say anything; beyond these bounds the axis
// arithmetic reaches infinity, and the tick loops would never end (found by fuzzing).
bool drawable(double x, double y) {
    return x >= 0x1p-64 && x <= 0x1p64 && std::abs(y) <= 1e300;
}

// The configuration knobs that vary across the records, for the default series: not the x axis,
// and not a knob with one value at each x (the rails' devices against their count), which says
// nothing the axis does not.
std::vector<std::string> varying_knobs(const std::vector<Record>& records,
                                       const std::string& x_key) {
    std::vector<std::string> keys;
    const Record& first = member(records.front(), "config");
    if (!first.is_object()) return keys;
    const auto follows_x = [&](const std::string& key) {
        std::map<std::string, Record> at_x;  // x, as JSON text → the knob's value there
        for (const Record& r : records) {
            const Record* x = find_dotted(r, x_key);
            if (!x) continue;
            const Record& value = member(member(r, "config"), key);
            const auto [it, added] = at_x.emplace(x->dump(), value);
            if (!added && it->second != value) return false;
        }
        return true;
    };
    for (const auto& item : first.items()) {
        const std::string& key = item.key();  // not a structured binding: lambdas capture these
        const Record& value = item.value();
        if ("config." + key == x_key) continue;
        const bool varies = std::any_of(records.begin(), records.end(), [&](const Record& r) {
            return member(member(r, "config"), key) != value;
        });
        if (varies && !follows_x(key)) keys.push_back("config." + key);
    }
    return keys;
}

}  // namespace

std::string default_title(const std::vector<Record>& records, const std::string& y_label) {
    std::vector<std::string> ops;
    for (const Record& r : records) {
        if (!r.contains("config") || !r["config"].is_object()) continue;
        const Record& op = r["config"].value("op", Record());
        if (!op.is_string()) continue;
        if (std::find(ops.begin(), ops.end(), op.get<std::string>()) == ops.end())
            ops.push_back(op.get<std::string>());
    }
    if (ops.empty()) return y_label;
    return fmt::format("{} — {}", fmt::join(ops, ", "), y_label);
}

void factor_legend(Chart& chart) {
    if (chart.series.size() < 2) return;
    std::string prefix = chart.series.front().label;
    for (const Series& s : chart.series) {
        std::size_t n = 0;
        while (n < prefix.size() && n < s.label.size() && prefix[n] == s.label[n]) ++n;
        prefix.resize(n);
    }
    std::size_t cut = prefix.find_last_of(" =");
    if (cut == std::string::npos || cut + 1 < 8) return;
    prefix.resize(cut + 1);
    for (Series& s : chart.series) s.label = s.label.substr(prefix.size());
    while (!prefix.empty() && (prefix.back() == ' ' || prefix.back() == '=')) prefix.pop_back();
    chart.legend_title = prefix;
}

std::string xml_escape(const std::string& text) {
    std::string out;
    for (char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::vector<Series> series_from_records(const std::vector<Record>& records,
                                        const std::string& x_key, const std::string& y_key,
                                        const std::vector<std::string>& series_keys,
                                        const std::string& low_key, const std::string& high_key) {
    std::vector<Series> series;
    std::map<std::string, std::size_t> index;
    for (const Record& record : records) {
        const Record* x = find_dotted(record, x_key);
        const Record* y = find_dotted(record, y_key);
        if (!x || !y || !x->is_number() || !y->is_number()) continue;
        std::string label;
        for (const std::string& key : series_keys) {
            const Record* value = find_dotted(record, key);
            if (!value) continue;
            // "config.window" is shown as "window": the legend has room for short names only.
            std::string name =
                key.substr(key.rfind('.') == std::string::npos ? 0 : key.rfind('.') + 1);
            label += (label.empty() ? "" : " ") + name + "=" +
                     (value->is_string() ? value->get<std::string>() : value->dump());
        }
        auto [it, added] = index.emplace(label, series.size());
        if (added) series.push_back(Series{label, {}});
        // The record's own spread, where it states one; else its value alone.
        auto bound = [&](const std::string& key) {
            const Record* value = key.empty() ? nullptr : find_dotted(record, key);
            return value && value->is_number() ? value->get<double>() : y->get<double>();
        };
        series[it->second].points.emplace_back(x->get<double>(), y->get<double>());
        series[it->second].ranges.emplace_back(bound(low_key), bound(high_key));
    }
    // A configuration measured several times (repeated runs) is drawn at the median of its values,
    // with its lowest and highest (or the records' own spread, where wider) as the point's range.
    for (Series& s : series) {
        std::vector<std::size_t> order(s.points.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::sort(order.begin(), order.end(),
                  [&](std::size_t a, std::size_t b) { return s.points[a] < s.points[b]; });
        std::vector<std::pair<double, double>> merged;
        std::vector<std::pair<double, double>> ranges;
        for (std::size_t i = 0; i < order.size();) {
            std::size_t j = i;
            std::vector<double> ys;
            double low = INFINITY, high = -INFINITY;
            while (j < order.size() && s.points[order[j]].first == s.points[order[i]].first) {
                ys.push_back(s.points[order[j]].second);
                low = std::min(low, s.ranges[order[j]].first);
                high = std::max(high, s.ranges[order[j]].second);
                ++j;
            }
            std::sort(ys.begin(), ys.end());
            const std::size_t n = ys.size();
            merged.emplace_back(s.points[order[i]].first,
                                n % 2 ? ys[n / 2] : (ys[n / 2 - 1] + ys[n / 2]) / 2);
            ranges.emplace_back(std::min(low, ys.front()), std::max(high, ys.back()));
            i = j;
        }
        s.points = std::move(merged);
        s.ranges = std::move(ranges);
    }
    return series;
}

std::string render_svg(const Chart& chart) {
    double x_min = INFINITY, x_max = -INFINITY, y_max = 0;
    for (const Series& s : chart.series)
        for (std::size_t i = 0; i < s.points.size(); ++i) {
            auto [x, y] = s.points[i];
            if (!drawable(x, y)) continue;
            x_min = std::min(x_min, x);
            x_max = std::max(x_max, x);
            y_max = std::max(y_max, y);
            if (i < s.ranges.size() && drawable(x, s.ranges[i].second))
                y_max = std::max(y_max, s.ranges[i].second);
        }
    if (!(x_min <= x_max)) x_min = 1, x_max = 2;
    if (x_min == x_max) x_max = x_min * 2;
    const double step = nice_step(y_max > 0 ? y_max : 1);
    const double y_top = std::ceil((y_max > 0 ? y_max : 1) / step) * step;
    const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
    auto px = [&](double x) {
        return kLeft +
               (std::log2(x) - std::log2(x_min)) / (std::log2(x_max) - std::log2(x_min)) * plot_w;
    };
    auto py = [&](double y) { return kTop + plot_h - y / y_top * plot_h; };

    std::string svg = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} "
        "{}\" "
        "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
        "fill=\"white\"/>\n",
        kWidth, kHeight, kWidth, kHeight);
    svg += fmt::format("<text x=\"{}\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
                       kLeft, xml_escape(chart.title));
    // Axes, grid and ticks.
    for (double y = 0; y <= y_top + step / 2; y += step) {
        svg += fmt::format(
            "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n",
            kLeft, py(y), kLeft + plot_w, py(y));
        svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}</text>\n",
                           kLeft - 6, py(y) + 4, y);
    }
    // A label on every power of two, or every other one when they would crowd each other.
    const double first_tick = std::exp2(std::ceil(std::log2(x_min)));
    const int ticks =
        static_cast<int>(std::floor(std::log2(x_max * 1.0001) - std::log2(first_tick))) + 1;
    const int label_every = ticks > 12 ? 2 : 1;
    int tick = 0;
    for (double x = first_tick; x <= x_max * 1.0001; x *= 2, ++tick) {
        svg += fmt::format(
            "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#333\"/>\n",
            px(x), kTop + plot_h, px(x), kTop + plot_h + 4);
        if (tick % label_every == 0)
            svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
                               px(x), kTop + plot_h + 16, size_label(x));
    }
    svg += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n",
        kLeft, kTop, plot_w, plot_h);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
                       kLeft + plot_w / 2, kTop + plot_h + 36, xml_escape(chart.x_label));
    svg += fmt::format(
        "<text transform=\"translate(18 {:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
        kTop + plot_h / 2, xml_escape(chart.y_label));
    if (!chart.legend_title.empty())
        svg += fmt::format(
            "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#555\">{}</text>\n",
            kWidth - kRight + 12, kTop + 14, xml_escape(chart.legend_title));
    // Where runs were repeated, a band from each point's lowest to its highest value, under the
    // lines: along the highs left to right, back along the lows.
    bool any_band = false;
    for (std::size_t i = 0; i < chart.series.size(); ++i) {
        const Series& s = chart.series[i];
        if (s.ranges.size() != s.points.size()) continue;
        bool spread = false;
        std::string upper, lower;
        for (std::size_t k = 0; k < s.points.size(); ++k) {
            const double x = s.points[k].first;
            const auto [low, high] = s.ranges[k];
            if (!drawable(x, low) || !drawable(x, high)) continue;
            spread = spread || high > low;
            upper += fmt::format("{:.1f},{:.1f} ", px(x), py(high));
            lower = fmt::format("{:.1f},{:.1f} ", px(x), py(low)) + lower;
        }
        if (!spread) continue;
        any_band = true;
        svg += fmt::format(
            "<polygon class=\"spread\" fill=\"{}\" fill-opacity=\"0.18\" stroke=\"none\" "
            "points=\"{}{}\"><title>{}: lowest to highest of the repeated runs</title></polygon>\n",
            kColors[i % std::size(kColors)], upper, lower, xml_escape(s.label));
    }
    // One polyline per series, with its legend entry.
    for (std::size_t i = 0; i < chart.series.size(); ++i) {
        const Series& s = chart.series[i];
        const char* color = kColors[i % std::size(kColors)];
        std::string points;
        for (auto [x, y] : s.points)
            if (drawable(x, y)) points += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
        svg += fmt::format(
            "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
            "points=\"{}\"><title>{}</title></polyline>\n",
            color, points, xml_escape(s.label));
        const double ly =
            kTop + 10 + 18 * static_cast<double>(i + (chart.legend_title.empty() ? 0 : 1));
        svg += fmt::format(
            "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
            "stroke-width=\"2\"/>\n",
            kWidth - kRight + 12, ly, kWidth - kRight + 32, ly, color);
        svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", kWidth - kRight + 38,
                           ly + 4, xml_escape(s.label));
    }
    if (any_band) {
        const double ly =
            kTop + 10 +
            18 * static_cast<double>(chart.series.size() + (chart.legend_title.empty() ? 0 : 1));
        svg += fmt::format(
            "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"20\" height=\"10\" fill=\"#555\" "
            "fill-opacity=\"0.18\"/>\n",
            kWidth - kRight + 12, ly - 5);
        svg += fmt::format(
            "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#555\">shaded: min–max of "
            "runs</text>\n",
            kWidth - kRight + 38, ly + 4);
    }
    // The caption (where and when) on one line, or two split at a " · " when it is long.
    std::string first_line = chart.caption, second_line;
    if (chart.caption.size() > 105) {
        std::size_t split = chart.caption.rfind(" · ", 105);
        if (split != std::string::npos) {
            first_line = chart.caption.substr(0, split);
            second_line = chart.caption.substr(split + std::string(" · ").size());
        }
    }
    svg += fmt::format("<text x=\"10\" y=\"{:.1f}\" font-size=\"11\" fill=\"#555\">{}</text>\n",
                       kHeight - (second_line.empty() ? 12 : 24), xml_escape(first_line));
    if (!second_line.empty())
        svg += fmt::format("<text x=\"10\" y=\"{:.1f}\" font-size=\"11\" fill=\"#555\">{}</text>\n",
                           kHeight - 10, xml_escape(second_line));
    svg += "</svg>\n";
    return svg;
}

void plot_files(const PlotOptions& p, const std::string& tool_version) {
    // What each --y draws: the y key and its label; against message size, or for allreduce
    // records against the vector's size, with each record's own spread.
    struct Measure {
        std::string y_key, y_label;
        std::string x_key = "config.size", x_label = "message size (bytes)";
        std::string low_key = {}, high_key = {};
    };
    static const std::map<std::string, Measure> kMeasures = {
        {"gib", {"result.gib_per_s", "throughput (GiB/s, 2^30 B/s)"}},
        {"gbps", {"result.gb_per_s", "throughput (Gb/s, 10^9 bit/s)"}},
        {"mops", {"result.mops", "message rate (millions of operations/s)"}},
        {"recv-mops", {"result.receiver.mops", "receiver-side message rate (Mops/s)"}},
        {"recv-gib", {"result.receiver.gib_per_s", "receiver-side throughput (GiB/s)"}},
        {"lat", {"result.latency.median_us", "median latency (µs)"}},
        {"lat-p99", {"result.latency.p99_us", "p99 latency (µs)"}},
        {"busbw",
         {"result.busbw_mb_s", "allreduce busbw (MB/s, 10^6 B/s; nccl-tests' measure)",
          "config.bytes", "vector size per rank (bytes)", "result.busbw_min_mb_s",
          "result.busbw_max_mb_s"}},
        {"gbit",
         {"result.gbit_per_s", "transfer throughput (Gbit/s, 10^9 bit/s)", "config.block",
          "block size (bytes)"}},
    };
    auto found = kMeasures.find(p.y);
    if (found == kMeasures.end())
        fail(fmt::format(
            "--y '{}' is not one of gib, gbps, mops, recv-mops, recv-gib, lat, lat-p99, busbw, "
            "gbit",
            p.y));
    const Measure& measure = found->second;
    std::vector<Record> records;
    for (const std::string& input : p.inputs)
        for (Record& r : records::read_record_file(input)) records.push_back(std::move(r));
    if (records.empty()) fail("no records in " + p.inputs.front());
    // Every key names a field of the records' schema (each record was read through its type).
    const auto check_key = [&records](const std::string& key, const char* option) {
        for (const Record& r : records)
            if (records::names_field(records::schema_of(r, "a record"), key)) return;
        fail(fmt::format("{} '{}': the records have no such field (records/schema/)", option, key));
    };

    // The x axis: the measure's, or the key --x names (a bare name is a config key).
    std::string x_key = measure.x_key, x_label = measure.x_label;
    if (!p.x.empty()) {
        x_key = p.x.find('.') == std::string::npos ? "config." + p.x : p.x;
        check_key(x_key, "--x");
        x_label = x_key.substr(x_key.rfind('.') + 1);
    }
    // Series: the given keys, or every configuration knob that varies (but the x axis).
    std::vector<std::string> keys;
    if (!p.series.empty()) {
        for (const std::string& key : split_list(p.series)) {
            keys.push_back(key.find('.') == std::string::npos ? "config." + key : key);
            check_key(keys.back(), "--series");
        }
    } else {
        keys = varying_knobs(records, x_key);
    }
    Chart chart;
    chart.series =
        series_from_records(records, x_key, measure.y_key, keys, measure.low_key, measure.high_key);
    if (chart.series.empty())
        fail(fmt::format("no record has both {} and {}", x_key, measure.y_key));
    chart.x_label = x_label;
    chart.y_label = measure.y_label;
    // The environment as the first record states it, through its type (each record was read
    // through its own, so its environment keeps environment_fields()).
    const records::Environment env = records::environment_from_json(records.front()["environment"]);
    const std::string provider = env.provider.value_or("?");
    chart.title = p.title.empty() ? default_title(records, chart.y_label) : p.title;
    const std::string device =
        provider.starts_with("rxe")
            ? fmt::format("Soft-RoCE ({}, software, not a NIC)", env.device.value_or("?"))
            : fmt::format("{} ({})", env.device.value_or("?"), provider);
    const std::string lab = env.lab.value_or("no");
    // Records that name no device (an allreduce's, MPI's) leave the device and MTU out.
    const bool names_device = env.provider.has_value() || env.device.has_value();
    chart.caption = fmt::format(
        "{}{}kernel {} · host {} · {} · {}",
        names_device ? device + (lab == "no" ? "" : " in the " + lab) + " · " : std::string(),
        names_device && env.path_mtu ? fmt::format("path MTU {} · ", *env.path_mtu) : std::string(),
        env.kernel, env.host, env.date, tool_version);
    if (env.lab_faults) {
        const std::string& faults = *env.lab_faults;
        bool same = true;
        for (const Record& r : records)
            same = same && records::environment_from_json(r["environment"]).lab_faults == faults;
        chart.caption += " · faults: " + (same ? faults : std::string("each line's own (legend)"));
    }
    factor_legend(chart);
    write_file(p.output, render_svg(chart));
    fmt::print("wrote {} ({} series, {} records)\n", p.output, chart.series.size(), records.size());
}

}  // namespace rdmalab::bench
