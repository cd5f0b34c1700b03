// One timeline from a run's two sides: each host's program events (--trace, JSON lines) and the
// packets its own capture saw (rdma-wire --json: wire/packet.hpp's records), merged into the file
// the site's viewer reads
// ({"format": "rdmalab-trace", "version": 1}), with the checks that its order is causal.
#pragma once

#include "packet.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rdmalab::trace_merge {

// 2: packets are wire/packet.hpp's records (packet_schema_version says which), whole.
inline constexpr int kVersion = 2;

// Bad input: one line that says which file and what is wrong with it.
struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct HostInput {
    std::string name;     // "host1"
    std::string address;  // its RoCE address, as the packets' src/dst name it ("198.51.100.1")
    std::vector<nlohmann::json> events;  // parse_events
    std::vector<wire::Packet> packets;   // parse_packets
};

// A --trace file's text → its events (the header line checked and dropped). source names the
// file in messages.
std::vector<nlohmann::json> parse_events(const std::string& text, const std::string& source);
// rdma-wire --json's text → the packets (wire::read_document; each time_epoch checked too).
std::vector<wire::Packet> parse_packets(const std::string& text, const std::string& source);

// Clock alignment, WR ↔ packet links, the timeline and the checks: merge_passes.hpp's passes,
// in order. hosts[0]'s clock is the reference. meta is copied into the result (lesson,
// arguments, environment).
nlohmann::json merge(const std::vector<HostInput>& hosts, const nlohmann::json& meta);

// True when every check in a merged trace passed; failures gets one line per violation.
bool checks_pass(const nlohmann::json& merged, std::vector<std::string>& failures);

}  // namespace rdmalab::trace_merge
