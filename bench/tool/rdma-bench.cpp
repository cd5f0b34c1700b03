// rdma-bench: measures RDMA operations the way perftest does (server + client), with sweeps of
// every knob in one run, receiver-side counts, latency percentiles, CPU cost, JSON/CSV records
// and SVG figures (`rdma-bench plot`). Run `rdma-bench --help`.
#include "rdmalab/bench/config.hpp"
#include "rdmalab/bench/plot.hpp"
#include "rdmalab/bench/records.hpp"
#include "rdmalab/bench/session.hpp"
#include "rdmalab/bench/sweep.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/gpu/options.hpp"
#include "rdmalab/options.hpp"

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <set>

namespace {

using namespace rdmalab;
using namespace rdmalab::bench;

// Every knob as the text the user gave (a value, a list, or a power-of-two range).
struct KnobTexts {
    std::string op = "write", transport = "RC", mode = "bw";
    std::string size, window = "128", qps = "1", post_list = "1", signal_every, inline_size = "0",
                      sge = "1";
    std::string srq = "off", shared_cq = "off", events = "off";
    bool all_sizes = false, use_srq = false, events_flag = false;
    std::uint64_t iters = 0, warmup = 100;
    double duration_s = 0;
};

struct Knob {
    const char* name;     // as in records and PinnedKnobs
    CLI::Option* option;  // the option that sets it (to know whether it was given)
};

std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> items;
    std::size_t start = 0;
    for (;;) {
        std::size_t comma = text.find(',', start);
        items.push_back(
            text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) return items;
        start = comma + 1;
    }
}

std::vector<std::uint64_t> numbers(const std::string& text, const char* knob, std::uint64_t min,
                                   std::uint64_t max) {
    auto parsed = parse_values(text, min, max);
    if (auto* why = std::get_if<std::string>(&parsed)) fail(fmt::format("{}: {}", knob, *why));
    return std::get<std::vector<std::uint64_t>>(parsed);
}

std::vector<bool> switches(const std::string& text, const char* knob) {
    std::vector<bool> values;
    for (const std::string& item : split(text)) {
        if (item == "on" || item == "1")
            values.push_back(true);
        else if (item == "off" || item == "0")
            values.push_back(false);
        else
            fail(fmt::format("{}: '{}' is not on or off", knob, item));
    }
    return values;
}

template <typename T, typename Parse>
std::vector<T> names(const std::string& text, const char* knob, Parse parse, const char* choices) {
    std::vector<T> values;
    for (const std::string& item : split(text)) {
        auto value = parse(item);
        if (!value) fail(fmt::format("{}: unknown '{}' (choose from {})", knob, item, choices));
        values.push_back(*value);
    }
    return values;
}

std::uint32_t u32(std::uint64_t v) {
    return static_cast<std::uint32_t>(v);
}

