// Unit tests for rdma-bench's SVG figures: one line per configuration, every point drawn,
// repeated runs as a band, labels and the measurement caption present, escaped and apart.
#include "rdmalab/bench/plot.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/records/allreduce.hpp"
#include "rdmalab/records/transfer.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>

using namespace rdmalab::bench;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

}  // namespace

TEST(SeriesFromRecords, GroupsBySeriesKeysAndSortsByX) {
    std::vector<Record> records = {
        {{"op", "write"}, {"window", 64}, {"size", 128}, {"result", {{"gib_per_s", 2.0}}}},
        {{"op", "write"}, {"window", 64}, {"size", 64}, {"result", {{"gib_per_s", 1.0}}}},
        {{"op", "send"}, {"window", 64}, {"size", 64}, {"result", {{"gib_per_s", 0.5}}}},
        {{"op", "send"}, {"window", 64}, {"size", 64}},  // no result: skipped
    };
    auto series = series_from_records(records, "size", "result.gib_per_s", {"op", "window"});
    ASSERT_EQ(series.size(), 2u);
    EXPECT_EQ(series[0].label, "op=write window=64");
    ASSERT_EQ(series[0].points.size(), 2u);
    EXPECT_EQ(series[0].points[0].first, 64);
    EXPECT_EQ(series[1].label, "op=send window=64");
    EXPECT_EQ(series[1].points.size(), 1u);
}

TEST(SeriesFromRecords, RepeatedRunsBecomeTheirMedian) {
    std::vector<Record> records;
    for (double y : {3.0, 1.0, 2.0})
        records.push_back({{"op", "write"}, {"size", 64}, {"result", {{"mops", y}}}});
    for (double y : {4.0, 8.0})
        records.push_back({{"op", "write"}, {"size", 128}, {"result", {{"mops", y}}}});
    auto series = series_from_records(records, "size", "result.mops", {"op"});
    ASSERT_EQ(series.size(), 1u);
    ASSERT_EQ(series[0].points.size(), 2u);
    EXPECT_EQ(series[0].points[0], std::make_pair(64.0, 2.0));   // median of three
    EXPECT_EQ(series[0].points[1], std::make_pair(128.0, 6.0));  // mean of the middle two
    ASSERT_EQ(series[0].ranges.size(), 2u);                      // and each one's spread
    EXPECT_EQ(series[0].ranges[0], std::make_pair(1.0, 3.0));
    EXPECT_EQ(series[0].ranges[1], std::make_pair(4.0, 8.0));
}

TEST(SeriesFromRecords, ARecordsOwnSpreadWidensItsRange) {
    // Allreduce records: one per size, each with the busbw of its slowest and fastest allreduce.
    std::vector<Record> records = {
        {{"config", {{"bytes", 4096}, {"algorithm", "ring"}}},
         {"result", {{"busbw_mb_s", 10.0}, {"busbw_min_mb_s", 6.0}, {"busbw_max_mb_s", 11.0}}}},
        {{"config", {{"bytes", 8192}, {"algorithm", "ring"}}}, {"result", {{"busbw_mb_s", 20.0}}}},
    };
    auto series =
        series_from_records(records, "config.bytes", "result.busbw_mb_s", {"config.algorithm"},
                            "result.busbw_min_mb_s", "result.busbw_max_mb_s");
    ASSERT_EQ(series.size(), 1u);
    EXPECT_EQ(series[0].label, "algorithm=ring");
    ASSERT_EQ(series[0].ranges.size(), 2u);
    EXPECT_EQ(series[0].ranges[0], std::make_pair(6.0, 11.0));
    EXPECT_EQ(series[0].ranges[1], std::make_pair(20.0, 20.0));  // no spread stated: none drawn
}

