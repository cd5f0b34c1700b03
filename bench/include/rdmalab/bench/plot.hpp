// The standard figures as plain SVG (no plotting library, no fonts fetched): a value against
// message size on a log2 axis, one line per configuration, with where it was measured.
#pragma once

#include "rdmalab/bench/records.hpp"

#include <string>
#include <utility>
#include <vector>

namespace rdmalab::bench {

struct Series {
    std::string label;
    std::vector<std::pair<double, double>> points;  // (x, y), drawn in x order
    // (lowest, highest) y of the runs behind each point, parallel to points; empty, or equal
    // pairs, where a point was measured once. Drawn as a shaded band around the line.
    std::vector<std::pair<double, double>> ranges = {};
};

struct Chart {
    std::string title;
    std::string x_label;
    std::string y_label;
    std::string caption;  // where and when: device, provider, kernel, date
    std::vector<Series> series;
    std::string legend_title;  // above the legend entries, when they share a long beginning
};

// Groups records into series by the values of series_keys, taking x and y from dotted keys
// ("size", "result.gib_per_s"). Records missing x or y are skipped; several records of one
// series at the same x (repeated runs) become one point at their median, and their lowest and
// highest values become that point's range. Where low_key and high_key are given, a record that
// holds them (the spread of the runs it summarises: an allreduce record's slowest and fastest)
// widens its point's range to them.
std::vector<Series> series_from_records(const std::vector<Record>& records,
                                        const std::string& x_key, const std::string& y_key,
                                        const std::vector<std::string>& series_keys,
                                        const std::string& low_key = {},
                                        const std::string& high_key = {});

// The default title: every operation the records hold, in first-seen order, then the measure
// ("write, send — throughput (GiB/s)").
std::string default_title(const std::vector<Record>& records, const std::string& y_label);

// Where every series label begins with the same words ("lab_faults=host 2 egress loss 0%",
// "… 5%"), moves them into chart.legend_title and leaves the rest ("0%", "5%"): the legend has
// room for short names only. Cuts after a space or '='; does nothing for fewer than two series
// or a shared beginning shorter than 8 characters.
void factor_legend(Chart& chart);

// An SVG document, 760×470, log2 x axis (sizes), linear y axis from 0; where a series has
// ranges (repeated runs), a shaded min–max band around its line and a legend note. The x-axis
// label and the caption (two lines at most) have rows of their own. Points with x outside
// 2^-64..2^64 or |y| above 10^300 are left out (the axes cannot hold them).
std::string render_svg(const Chart& chart);

// Text safe inside SVG/XML.
std::string xml_escape(const std::string& text);

// What `rdma-bench plot` draws: records from --json files, one measure against message size.
struct PlotOptions {
    // inputs: JSON files; y: gib, gbps, mops, recv-mops, recv-gib, lat or lat-p99 (rdma-bench's
    // records, against config.size), busbw (allreduce records, against config.bytes, with
    // each record's spread), or gbit (transfer-bench's, against config.block); x: another key
    // for the x axis (a bare name is a config key: "rails"); series: config keys naming a line
    // (default: every knob that varies, but one with a single value at each x); title: default
    // from the data.
    std::vector<std::string> inputs;
    std::string output;
    std::string y = "gib";
    std::string x = {};
    std::string series;
    std::string title;
};

// Reads the files, draws the figure (caption: the environment the records state) and writes it
// to p.output; prints one line. Throws Error for an unknown measure or files with no records.
void plot_files(const PlotOptions& p, const std::string& tool_version);

}  // namespace rdmalab::bench