// The cross product of every knob's values, first knob slowest, sizes fastest (a table reads
// like a sweep over size for each setting).
std::vector<BenchConfig> expand(const KnobTexts& k, bool size_given) {
    auto ops =
        names<Op>(k.op, "--op", parse_op, "write, read, send, write-imm, fetch-add, cmp-swap");
    auto transports = names<Transport>(k.transport, "-c", parse_transport, "RC, UC, UD");
    auto modes = names<Mode>(k.mode, "--mode", parse_mode, "bw, lat");
    std::vector<std::uint64_t> sizes;
    if (k.all_sizes)
        sizes = numbers("2..8M", "-a", 1, 1ull << 30);
    else if (!k.size.empty())
        sizes = numbers(k.size, "-s", 1, 1ull << 30);
    auto windows = numbers(k.window, "-t", 1, 1 << 16);
    auto qps = numbers(k.qps, "-q", 1, 1024);
    auto lists = numbers(k.post_list, "-l", 1, 1 << 16);
    auto inlines = numbers(k.inline_size, "-I", 0, 1 << 16);
    auto sges = numbers(k.sge, "--sge", 1, 32);
    auto srqs = k.use_srq ? std::vector<bool>{true} : switches(k.srq, "--srq");
    auto shared = switches(k.shared_cq, "--shared-cq");
    auto events = k.events_flag ? std::vector<bool>{true} : switches(k.events, "--events");
    std::optional<std::vector<std::uint64_t>> signals;
    if (!k.signal_every.empty()) signals = numbers(k.signal_every, "-Q", 1, 1 << 16);

    // The cross product of the independent knobs (names, switches and enums by their index in
    // their list), first knob slowest; the signal interval and the sizes depend on the point.
    auto indices = [](std::size_t count) {
        std::vector<std::uint64_t> all(count);
        for (std::size_t i = 0; i < count; ++i) all[i] = i;
        return all;
    };
    auto as_numbers = [](const std::vector<bool>& values) {
        return std::vector<std::uint64_t>(values.begin(), values.end());
    };
    const std::vector<Point> points = cross_product({{"mode", indices(modes.size())},
                                                     {"op", indices(ops.size())},
                                                     {"transport", indices(transports.size())},
                                                     {"window", windows},
                                                     {"qps", qps},
                                                     {"post_list", lists},
                                                     {"inline", inlines},
                                                     {"sge", sges},
                                                     {"srq", as_numbers(srqs)},
                                                     {"shared_cq", as_numbers(shared)},
                                                     {"events", as_numbers(events)}});

    const bool only_atomics = std::all_of(ops.begin(), ops.end(), is_atomic);
    std::vector<BenchConfig> configs;
    for (const Point& point : points) {
        const Mode mode = modes[point.at("mode")];
        const Op op = ops[point.at("op")];
        const std::uint64_t window = point.at("window");
        // Defaults as perftest's: 64 KiB for bandwidth, 2 B for latency, 8 for atomics; one
        // signaled WR in min(100, window). Atomics move 8 bytes whatever -s says when other ops
        // share the run; asked for alone with another size, they are refused.
        std::vector<std::uint64_t> mode_sizes = sizes;
        if (!size_given)
            mode_sizes = {is_atomic(op) ? kAtomicBytes : mode == Mode::kLatency ? 2u : 65536u};
        else if (is_atomic(op) && !only_atomics)
            mode_sizes = {kAtomicBytes};
        const std::vector<std::uint64_t> signal_values =
            signals ? *signals : std::vector<std::uint64_t>{std::min<std::uint64_t>(100, window)};
        for (auto every : signal_values)
            for (auto size : mode_sizes) {
                BenchConfig c;
                c.mode = mode;
                c.op = op;
                c.transport = transports[point.at("transport")];
                c.size = size;
                // A ping-pong has one WR in flight.
                c.window = mode == Mode::kLatency ? 1 : u32(window);
                c.signal_every = mode == Mode::kLatency ? 1 : u32(every);
                c.qps = u32(point.at("qps"));
                c.post_list = u32(point.at("post_list"));
                c.inline_size = u32(point.at("inline"));
                c.sge = u32(point.at("sge"));
                c.srq = point.at("srq") != 0;
                c.shared_cq = point.at("shared_cq") != 0;
                c.events = point.at("events") != 0;
                c.duration_s = k.duration_s;
                c.iters = k.iters > 0 ? k.iters : mode == Mode::kLatency ? 1000 : 5000;
                c.warmup = k.warmup;
                configs.push_back(c);
            }
    }
    for (const BenchConfig& c : configs)
        if (auto why = c.problem()) fail(fmt::format("{}: {}", describe(c), *why));
    return configs;
}