TEST(PlotFiles, BusbwDrawsAllreduceRecordsAgainstTheirSize) {
    const std::string input = ::testing::TempDir() + "allreduce-records.json";
    const std::string output = ::testing::TempDir() + "allreduce-records.svg";
    // Records as the allreduce programs write them (records/allreduce.hpp), busbw set by hand.
    const auto allreduce = [](const char* algorithm, std::uint64_t bytes, double busbw, double low,
                              double high) {
        rdmalab::records::AllreduceRecord r;
        r.tool = "ring-allreduce 2";
        r.config.algorithm = algorithm;
        r.config.bytes = bytes;
        r.result.busbw_mb_s = busbw;
        r.result.busbw_min_mb_s = low;
        r.result.busbw_max_mb_s = high;
        r.environment = {.host = "h", .kernel = "k", .date = "d", .tool_version = r.tool};
        return rdmalab::records::to_json(r);
    };
    write_file(input,
               to_json({allreduce("ring", 4096, 5, 4, 6), allreduce("ring", 65536, 50, 50, 50),
                        allreduce("MPI_Allreduce", 4096, 7, 7, 7)}));
    PlotOptions p;
    p.inputs = {input};
    p.output = output;
    p.y = "busbw";
    plot_files(p, "test");
    std::ifstream file(output);
    const std::string svg{std::istreambuf_iterator<char>(file), {}};
    std::remove(input.c_str());
    std::remove(output.c_str());
    EXPECT_EQ(count(svg, "<polyline"), 2u) << svg;  // the algorithm varies: a line each
    EXPECT_EQ(count(svg, "class=\"spread\""), 1u);  // ring at 4 KiB has a spread
    EXPECT_NE(svg.find("vector size per rank (bytes)"), std::string::npos);
    EXPECT_NE(svg.find(">MPI_Allreduce<"), std::string::npos);  // the legend (factored)
    EXPECT_EQ(svg.find("path MTU"), std::string::npos);         // the records name no device
}

TEST(PlotFiles, GbitDrawsTransferRecordsAgainstTheBlockOrTheRails) {
    const std::string input = ::testing::TempDir() + "transfer-records.json";
    const std::string output = ::testing::TempDir() + "transfer-records.svg";
    // Records as transfer-bench writes them (records/transfer.hpp), throughput set by hand.
    const auto transfer = [](std::uint32_t rails, std::uint64_t block, double gbit) {
        rdmalab::records::TransferRecord r;
        r.config.op = "write";
        r.config.rails = rails;
        r.config.devices = rails == 1 ? std::vector<std::string>{"rxe0"}
                                      : std::vector<std::string>{"rxe0", "rxe1"};
        r.config.block = block;
        r.result.gbit_per_s = gbit;
        r.environment = {.host = "h", .kernel = "k", .date = "d", .tool_version = r.tool};
        r.environment.device = r.config.devices.front();
        return rdmalab::records::to_json(r);
    };
    // One rail and two, each at two block sizes; the 64 KiB runs twice.
    write_file(input,
               to_json({transfer(1, 4096, 0.02), transfer(1, 65536, 0.04), transfer(1, 65536, 0.03),
                        transfer(2, 4096, 0.03), transfer(2, 65536, 0.08)}));
    const auto draw = [&](const std::string& x) {
        PlotOptions p;
        p.inputs = {input};
        p.output = output;
        p.y = "gbit";
        p.x = x;
        plot_files(p, "test");
        std::ifstream file(output);
        return std::string{std::istreambuf_iterator<char>(file), {}};
    };
    // Against the block: a line per rail count (the devices follow the rails, in the label too).
    const std::string by_block = draw("");
    EXPECT_EQ(count(by_block, "<polyline"), 2u) << by_block;
    EXPECT_NE(by_block.find("block size (bytes)"), std::string::npos);
    EXPECT_NE(by_block.find("transfer throughput (Gbit/s"), std::string::npos);
    EXPECT_EQ(by_block.find("path MTU"), std::string::npos);  // transfer-bench states none
    // Against the rails: a line per block size; the devices, one list per rail count, name none.
    const std::string by_rails = draw("rails");
    EXPECT_EQ(count(by_rails, "<polyline"), 2u) << by_rails;
    EXPECT_NE(by_rails.find(">rails</text>"), std::string::npos);
    EXPECT_EQ(by_rails.find("devices="), std::string::npos);
    EXPECT_EQ(count(by_rails, "class=\"spread\""), 1u);  // 64 KiB on one rail ran twice
    // A key the records lack is refused by name.
    try {
        draw("rials");
        ADD_FAILURE() << "drew against config.rials";
    } catch (const rdmalab::Error& e) {
        EXPECT_NE(std::string(e.what()).find("--x 'config.rials'"), std::string::npos);
    }
    std::remove(input.c_str());
    std::remove(output.c_str());
}

