// Merging program events and packets into one timeline: see merge.hpp; its passes:
// merge_passes.hpp.
#include "merge.hpp"

#include "merge_passes.hpp"

#include "rdmalab/error.hpp"
#include "rdmalab/records/document.hpp"
#include "rdmalab/records/trace_event.hpp"

#include <fmt/core.h>

#include <optional>
#include <sstream>

namespace rdmalab::trace_merge {

namespace {

// A line's object, or InputError "SOURCE:LINE: ..." (depth-limited, as every JSON read here).
records::Json parse_line(const std::string& line, const std::string& where) {
    try {
        return records::parse_json(line, where);
    } catch (const Error& e) {
        throw InputError(e.what());
    }
}

// The first line: a trace_start of this format and version, or a refusal that says what a
// program trace is.
void check_header(const records::Json& object, const std::string& source) {
    std::optional<trace::Event> header;
    try {
        header = records::trace_event_from_json(object, source);
    } catch (const Error&) {
    }
    if (!header || header->event != "trace_start" || header->format != trace::kProgramTraceFormat)
        throw InputError(
            fmt::format("{}: not a program trace (its first line must say \"format\": "
                        "\"rdmalab-program-trace\"; write one with a lesson's --trace FILE)",
                        source));
    if (header->version != trace::kFormatVersion)
        throw InputError(fmt::format("{}: program trace version {} (this reads {})", source,
                                     *header->version, trace::kFormatVersion));
}

}  // namespace

std::vector<trace::Event> parse_events(const std::string& text, const std::string& source) {
    std::vector<trace::Event> events;
    std::istringstream lines(text);
    std::string line;
    int number = 0;
    bool header = false;
    while (std::getline(lines, line)) {
        ++number;
        if (line.empty()) continue;
        const std::string where = fmt::format("{}:{}", source, number);
        const records::Json object = parse_line(line, where);
        if (!header) {
            check_header(object, source);
            header = true;
            continue;
        }
        trace::Event event;
        try {
            event = records::trace_event_from_json(object, where);
        } catch (const Error& e) {
            throw InputError(e.what());
        }
        if (event.t_ns < 0 || event.t_ns > passes::kLatestNs)
            throw InputError(
                fmt::format("{}: t_ns: {}, not ns since the epoch before 2065", where, event.t_ns));
        events.push_back(std::move(event));
    }
    if (!header) throw InputError(fmt::format("{}: empty: no program trace in it", source));
    return events;
}

std::vector<wire::Packet> parse_packets(const std::string& text, const std::string& source) {
    try {
        auto packets = wire::read_document(text, source);
        for (const auto& p : packets)
            passes::parse_epoch(p.time_epoch, source);  // refused here, not later
        return packets;
    } catch (const wire::InputError& e) {
        throw InputError(e.what());
    }
}

Trace merge(const std::vector<HostInput>& hosts, const TraceMeta& meta) {
    using namespace passes;
    if (hosts.empty()) throw InputError("no hosts to merge");
    const Captures captures = index_captures(hosts);
    const Clocks clocks = place_clocks(smallest_transits(captures, hosts.size()));
    Links links;
    links.packets = pair_packets(captures, clocks);
    links.events = align_events(hosts, clocks);
    const std::int64_t t0 = earliest(links.events, links.packets);
    links.packet_records = packet_records(hosts, links.packets, t0);
    links.event_records = event_records(hosts, links.events, t0);
    for (std::size_t h = 0; h < hosts.size(); ++h) link_host(links, hosts[h].name, h);
    check_packet_order(links);

    Trace trace{.meta = meta, .clock = clock_record(hosts, clocks), .t0_epoch_ns = t0};
    for (const auto& h : hosts) trace.hosts.push_back({h.name, h.address});
    trace.timeline = build_timeline(links.event_records, links.packet_records);
    trace.events = std::move(links.event_records);
    trace.packets = std::move(links.packet_records);
    trace.checks = checks_record(links.checks);
    return trace;
}

bool checks_pass(const Trace& merged, std::vector<std::string>& failures) {
    bool ok = true;
    for (const CheckRecord& c : merged.checks) {
        if (c.ok) continue;
        ok = false;
        for (const std::string& v : c.violations)
            failures.push_back(fmt::format("{}: {}", c.name, v));
    }
    return ok;
}

}  // namespace rdmalab::trace_merge