void add_knob_options(CLI::App& app, KnobTexts& k, std::vector<Knob>& knobs) {
    knobs = {
        {"op", app.add_option("-o,--op", k.op,
                              "write, read, send, write-imm, fetch-add, cmp-swap (a list sweeps)")
                   ->capture_default_str()},
        {"transport", app.add_option("-c,--connection", k.transport, "RC, UC or UD (list)")
                          ->capture_default_str()},
        {"mode", app.add_option("-m,--mode", k.mode,
                                "bw (bandwidth/message rate) or lat (ping-pong latency) (list)")
                     ->capture_default_str()},
        {"size", app.add_option("-s,--size", k.size,
                                "message bytes: 64, 4K, a list 64,4096 or a range 32..8192 "
                                "(default 64K bw, 2 lat, 8 atomics)")},
        {"window",
         app.add_option("-t,--tx-depth,--window", k.window, "outstanding WRs per QP (list/range)")
             ->capture_default_str()},
        {"qps",
         app.add_option("-q,--qp", k.qps, "queue pairs (list/range)")->capture_default_str()},
        {"post_list", app.add_option("-l,--post-list", k.post_list,
                                     "WRs per ibv_post_send, chained with wr.next (list/range)")
                          ->capture_default_str()},
        {"signal_every", app.add_option("-Q,--cq-mod,--signal-every", k.signal_every,
                                        "signal one WR in N (default min(100, window); list)")},
        {"inline", app.add_option("-I,--inline-size", k.inline_size,
                                  "send messages up to N bytes inline (list)")
                       ->capture_default_str()},
        {"sge", app.add_option("--sge", k.sge, "scatter/gather entries per WR (list)")
                    ->capture_default_str()},
        {"srq", app.add_option("--srq", k.srq, "server receives from one SRQ: on, off or on,off")
                    ->capture_default_str()},
        {"shared_cq",
         app.add_option("--shared-cq", k.shared_cq, "one CQ for all QPs: on, off or on,off")
             ->capture_default_str()},
        {"events", app.add_option("--events", k.events,
                                  "completion channel instead of polling: on, off or on,off")
                       ->capture_default_str()},
    };
    knobs.push_back({"srq", app.add_flag("--use-srq", k.use_srq, "same as --srq on (perftest)")});
    knobs.push_back(
        {"events", app.add_flag("-e", k.events_flag, "same as --events on (perftest)")});
    app.add_flag("-a,--all", k.all_sizes, "sizes 2..8M (perftest -a)");
    app.add_option("-n,--iters", k.iters,
                   "operations per QP, or round trips (default 5000 bw, 1000 lat)")
        ->check(CLI::Range(1ull, 1ull << 32));
    app.add_option("-D,--duration", k.duration_s, "measure for SEC seconds instead of -n")
        ->check(CLI::Range(0.001, 3600.0));
    app.add_option("--warmup", k.warmup, "un-timed operations per QP before each measurement")
        ->capture_default_str()
        ->check(CLI::Range(0ull, 1ull << 24));
}

void add_session_options(CLI::App& app, SessionOptions& s) {
    app.add_option_function<std::string>(
           "--staging-copies",
           [&s](const std::string& text) {
               if (text != "per-phase" && text != "per-message")
                   throw CLI::ValidationError("--staging-copies",
                                              "'" + text + "' is not per-phase or per-message");
               s.stage_each_message = text == "per-message";
           },
           "on the staging path: copy GPU <-> bounce buffer once per phase, outside the timed loop "
           "(the RDMA half), "
           "or per message, inside it")
        ->default_str("per-phase");
    app.add_option("-d,--ib-dev", s.device, "RDMA device (default: the first)");
    app.add_option("-i,--ib-port", s.ib_port, "device port")
        ->capture_default_str()
        ->check(CLI::Range(1, 255));
    app.add_option("-x,--gid-index", s.gid_index,
                   "source GID index (default: the RoCE v2 GID with an IPv4 address)")
        ->check(CLI::Range(0, 1023));
    app.add_option("-p,--port", s.port, "TCP port of the control connection")
        ->capture_default_str()
        ->check(CLI::Range(1, 65535));
    app.add_option("--timeout", s.timeout_s, "seconds any wait may pass without progress")
        ->capture_default_str()
        ->check(CLI::Range(0.1, 3600.0));
    app.add_option("--max-phase", s.max_phase_s, "seconds one measurement may take")
        ->capture_default_str()
        ->check(CLI::Range(1.0, 86400.0));
}

