// One timeline from a run's two sides: each host's program events (--trace, JSON lines) and the
// packets its own capture saw (rdma-wire --json: wire/packet.hpp's records), merged into the file
// the site's viewer reads (timeline.hpp's Trace), with the checks that its order is causal.
#pragma once

#include "packet.hpp"
#include "rdmalab/trace_event.hpp"
#include "timeline.hpp"

#include <string>
#include <vector>

namespace rdmalab::trace_merge {

struct HostInput {
    std::string name;     // "host1"
    std::string address;  // its RoCE address, as the packets' src/dst name it ("198.51.100.1")
    std::vector<trace::Event> events;   // parse_events
    std::vector<wire::Packet> packets;  // parse_packets
};

// A --trace file's text → its events, each line read through its type (records/trace_event.hpp;
// the header line checked and dropped). source names the file in messages.
std::vector<trace::Event> parse_events(const std::string& text, const std::string& source);
// rdma-wire --json's text → the packets (wire::read_document; each time_epoch checked too).
std::vector<wire::Packet> parse_packets(const std::string& text, const std::string& source);

// Clock alignment, WR ↔ packet links, the timeline and the checks: merge_passes.hpp's passes,
// in order. hosts[0]'s clock is the reference. meta is copied into the result (lesson,
// arguments, environment).
Trace merge(const std::vector<HostInput>& hosts, const TraceMeta& meta);

// True when every check in a merged trace passed; failures gets one line per violation.
bool checks_pass(const Trace& merged, std::vector<std::string>& failures);

}  // namespace rdmalab::trace_merge
