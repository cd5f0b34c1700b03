// The merged trace (what trace-merge writes and the site's viewer plays: {"format":
// "rdmalab-trace", "version": 2}) as a C++ type, its schema (records/schema/trace.json) and its
// one writer and one reader. An event is a program trace's line (trace::Event; its reader and
// schema: records/trace_event.hpp) with its time from t0, the merge's name for its host and its
// links; a packet is the packet record (wire/packet.hpp) with its hosts, times and links. Every
// object is written with its keys in alphabetical order, as trace-merge always wrote them; a
// file read and written again is the same bytes (a unit test holds that for the committed
// traces, docs/public/traces/). The type lives here, not in records/, because its packets are
// rdmalab_wire's, a tool's library that records/ may not link.
// A new field: the struct, to_json and the reader, kTraceFields or the link fields, the version
// when an old reader would misread it, and the schema file (RDMALAB_UPDATE_SCHEMAS=1
// build/bin/unit_tests).
#pragma once

#include "packet.hpp"
#include "rdmalab/trace_event.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rdmalab::trace_merge {

// 2: packets are wire/packet.hpp's records (packet_schema_version says which), whole.
inline constexpr int kVersion = 2;
inline constexpr const char* kTraceFormat = "rdmalab-trace";

// Bad input: one line that says which file and what is wrong with it.
struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// What the run was (trace-merge's options: story.hpp's RunMeta).
struct TraceMeta {
    std::optional<std::string> lesson{}, arguments{};
    std::optional<std::string> server{}, client{};              // a server and a client
    std::optional<int> ranks{};                                 // a collective
    std::optional<std::map<std::string, std::string>> roles{};  // host → "rank R"
    std::optional<std::map<std::string, std::string>> environment{};
    bool operator==(const TraceMeta&) const = default;
};

struct ClockRecord {
    std::string reference{}, method{};
    std::map<std::string, std::int64_t> offsets_ns{};     // each other host's clock minus the
                                                          // reference's
    std::optional<std::vector<std::string>> unaligned{};  // hosts not placed (older files: none)
    bool operator==(const ClockRecord&) const = default;
};

struct HostRecord {
    std::string name{}, address{};
    bool operator==(const HostRecord&) const = default;
};

// A program event: the line's fields (t_ns from t0, host the merge's name for it) and its links,
// each an index into the trace's events or packets.
struct EventRecord {
    trace::Event fields{};
    std::size_t id = 0;
    std::optional<std::vector<std::size_t>> packets{};  // a post_send's packets
    std::optional<std::size_t> acked_by{};              // a post_send's completing ACK (packet)
    std::optional<std::size_t> completion{};            // a post's completion (event)
    std::optional<std::size_t> wr{};                    // a completion's post (event)
    std::optional<std::size_t> caused_by{};             // a completion's cause (packet)
    bool operator==(const EventRecord&) const = default;
};

// A packet: the sender's copy where there is one.
struct PacketRecord {
    wire::Packet packet{};
    std::size_t id = 0;
    std::string from{}, to{};  // hosts, or the packet's addresses where no host has them
    std::optional<std::int64_t> tx_ns{}, rx_ns{};    // seen leaving, arriving; from t0
    bool lost = false;                               // sent to a host whose capture never saw it
    std::optional<std::size_t> wr{};                 // the post_send it belongs to (event)
    std::optional<std::vector<std::size_t>> acks{};  // an ACK: the posts it completes (events)
    std::optional<std::size_t> received_by{};        // a message's last: its receive completion
    bool operator==(const PacketRecord&) const = default;
};

struct TimelineEntry {
    std::int64_t t_ns = 0;
    std::string kind{};  // "event", "send", "arrive"
    std::size_t index = 0;
    bool operator==(const TimelineEntry&) const = default;
};

struct CheckRecord {
    std::string name{};
    std::size_t checked = 0;
    bool ok = true;
    std::vector<std::string> violations{};
    bool operator==(const CheckRecord&) const = default;
};

struct Trace {
    std::string format = kTraceFormat;
    int version = kVersion;
    int packet_schema_version = wire::kSchemaVersion;
    TraceMeta meta{};
    ClockRecord clock{};
    std::int64_t t0_epoch_ns = 0;
    std::vector<HostRecord> hosts{};
    std::vector<EventRecord> events{};
    std::vector<PacketRecord> packets{};
    std::vector<TimelineEntry> timeline{};
    std::vector<CheckRecord> checks{};
    bool operator==(const Trace&) const = default;
};

nlohmann::json to_json(const Trace& trace);
// One event or packet as the file has it.
nlohmann::json to_json(const EventRecord& event);
nlohmann::json to_json(const PacketRecord& packet);
// The file's text: to_json, one space an indent, and a newline.
std::string write_trace(const Trace& trace);
// A file's text → the trace, checked against the schema (and each link against what it points
// to); throws InputError "WHERE: FIELD: PROBLEM" in one line.
Trace read_trace(std::string_view text, const std::string& where);

// The schema as a JSON Schema (records/schema/trace.json): the events one of the line kinds'
// with the links, the packets the packet record's with theirs.
nlohmann::ordered_json trace_schema_json();

}  // namespace rdmalab::trace_merge
