// Merging program events and packets into one timeline: see merge.hpp; its passes:
// merge_passes.hpp.
#include "merge.hpp"

#include "merge_passes.hpp"

#include <fmt/core.h>

#include <sstream>

namespace rdmalab::trace_merge {

using nlohmann::json;

namespace {

// The fields the merge reads, each of the type it reads it as, so a foreign or damaged file is
// refused here by name and never reaches the merge (json's accessors throw on another type).
bool is_u32(const json& value) {
    return value.is_number_unsigned() && value.get<std::uint64_t>() <= 0xffffffffu;
}
void check_event_fields(const json& event, const std::string& where) {
    auto bad = [&](const char* field, const char* type) {
        throw InputError(fmt::format("{}: {} must be {}", where, field, type));
    };
    const std::int64_t t_ns = event["t_ns"].get<std::int64_t>();
    if (t_ns < 0 || t_ns > passes::kLatestNs) bad("t_ns", "ns since the epoch, before 2065");
    for (const char* field : {"qp_num", "dest_qp"})
        if (event.contains(field) && !is_u32(event[field])) bad(field, "a QP number");
    if (event.contains("opcode") && !event["opcode"].is_string()) bad("opcode", "a string");
    if (event.contains("ok") && !event["ok"].is_boolean()) bad("ok", "true or false");
    if (event.contains("length") && !event["length"].is_number_unsigned())
        bad("length", "a byte count");
    const std::string kind = event["event"];
    if ((kind == "post_send" || kind == "post_recv" || kind == "completion") &&
        !(event.contains("wr_id") && event["wr_id"].is_number_unsigned()))
        bad("wr_id", "an unsigned integer");
}
}  // namespace

std::vector<json> parse_events(const std::string& text, const std::string& source) {
    std::vector<json> events;
    std::istringstream lines(text);
    std::string line;
    int number = 0;
    bool header = false;
    while (std::getline(lines, line)) {
        ++number;
        if (line.empty()) continue;
        json event = json::parse(line, nullptr, false);
        if (event.is_discarded() || !event.is_object())
            throw InputError(fmt::format("{}:{}: not a JSON object", source, number));
        if (!header) {
            // Each field's type checked first: json::value() throws on a field of another type.
            const auto format = event.find("format");
            if (format == event.end() || !format->is_string() || *format != "rdmalab-program-trace")
                throw InputError(fmt::format(
                    "{}: not a program trace (its first line must say \"format\": "
                    "\"rdmalab-program-trace\"; write one with a lesson's --trace FILE)",
                    source));
            const auto version = event.find("version");
            if (version == event.end() || !version->is_number_integer() || *version != 1)
                throw InputError(fmt::format("{}: program trace version {} (this reads 1)", source,
                                             version == event.end()
                                                 ? std::string("(none)")
                                                 : version->dump().substr(0, 20)));
            header = true;
            continue;
        }
        if (!event.contains("t_ns") || !event["t_ns"].is_number_integer() ||
            !event.contains("event") || !event["event"].is_string())
            throw InputError(fmt::format("{}:{}: an event needs t_ns and event", source, number));
        check_event_fields(event, fmt::format("{}:{}", source, number));
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

json merge(const std::vector<HostInput>& hosts, const json& meta) {
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

    json host_list = json::array();
    for (const auto& h : hosts) host_list.push_back({{"name", h.name}, {"address", h.address}});
    return {{"format", "rdmalab-trace"},
            {"version", kVersion},
            {"packet_schema_version", wire::kSchemaVersion},
            {"meta", meta},
            {"clock", clock_record(hosts, clocks)},
            {"t0_epoch_ns", t0},
            {"hosts", host_list},
            {"events", links.event_records},
            {"packets", links.packet_records},
            {"timeline", build_timeline(links.event_records, links.packet_records)},
            {"checks", checks_record(links.checks)}};
}

bool checks_pass(const json& merged, std::vector<std::string>& failures) {
    bool ok = true;
    for (const auto& c : merged.at("checks")) {
        if (c.at("ok").get<bool>()) continue;
        ok = false;
        for (const auto& v : c.at("violations"))
            failures.push_back(
                fmt::format("{}: {}", c.at("name").get<std::string>(), v.get<std::string>()));
    }
    return ok;
}

}  // namespace rdmalab::trace_merge