PinnedKnobs pinned_from(const std::vector<Knob>& knobs, const KnobTexts& k) {
    PinnedKnobs pinned;
    for (const Knob& knob : knobs) {
        if (knob.option->count() == 0) continue;
        std::string name = knob.name;
        std::vector<std::string> values;
        if (name == "op" || name == "mode")
            values = split(name == "op" ? k.op : k.mode);
        else if (name == "transport")
            for (const std::string& t : split(k.transport))
                values.push_back(parse_transport(t) ? transport_name(*parse_transport(t)) : t);
        else if (name == "srq" || name == "shared_cq" || name == "events") {
            bool flag = (name == "srq" && k.use_srq) || (name == "events" && k.events_flag);
            if (flag)
                values = {"on"};
            else
                for (bool b : switches(name == "srq"      ? k.srq
                                       : name == "events" ? k.events
                                                          : k.shared_cq,
                                       knob.option->get_name().c_str()))
                    values.push_back(b ? "on" : "off");
        } else {
            const std::string& text = name == "size"           ? k.size
                                      : name == "window"       ? k.window
                                      : name == "qps"          ? k.qps
                                      : name == "post_list"    ? k.post_list
                                      : name == "signal_every" ? k.signal_every
                                      : name == "inline"       ? k.inline_size
                                                               : k.sge;
            for (auto v : numbers(text, name.c_str(), 0, 1ull << 32))
                values.push_back(std::to_string(v));
        }
        pinned[name] = values;
    }
    return pinned;
}

struct PlotOptions {
    std::vector<std::string> inputs;
    std::string output;
    std::string y = "gib";
    std::string series;
    std::string title;
};

