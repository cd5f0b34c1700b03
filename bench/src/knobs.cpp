// See knobs.hpp.
#include "rdmalab/bench/knobs.hpp"

#include "rdmalab/bench/sweep.hpp"
#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <optional>
#include <variant>

namespace rdmalab::bench {

namespace {

std::vector<std::string> split_impl(const std::string& text) {
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
    for (const std::string& item : split_impl(text)) {
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
    for (const std::string& item : split_impl(text)) {
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
}  // namespace

std::vector<BenchConfig> expand_knobs(const KnobTexts& k, bool size_given) {
    auto ops = names<Op>(k.op, "--op", parse_op, op_names().c_str());
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

    const bool only_fixed_sizes =
        std::all_of(ops.begin(), ops.end(), [](Op op) { return operation(op).fixed_size > 0; });
    std::vector<BenchConfig> configs;
    for (const Point& point : points) {
        const Mode mode = modes[point.at("mode")];
        const Op op = ops[point.at("op")];
        const std::uint32_t fixed_size = operation(op).fixed_size;
        const std::uint64_t window = point.at("window");
        // Defaults as perftest's: 64 KiB for bandwidth, 2 B for latency, 8 for atomics; one
        // signaled WR in min(100, window). Atomics move 8 bytes whatever -s says when other ops
        // share the run; asked for alone with another size, they are refused.
        std::vector<std::uint64_t> mode_sizes = sizes;
        if (!size_given)
            mode_sizes = {fixed_size > 0 ? fixed_size : mode == Mode::kLatency ? 2u : 65536u};
        else if (fixed_size > 0 && !only_fixed_sizes)
            mode_sizes = {fixed_size};
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

std::vector<std::string> split_list(const std::string& text) {
    return split_impl(text);
}

PinnedKnobs pinned_knobs(const KnobTexts& k, const std::set<std::string>& given) {
    static const std::map<std::string, std::string> kFlag = {
        {"srq", "--srq"}, {"shared_cq", "--shared-cq"}, {"events", "--events"}};
    PinnedKnobs pinned;
    for (const std::string& name : given) {
        std::vector<std::string> values;
        if (name == "op" || name == "mode")
            values = split_list(name == "op" ? k.op : k.mode);
        else if (name == "transport")
            for (const std::string& t : split_list(k.transport))
                values.push_back(parse_transport(t) ? transport_name(*parse_transport(t)) : t);
        else if (name == "srq" || name == "shared_cq" || name == "events") {
            bool flag = (name == "srq" && k.use_srq) || (name == "events" && k.events_flag);
            if (flag)
                values = {"on"};
            else
                for (bool b : switches(name == "srq"      ? k.srq
                                       : name == "events" ? k.events
                                                          : k.shared_cq,
                                       kFlag.at(name).c_str()))
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

}  // namespace rdmalab::bench
