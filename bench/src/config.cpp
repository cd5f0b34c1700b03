// rdma-bench configurations: names, rules and JSON form; see config.hpp.
#include "rdmalab/bench/config.hpp"

#include "rdmalab/bench/control.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/ud_datagrams.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <utility>

namespace rdmalab::bench {

namespace {

constexpr std::array<std::pair<Transport, const char*>, 3> kTransports{
    {{Transport::kRC, "RC"}, {Transport::kUC, "UC"}, {Transport::kUD, "UD"}}};
constexpr std::array<std::pair<Mode, const char*>, 2> kModes{
    {{Mode::kBandwidth, "bw"}, {Mode::kLatency, "lat"}}};

template <typename Table, typename Key>
const char* name_in(const Table& table, Key key) {
    for (const auto& [k, name] : table)
        if (k == key) return name;
    return "?";
}

std::string upper(std::string text) {
    for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return text;
}

}  // namespace

const char* transport_name(Transport t) {
    return name_in(kTransports, t);
}
const char* mode_name(Mode mode) {
    return name_in(kModes, mode);
}

std::optional<Transport> parse_transport(const std::string& text) {
    for (const auto& [t, name] : kTransports)
        if (upper(text) == name) return t;
    return std::nullopt;
}

std::optional<Mode> parse_mode(const std::string& text) {
    for (const auto& [mode, name] : kModes)
        if (text == name) return mode;
    if (text == "bandwidth") return Mode::kBandwidth;
    if (text == "latency") return Mode::kLatency;
    return std::nullopt;
}

std::optional<std::string> BenchConfig::problem() const {
    const Operation& row = operation(op);
    const char* o = row.name;
    if (transport == Transport::kUD && !row.runs_over_ud)
        return fmt::format("UD carries only {} (not {}): datagrams have no remote memory access",
                           op_names(&Operation::runs_over_ud), o);
    if (transport == Transport::kUC && !row.runs_over_uc)
        return fmt::format("UC has no {}: READ and atomics need RC's responder", o);
    if (const std::uint32_t fixed = row.fixed_size; fixed > 0) {
        if (size != fixed)
            return fmt::format("{} moves exactly {} bytes: drop -s (got {})", o, fixed, size);
        if (sge != 1) return fmt::format("{} takes one {}-byte SGE: drop --sge", o, fixed);
    }
    if (inline_size > 0 && !row.can_inline)
        return fmt::format("-I (inline) applies to {}, not {}",
                           op_names(&Operation::can_inline, " and "), o);
    if (size == 0) return "message size must be at least 1 byte";
    if (size > (std::uint64_t{1} << 30)) return fmt::format("message size {} exceeds 1 GiB", size);
    if (sge == 0 || sge > 32) return fmt::format("--sge {} is outside 1..32", sge);
    if (sge > size)
        return fmt::format("--sge {} splits a {}-byte message into empty pieces", sge, size);
    if (window == 0) return "window (-t) must be at least 1";
    if (qps == 0 || qps > 1024) return fmt::format("-q {} is outside 1..1024", qps);
    if (post_list == 0 || post_list > window)
        return fmt::format("post list (-l) {} must lie in 1..window ({})", post_list, window);
    if (signal_every == 0 || signal_every > window)
        return fmt::format(
            "signal interval (-Q) {} exceeds the window ({}): the send queue would fill before "
            "any completion frees it",
            signal_every, window);
    if (srq && !row.target_receives())
        return fmt::format("--srq needs an operation the server receives ({}), not {}",
                           op_names(&Operation::target_receives), o);
    if (duration_s < 0 || duration_s > 3600 || std::isnan(duration_s))
        return fmt::format("duration {} s is outside 0..3600", duration_s);
    if (duration_s == 0 && iters == 0) return "iterations (-n) must be at least 1";
    if (iters > (std::uint64_t{1} << 32)) return fmt::format("-n {} exceeds 2^32", iters);
    if (warmup > (std::uint64_t{1} << 24)) return fmt::format("--warmup {} exceeds 2^24", warmup);
    if (mode == Mode::kLatency) {
        if (qps != 1) return "latency is a ping-pong on one QP: drop -q";
        if (post_list != 1) return "latency posts one WR at a time: drop -l";
        if (duration_s > 0) return "latency mode takes -n (samples), not -D";
        if (iters > 10'000'000) return "latency keeps every sample: -n at most 10000000";
        if (srq) return "latency mode does not use --srq";
        if (events && row.reply == Reply::kStamp)
            return fmt::format(
                "{} latency polls memory, not the CQ: -e needs send, write-imm, read or atomics",
                o);
    }
    return std::nullopt;
}

std::uint64_t BenchConfig::slot_bytes() const {
    return size + (transport == Transport::kUD ? kGrhBytes : 0);
}

Record BenchConfig::to_json() const {
    return Record{{"op", op_name(op)},
                  {"transport", transport_name(transport)},
                  {"mode", mode_name(mode)},
                  {"size", size},
                  {"window", window},
                  {"qps", qps},
                  {"post_list", post_list},
                  {"signal_every", signal_every},
                  {"inline", inline_size},
                  {"sge", sge},
                  {"srq", srq},
                  {"shared_cq", shared_cq},
                  {"events", events},
                  {"iters", iters},
                  {"duration_s", duration_s},
                  {"warmup", warmup}};
}

BenchConfig BenchConfig::from_json(const Record& json) {
    BenchConfig config;
    try {
        // field<T> checks each type and range: a peer's 2^32 + 1 is refused, not wrapped to 1.
        auto op = parse_op(field<std::string>(json, "op"));
        auto transport = parse_transport(field<std::string>(json, "transport"));
        auto mode = parse_mode(field<std::string>(json, "mode"));
        if (!op || !transport || !mode) fail("an unknown op, transport or mode");
        config.op = *op;
        config.transport = *transport;
        config.mode = *mode;
        config.size = field<std::uint64_t>(json, "size");
        config.window = field<std::uint32_t>(json, "window");
        config.qps = field<std::uint32_t>(json, "qps");
        config.post_list = field<std::uint32_t>(json, "post_list");
        config.signal_every = field<std::uint32_t>(json, "signal_every");
        config.inline_size = field<std::uint32_t>(json, "inline");
        config.sge = field<std::uint32_t>(json, "sge");
        config.srq = field<bool>(json, "srq");
        config.shared_cq = field<bool>(json, "shared_cq");
        config.events = field<bool>(json, "events");
        config.iters = field<std::uint64_t>(json, "iters");
        config.duration_s = field<double>(json, "duration_s");
        config.warmup = field<std::uint64_t>(json, "warmup");
    } catch (const Error& e) {
        fail(fmt::format("peer sent a malformed configuration: {}", e.what()));
    }
    if (auto why = config.problem()) fail("peer sent a configuration this tool refuses: " + *why);
    return config;
}

std::string describe(const BenchConfig& c) {
    std::string text = fmt::format("{} {} {} {} B", op_name(c.op), transport_name(c.transport),
                                   mode_name(c.mode), c.size);
    if (c.mode == Mode::kBandwidth) {
        text += fmt::format(" window {} qps {}", c.window, c.qps);
        if (c.post_list > 1) text += fmt::format(" post-list {}", c.post_list);
        if (c.signal_every > 1) text += fmt::format(" signal 1/{}", c.signal_every);
    }
    if (c.inline_size > 0) text += fmt::format(" inline≤{}", c.inline_size);
    if (c.sge > 1) text += fmt::format(" sge {}", c.sge);
    if (c.srq) text += " srq";
    if (c.shared_cq) text += " shared-cq";
    if (c.events) text += " events";
    return text;
}

}  // namespace rdmalab::bench