TEST(RenderSvg, RepeatedRunsDrawABandAndSingleRunsNone) {
    Chart chart{.title = "t",
                .x_label = "message size (bytes)",
                .y_label = "Mops/s",
                .caption = "c",
                .series = {Series{"repeated", {{64, 2.0}, {128, 6.0}}, {{1.0, 3.0}, {4.0, 8.0}}},
                           Series{"once", {{64, 1.0}, {128, 1.0}}, {{1.0, 1.0}, {1.0, 1.0}}}},
                .legend_title = ""};
    const std::string svg = render_svg(chart);
    EXPECT_EQ(count(svg, "<polygon class=\"spread\""), 1u);
    EXPECT_NE(svg.find("shaded: min–max of runs"), std::string::npos);
    // The band reaches the highest run: the y axis goes up to 8 at least.
    EXPECT_NE(svg.find(">8<"), std::string::npos);
    chart.series.erase(chart.series.begin());
    EXPECT_EQ(render_svg(chart).find("<polygon"), std::string::npos);
}

namespace {

// The y coordinate of the <text> whose content is `content`.
double text_y(const std::string& svg, const std::string& content) {
    const std::size_t at = svg.find(">" + content + "<");
    if (at == std::string::npos) return -1;
    const std::size_t open = svg.rfind("<text", at);
    const std::size_t y = svg.find(" y=\"", open) + 4;
    return std::stod(svg.substr(y, svg.find('"', y) - y));
}

}  // namespace

TEST(RenderSvg, AxisLabelAndCaptionHaveRowsOfTheirOwn) {
    const std::string caption =
        "rxe0 (Soft-RoCE) in the lab · path MTU 1024 · kernel 6.1.0-28-amd64 · host labhost · "
        "2026-11-22T10:00:00Z · rdma-bench 1.0";
    Chart chart{.title = "t",
                .x_label = "message size (bytes)",
                .y_label = "GiB/s",
                .caption = caption,
                .series = {Series{"a", {{32, 0.1}, {1024, 0.3}}}},
                .legend_title = ""};
    const std::string svg = render_svg(chart);
    const double axis = text_y(svg, "message size (bytes)");
    const double tick = text_y(svg, "32");
    const double first_caption_line = text_y(svg, caption.substr(0, caption.rfind(" · ", 105)));
    ASSERT_GT(axis, 0);
    ASSERT_GT(first_caption_line, 0);               // split into two lines
    EXPECT_GE(axis - tick, 14);                     // 12 px text: a line apart at least
    EXPECT_GE(first_caption_line - 11 - axis, 12);  // the caption's top well below the label
}

TEST(RenderSvg, OneLinePerSeriesWithEveryPointAndTheCaption) {
    Chart chart{
        .title = "RC write <Soft-RoCE>",
        .x_label = "message size (bytes)",
        .y_label = "GiB/s",
        .caption = "rxe0 (Soft-RoCE), kernel 6.1, 2026-11-22",
        .series = {{"a", {{32, 0.1}, {64, 0.2}, {128, 0.4}}}, {"b", {{32, 0.05}, {1024, 0.3}}}},
        .legend_title = ""};
    std::string svg = render_svg(chart);
    EXPECT_EQ(svg.rfind("<svg", 0), 0u);
    EXPECT_NE(svg.find("</svg>"), std::string::npos);
    EXPECT_EQ(count(svg, "<polyline"), 2u);
    EXPECT_NE(svg.find("RC write &lt;Soft-RoCE&gt;"), std::string::npos);
    EXPECT_NE(svg.find("rxe0 (Soft-RoCE), kernel 6.1, 2026-11-22"), std::string::npos);
    EXPECT_NE(svg.find(">1K<"), std::string::npos);  // a log2 tick label
    // Three points in the first line: three coordinate pairs.
    auto first = svg.find("points=\"") + 8;
    auto end = svg.find('"', first);
    EXPECT_EQ(count(svg.substr(first, end - first), ","), 3u);
}

