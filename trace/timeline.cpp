// The merged trace written and read: see timeline.hpp.
#include "timeline.hpp"

#include "rdmalab/error.hpp"
#include "rdmalab/records/schema.hpp"
#include "rdmalab/records/trace_event.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <iterator>

namespace rdmalab::trace_merge {

using nlohmann::json;
using records::Field;
using Ordered = nlohmann::ordered_json;

namespace {

template <typename T>
void put(json& object, const char* key, const std::optional<T>& value) {
    if (value) object[key] = *value;
}

// The document apart from its events and packets, which are checked one by one.
const std::vector<Field> kTraceFields = {
    {"checks", "object[]", true, "the causal checks"},
    {"checks[].checked", "integer", true, "how many it checked"},
    {"checks[].name", "string", true, "what it checks"},
    {"checks[].ok", "boolean", true, "no violation"},
    {"checks[].violations", "string[]", true, "each violation, one line"},
    {"clock", "object", true, "how the hosts' clocks were put on one"},
    {"clock.method", "string", true, "how, in words"},
    {"clock.offsets_ns", "integer{}", true, "each other host's clock minus the reference's"},
    {"clock.reference", "string", true, "the host whose clock the times are on"},
    {"clock.unaligned", "string[]", false, "the hosts no exchange placed (offset 0)"},
    {"events", "object[]", true, "the program events, in time order"},
    {"format", "string", true, "\"rdmalab-trace\""},
    {"hosts", "object[]", true, "the hosts, the reference first"},
    {"hosts[].address", "string", true, "its RoCE address"},
    {"hosts[].name", "string", true, "its name (\"host1\")"},
    {"meta", "object", true, "what the run was (trace-merge's options)"},
    {"meta.arguments", "string", false, "the lesson's arguments"},
    {"meta.client", "string", false, "the client's host"},
    {"meta.environment", "string{}", false, "the run's environment: commit, qemu, faults, …"},
    {"meta.lesson", "string", false, "the lesson run"},
    {"meta.ranks", "integer", false, "a collective's ranks"},
    {"meta.roles", "string{}", false, "each host's rank (\"rank 0\")"},
    {"meta.server", "string", false, "the server's host"},
    {"packet_schema_version", "integer", true, "the packet records' schema (wire/packet.hpp)"},
    {"packets", "object[]", true, "the packets, in time order"},
    {"t0_epoch_ns", "integer", true, "the earliest time, ns since the epoch; times are from it"},
    {"timeline", "object[]", true, "every event, departure and arrival in time order"},
    {"timeline[].index", "integer", true, "the event's or packet's index"},
    {"timeline[].kind", "string", true, "event, send or arrive"},
    {"timeline[].t_ns", "integer", true, "ns from t0"},
    {"version", "integer", true, "the format's version (2)"},
};

// What the merge adds to a program event.
const std::vector<Field> kEventLinks = {
    {"acked_by", "integer", false, "a post_send: the ACK that completed it (packet)"},
    {"caused_by", "integer", false, "a completion: the packet that caused it"},
    {"completion", "integer", false, "a post: its completion (event)"},
    {"id", "integer", true, "its index in events"},
    {"packets", "integer[]", false, "a post_send: its packets"},
    {"wr", "integer", false, "a completion: its post (event)"},
};
// What the merge adds to a packet record.
const std::vector<Field> kPacketLinks = {
    {"acks", "integer[]", false, "an ACK: the post_sends it completed (events)"},
    {"from", "string", true, "the sending host (its address where no host has it)"},
    {"id", "integer", true, "its index in packets"},
    {"lost", "boolean", true, "sent to a host whose capture never saw it arrive"},
    {"received_by", "integer", false, "a message's last packet: its receive completion (event)"},
    {"rx_ns", "integer|null", true, "seen arriving, ns from t0"},
    {"to", "string", true, "the receiving host (or its address)"},
    {"tx_ns", "integer|null", true, "seen leaving, ns from t0"},
    {"wr", "integer", false, "the post_send it belongs to (event)"},
};

[[noreturn]] void refuse(const std::string& where, const std::string& problem) {
    throw InputError(fmt::format("{}: {}", where, problem));
}

void check(const Ordered& object, records::Schema schema, const std::string& where) {
    try {
        records::check_schema(object, schema, where);
    } catch (const Error& e) {
        throw InputError(e.what());
    }
}

// An index link, refused unless it points into a list of `size`.
std::optional<std::size_t> link(const Ordered& object, const char* key, std::size_t size,
                                const std::string& where) {
    if (!object.contains(key)) return std::nullopt;
    const Ordered& value = object[key];
    if (!value.is_number_unsigned() || value.get<std::uint64_t>() >= size)
        refuse(where, fmt::format("{}: {}, not an index below {}", key, value.dump(), size));
    return value.get<std::size_t>();
}

std::optional<std::vector<std::size_t>> links(const Ordered& object, const char* key,
                                              std::size_t size, const std::string& where) {
    if (!object.contains(key)) return std::nullopt;
    std::vector<std::size_t> indices;
    for (std::size_t i = 0; i < object[key].size(); ++i)
        indices.push_back(
            *link(Ordered{{key, object[key][i]}}, key, size, fmt::format("{}.{}", where, key)));
    return indices;
}

// Its own index, as the file's order gives it.
std::size_t own_id(const Ordered& object, std::size_t at, const std::string& where) {
    if (object["id"] != at) refuse(where, fmt::format("id: {}, not {}", object["id"].dump(), at));
    return at;
}

Ordered without(Ordered object, const std::vector<Field>& fields) {
    for (const Field& field : fields) object.erase(std::string(field.name));
    return object;
}

EventRecord event_from_json(const Ordered& o, std::size_t at, std::size_t events,
                            std::size_t packets, const std::string& where) {
    if (!o.is_object()) refuse(where, "not a JSON object");
    std::vector<Field> schema(kEventLinks);
    const Ordered line = without(o, kEventLinks);
    if (line.contains("event") && line["event"].is_string()) {
        const records::Schema kind = records::trace_event_schema(line["event"].get<std::string>());
        schema.insert(schema.end(), kind.begin(), kind.end());
    }
    if (schema.size() > kEventLinks.size()) check(o, schema, where);
    EventRecord e;
    try {
        e.fields = records::trace_event_from_json(line, where);
    } catch (const Error& error) {
        throw InputError(error.what());
    }
    e.id = own_id(o, at, where);
    e.packets = links(o, "packets", packets, where);
    e.acked_by = link(o, "acked_by", packets, where);
    e.completion = link(o, "completion", events, where);
    e.wr = link(o, "wr", events, where);
    e.caused_by = link(o, "caused_by", packets, where);
    return e;
}

PacketRecord packet_from_json(const Ordered& o, std::size_t at, std::size_t events,
                              const std::string& where) {
    if (!o.is_object()) refuse(where, "not a JSON object");
    Ordered added = Ordered::object();  // the merge's fields; the rest is the packet record's
    for (const Field& field : kPacketLinks)
        if (const std::string key(field.name); o.contains(key)) added[key] = o[key];
    check(added, kPacketLinks, where);
    PacketRecord p;
    try {
        p.packet = wire::from_json(json(without(o, kPacketLinks)), where);
    } catch (const wire::InputError& e) {
        throw InputError(e.what());
    }
    p.id = own_id(o, at, where);
    p.from = o["from"].get<std::string>();
    p.to = o["to"].get<std::string>();
    if (!o["tx_ns"].is_null()) p.tx_ns = o["tx_ns"].get<std::int64_t>();
    if (!o["rx_ns"].is_null()) p.rx_ns = o["rx_ns"].get<std::int64_t>();
    p.lost = o["lost"].get<bool>();
    p.wr = link(o, "wr", events, where);
    p.acks = links(o, "acks", events, where);
    p.received_by = link(o, "received_by", events, where);
    return p;
}

TraceMeta meta_from_json(const Ordered& o) {
    TraceMeta meta;
    auto text = [&](const char* key) {
        return o.contains(key) ? std::optional(o[key].get<std::string>()) : std::nullopt;
    };
    auto map = [&](const char* key) {
        return o.contains(key) ? std::optional(o[key].get<std::map<std::string, std::string>>())
                               : std::nullopt;
    };
    meta.lesson = text("lesson");
    meta.arguments = text("arguments");
    meta.server = text("server");
    meta.client = text("client");
    if (o.contains("ranks")) meta.ranks = o["ranks"].get<int>();
    meta.roles = map("roles");
    meta.environment = map("environment");
    return meta;
}

json meta_json(const TraceMeta& meta) {
    json out = json::object();
    put(out, "lesson", meta.lesson);
    put(out, "arguments", meta.arguments);
    put(out, "server", meta.server);
    put(out, "client", meta.client);
    put(out, "ranks", meta.ranks);
    put(out, "roles", meta.roles);
    put(out, "environment", meta.environment);
    return out;
}

}  // namespace

json to_json(const EventRecord& e) {
    json out = trace::to_json(e.fields);
    out["id"] = e.id;
    put(out, "packets", e.packets);
    put(out, "acked_by", e.acked_by);
    put(out, "completion", e.completion);
    put(out, "wr", e.wr);
    put(out, "caused_by", e.caused_by);
    return out;
}

json to_json(const PacketRecord& p) {
    json out = wire::to_json(p.packet);  // the packet record's fields, all of them
    out["id"] = p.id;
    out["from"] = p.from;
    out["to"] = p.to;
    out["tx_ns"] = p.tx_ns ? json(*p.tx_ns) : json();
    out["rx_ns"] = p.rx_ns ? json(*p.rx_ns) : json();
    out["lost"] = p.lost;
    put(out, "wr", p.wr);
    put(out, "acks", p.acks);
    put(out, "received_by", p.received_by);
    return out;
}

json to_json(const Trace& t) {
    json clock{{"reference", t.clock.reference},
               {"method", t.clock.method},
               {"offsets_ns", t.clock.offsets_ns}};
    put(clock, "unaligned", t.clock.unaligned);
    json hosts = json::array(), events = json::array(), packets = json::array();
    json timeline = json::array(), checks = json::array();
    for (const HostRecord& h : t.hosts) hosts.push_back({{"name", h.name}, {"address", h.address}});
    for (const EventRecord& e : t.events) events.push_back(to_json(e));
    for (const PacketRecord& p : t.packets) packets.push_back(to_json(p));
    for (const TimelineEntry& s : t.timeline)
        timeline.push_back({{"t_ns", s.t_ns}, {"kind", s.kind}, {"index", s.index}});
    for (const CheckRecord& c : t.checks)
        checks.push_back(
            {{"name", c.name}, {"checked", c.checked}, {"ok", c.ok}, {"violations", c.violations}});
    return {{"format", t.format},
            {"version", t.version},
            {"packet_schema_version", t.packet_schema_version},
            {"meta", meta_json(t.meta)},
            {"clock", std::move(clock)},
            {"t0_epoch_ns", t.t0_epoch_ns},
            {"hosts", std::move(hosts)},
            {"events", std::move(events)},
            {"packets", std::move(packets)},
            {"timeline", std::move(timeline)},
            {"checks", std::move(checks)}};
}

std::string write_trace(const Trace& trace) {
    return to_json(trace).dump(1) + "\n";
}

Trace read_trace(std::string_view text, const std::string& where) {
    Ordered document;
    try {
        document = records::parse_json(text, where);
    } catch (const Error& e) {
        throw InputError(e.what());
    }
    if (!document.is_object() || !document.contains("format") || document["format"] != kTraceFormat)
        refuse(where, "not an rdmalab trace (format rdmalab-trace, with events and packets)");
    if (document.contains("version") && document["version"] != kVersion)
        refuse(where, fmt::format("version: {} (this reads {})",
                                  document["version"].dump().substr(0, 20), kVersion));
    Ordered rest = document;
    rest["events"] = Ordered::array();
    rest["packets"] = Ordered::array();
    check(rest, kTraceFields, where);
    Trace t;
    t.packet_schema_version = document["packet_schema_version"].get<int>();
    t.meta = meta_from_json(document["meta"]);
    const Ordered& clock = document["clock"];
    t.clock = {clock["reference"].get<std::string>(), clock["method"].get<std::string>(),
               clock["offsets_ns"].get<std::map<std::string, std::int64_t>>(), std::nullopt};
    if (clock.contains("unaligned"))
        t.clock.unaligned = clock["unaligned"].get<std::vector<std::string>>();
    t.t0_epoch_ns = document["t0_epoch_ns"].get<std::int64_t>();
    for (const Ordered& h : document["hosts"])
        t.hosts.push_back({h["name"].get<std::string>(), h["address"].get<std::string>()});
    const Ordered& events = document["events"];
    const Ordered& packets = document["packets"];
    if (!events.is_array() || !packets.is_array())
        refuse(where, "events and packets must be arrays");
    for (std::size_t i = 0; i < events.size(); ++i)
        t.events.push_back(event_from_json(events[i], i, events.size(), packets.size(),
                                           fmt::format("{}: events[{}]", where, i)));
    for (std::size_t i = 0; i < packets.size(); ++i)
        t.packets.push_back(packet_from_json(packets[i], i, events.size(),
                                             fmt::format("{}: packets[{}]", where, i)));
    for (std::size_t i = 0; i < document["timeline"].size(); ++i) {
        const Ordered& s = document["timeline"][i];
        t.timeline.push_back({s["t_ns"].get<std::int64_t>(), s["kind"].get<std::string>(),
                              s["index"].get<std::size_t>()});
    }
    for (const Ordered& c : document["checks"])
        t.checks.push_back({c["name"].get<std::string>(), c["checked"].get<std::size_t>(),
                            c["ok"].get<bool>(), c["violations"].get<std::vector<std::string>>()});
    return t;
}

Ordered trace_schema_json() {
    Ordered root = records::schema_json(
        "rdmalab merged trace",
        "what trace-merge writes and the site's viewer plays: format rdmalab-trace, version 2 "
        "(trace/timeline.hpp)",
        kTraceFields);
    Ordered kinds = Ordered::array();
    for (const std::string_view kind : records::trace_event_kinds()) {
        std::vector<Field> fields(kEventLinks);
        const records::Schema line = records::trace_event_schema(kind);
        fields.insert(fields.end(), line.begin(), line.end());
        std::ranges::sort(fields, {}, &Field::name);
        Ordered one = records::schema_json(kind, fmt::format("a {} event", kind), fields);
        one.erase("$schema");
        one["properties"]["event"]["const"] = kind;
        kinds.push_back(std::move(one));
    }
    root["properties"]["events"]["items"] = Ordered{{"oneOf", std::move(kinds)}};
    Ordered packet = wire::packet_schema_json();
    for (const char* key : {"$schema", "$id", "title", "schema_version", "format"})
        packet.erase(key);
    const Ordered added = records::schema_json("", "", kPacketLinks);
    for (const auto& [key, value] : added["properties"].items()) packet["properties"][key] = value;
    for (const Ordered& name : added["required"]) packet["required"].push_back(name);
    root["properties"]["packets"]["items"] = std::move(packet);
    return root;
}

}  // namespace rdmalab::trace_merge