int plot(const PlotOptions& p) {
    static const std::map<std::string, std::pair<std::string, std::string>> kMeasures = {
        {"gib", {"result.gib_per_s", "throughput (GiB/s, 2^30 B/s)"}},
        {"gbps", {"result.gb_per_s", "throughput (Gb/s, 10^9 bit/s)"}},
        {"mops", {"result.mops", "message rate (millions of operations/s)"}},
        {"recv-mops", {"result.receiver.mops", "receiver-side message rate (Mops/s)"}},
        {"recv-gib", {"result.receiver.gib_per_s", "receiver-side throughput (GiB/s)"}},
        {"lat", {"result.latency.median_us", "median latency (µs)"}},
        {"lat-p99", {"result.latency.p99_us", "p99 latency (µs)"}},
    };
    auto measure = kMeasures.find(p.y);
    if (measure == kMeasures.end())
        fail(fmt::format(
            "--y '{}' is not one of gib, gbps, mops, recv-mops, recv-gib, lat, lat-p99", p.y));
    std::vector<Record> records;
    for (const std::string& input : p.inputs)
        for (Record& r : read_json_file(input)) records.push_back(std::move(r));
    if (records.empty()) fail("no records in " + p.inputs.front());

    // Series: the given keys, or every configuration knob that varies (but size, the x axis).
    std::vector<std::string> keys;
    if (!p.series.empty()) {
        for (const std::string& key : split(p.series))
            keys.push_back(key.find('.') == std::string::npos ? "config." + key : key);
    } else {
        for (const auto& [key, value] : records.front()["config"].items()) {
            if (key == "size") continue;
            for (const Record& r : records)
                if (!r.contains("config") || r["config"].value(key, Record()) != value) {
                    keys.push_back("config." + key);
                    break;
                }
        }
    }
    Chart chart;
    chart.series = series_from_records(records, "config.size", measure->second.first, keys);
    if (chart.series.empty())
        fail(fmt::format("no record has both config.size and {}", measure->second.first));
    chart.x_label = "message size (bytes)";
    chart.y_label = measure->second.second;
    const Record env = records.front().value("environment", Record::object());
    std::string provider = env.value("provider", "?");
    chart.title = p.title.empty() ? default_title(records, chart.y_label) : p.title;
    const std::string device =
        provider.starts_with("rxe")
            ? fmt::format("Soft-RoCE ({}, software, not a NIC)", env.value("device", "?"))
            : fmt::format("{} ({})", env.value("device", "?"), provider);
    chart.caption =
        fmt::format("{}{} · path MTU {} · kernel {} · host {} · {} · {}", device,
                    env.value("lab", "no") == "no" ? "" : " in the " + env.value("lab", ""),
                    env.value("path_mtu", 0), env.value("kernel", "?"), env.value("host", "?"),
                    env.value("date", "?"), kToolVersion);
    if (env.contains("lab_faults")) {
        bool same = true;
        for (const Record& r : records)
            same = same && r.value("environment", Record::object()).value("lab_faults", "") ==
                               env.value("lab_faults", "");
        chart.caption += " · faults: " + (same ? env.value("lab_faults", "")
                                               : std::string("each line's own (legend)"));
    }
    factor_legend(chart);
    write_file(p.output, render_svg(chart));
    fmt::print("wrote {} ({} series, {} records)\n", p.output, chart.series.size(), records.size());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("rdma-bench", [&] {
        CLI::App app{
            "rdma-bench: RDMA bandwidth, message rate, latency and CPU cost, with sweeps, JSON/CSV "
            "and plots.\n"
            "Run `rdma-bench server` on one host and `rdma-bench client ADDR [options]` on the "
            "other; knobs take\n"
            "a value, a list (4,64) or a power-of-two range (32..8192) and the client runs every "
            "combination.",
            "rdma-bench"};
        app.require_subcommand(1);
        SessionOptions session;
        KnobTexts knobs;
        std::vector<Knob> server_knobs, client_knobs;
        bool quiet = false;

        CLI::App* server =
            app.add_subcommand("server", "wait for one client and serve its whole run");
        add_session_options(*server, session);
        add_knob_options(*server, knobs, server_knobs);
        gpu::add_memory_options(*server, session.memory);
        server->add_option("--bind", session.bind_address, "listen on this address only");
        server
            ->add_option("--accept-timeout", session.accept_timeout_s,
                         "seconds to wait for the client")
            ->capture_default_str()
            ->check(CLI::Range(0.1, 86400.0));

        CLI::App* client = app.add_subcommand("client", "run the configurations against a server");
        client->add_option("address", session.server_address, "server address (numeric)")
            ->required();
        add_session_options(*client, session);
        add_knob_options(*client, knobs, client_knobs);
        gpu::add_memory_options(*client, session.memory);
        client->add_option("--json", session.json_path,
                           "write one record per configuration to FILE");
        client->add_option("--csv", session.csv_path, "… and as CSV");
        client->add_flag("--gbps", session.gbps, "also print Gb/s");
        client->add_flag("--no-progress", quiet, "no progress line on a terminal");

        PlotOptions plot_options;
        CLI::App* plot_cmd = app.add_subcommand(
            "plot", "draw records (from --json files) as an SVG figure against message size");
        plot_cmd->add_option("files", plot_options.inputs, "JSON files written by --json")
            ->required()
            ->check(CLI::ExistingFile);
        plot_cmd->add_option("-o,--output", plot_options.output, "SVG file to write")->required();
        plot_cmd
            ->add_option("--y", plot_options.y,
                         "gib, gbps, mops, recv-mops, recv-gib, lat, lat-p99")
            ->capture_default_str();
        plot_cmd->add_option("--series", plot_options.series,
                             "config keys that name a line (default: every knob that varies)");
        plot_cmd->add_option("--title", plot_options.title, "figure title");

        parse_or_exit(app, argc, argv);
        session.progress = !quiet;
        if (plot_cmd->parsed()) return plot(plot_options);
        if (server->parsed()) {
            // Knobs given to the server pin what a client may ask for; the rest follow the client.
            PinnedKnobs pinned;
            try {
                if (knobs.iters || knobs.duration_s > 0)
                    fail("give -n/-D to the client: the server follows its plan");
                pinned = pinned_from(server_knobs, knobs);
            } catch (const Error& e) {
                fmt::print(stderr, "rdma-bench: {} (run with --help for usage)\n", e.what());
                return 2;
            }
            return run_server(session, pinned);
        }
        if (!parse_ip_address(session.server_address, session.port)) {
            fmt::print(stderr,
                       "rdma-bench: '{}' is not a numeric IPv4 or IPv6 address (run with --help "
                       "for usage)\n",
                       session.server_address);
            return 2;
        }
        std::vector<BenchConfig> configs;
        try {
            configs = expand(knobs, client->get_option("--size")->count() > 0 || knobs.all_sizes);
        } catch (const Error& e) {
            // A combination that can never run is bad input, like a malformed option.
            fmt::print(stderr, "rdma-bench: {} (run with --help for usage)\n", e.what());
            return 2;
        }
        return run_client(session, configs);
    });
}