TEST(RenderSvg, EmptyChartStillRenders) {
    std::string svg = render_svg(Chart{.title = "nothing",
                                       .x_label = "",
                                       .y_label = "",
                                       .caption = "",
                                       .series = {},
                                       .legend_title = ""});
    EXPECT_NE(svg.find("</svg>"), std::string::npos);
    EXPECT_EQ(svg.find("nan"), std::string::npos);
    EXPECT_EQ(svg.find("inf"), std::string::npos);
}

TEST(RenderSvg, LeavesOutPointsTheAxesCannotHold) {
    // Found by tests/fuzz: a record of size 1e308 (or a rate of 1.7e308) made an axis infinite,
    // and its tick loop never ended.
    for (auto point : {std::pair{1e308, 1.0}, std::pair{64.0, 1.7e308}}) {
        Chart chart{.title = "t",
                    .x_label = "",
                    .y_label = "",
                    .caption = "",
                    .series = {Series{"a", {point, {128.0, 2.0}}}},
                    .legend_title = ""};
        const std::string svg = render_svg(chart);
        EXPECT_NE(svg.find("</svg>"), std::string::npos);
        EXPECT_EQ(svg.find("nan"), std::string::npos);
        EXPECT_EQ(svg.find("inf"), std::string::npos);
    }
}

TEST(PlotFiles, RecordsOfAnyShapeAreDrawnOrRefusedWithAnError) {
    // Found by tests/fuzz: a record or config that is not an object, or a provider that is not a
    // string, threw nlohmann's type_error; a path_mtu of 1e300 was undefined behaviour.
    const std::string input = ::testing::TempDir() + "odd-records.json";
    const std::string output = ::testing::TempDir() + "odd-records.svg";
    for (const char* text : {
             R"({"records": [1]})",
             R"({"records": [{"config": {"size": 64}, "result": {"gib_per_s": 1},
                              "environment": {"provider": 5, "path_mtu": 1e300}}]})",
             R"({"records": [{"config": {"size": 64, "op": "write"}, "result": {"gib_per_s": 1}},
                             {"config": 3, "result": {"gib_per_s": 1}}]})",
         }) {
        write_file(input, text);
        PlotOptions p;
        p.inputs = {input};
        p.output = output;
        try {
            plot_files(p, "test");
        } catch (const rdmalab::Error&) {
            // refused with a reason: fine (any other exception fails the test)
        }
    }
    std::remove(input.c_str());
    std::remove(output.c_str());  // drawn by the records that could be: nothing left behind
}

TEST(DefaultTitle, NamesEveryOperationOnce) {
    std::vector<Record> records = {
        {{"config", {{"op", "write"}, {"size", 64}}}},
        {{"config", {{"op", "send"}, {"size", 64}}}},
        {{"config", {{"op", "write"}, {"size", 128}}}},
    };
    EXPECT_EQ(default_title(records, "throughput"), "write, send — throughput");
    EXPECT_EQ(default_title({records.front()}, "throughput"), "write — throughput");
    EXPECT_EQ(default_title({Record{{"config", {{"size", 1}}}}}, "throughput"), "throughput");
}

TEST(FactorLegend, MovesTheSharedBeginningIntoATitle) {
    Chart chart;
    chart.series = {Series{"lab_faults=host 2 egress loss 0%", {}},
                    Series{"lab_faults=host 2 egress loss 10%", {}}};
    factor_legend(chart);
    EXPECT_EQ(chart.legend_title, "lab_faults=host 2 egress loss");
    EXPECT_EQ(chart.series[0].label, "0%");
    EXPECT_EQ(chart.series[1].label, "10%");
    EXPECT_NE(render_svg(chart).find(">lab_faults=host 2 egress loss<"), std::string::npos);
}

TEST(FactorLegend, LeavesShortOrSingleLabelsAlone) {
    Chart one;
    one.series = {Series{"op=write window=64", {}}};
    factor_legend(one);
    EXPECT_EQ(one.series[0].label, "op=write window=64");
    Chart short_prefix;
    short_prefix.series = {Series{"op=write", {}}, Series{"op=send", {}}};
    factor_legend(short_prefix);
    EXPECT_TRUE(short_prefix.legend_title.empty());
    EXPECT_EQ(short_prefix.series[1].label, "op=send");
}
