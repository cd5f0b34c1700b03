// What rdma-wire does with packet records: run tshark on a capture, lay the packets out as a
// ladder a person reads, answer a test's question about them (count or print the packets that
// match), and hold the on-the-wire lesson's prediction against them.
#pragma once

#include "packet.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rdmalab::wire {

// tshark on a capture (found through PATH) → its RoCE v2 packets. InputError: tshark missing,
// or tshark refusing the file (its first line of complaint).
std::vector<Packet> run_tshark(const std::string& capture);

struct LadderOptions {
    bool brief = false;  // a run of like packets (direction, QP, opcode) on one line
};
// The ladder: a header line, one line per packet (or run), then the counts per opcode, per NAK
// kind and of packets sent again.
std::string ladder(const std::vector<Packet>& packets, const LadderOptions& options);

// A test's question: "NAME=TEXT" (the field's text is TEXT), "NAME~REGEX" (ECMAScript, found
// in it), or "NAME" (the packet has it). NAME is a JSON field of the record, dotted for a
// header's ("reth.length"); a field's text is a string's value or a number's or flag's JSON.
struct Condition {
    std::string field;
    enum class Kind { kHas, kEquals, kMatches } kind;
    std::string value;
};
Condition parse_condition(std::string_view text);  // std::invalid_argument on a bad one
bool matches(const Packet& packet, const std::vector<Condition>& conditions);
// The field's text, "" when the packet lacks it.
std::string field_text(const Packet& packet, std::string_view field);

// Per stream (one direction of one QP: source, destination, destination QPN): what a congestion
// experiment reads from a capture. Data bytes count each packet's payload once (a packet sent
// again adds to sent_again, not to the bytes); goodput is those bytes over the stream's span.
struct FlowSummary {
    std::string src, dst;
    std::uint32_t qpn = 0;
    std::size_t packets = 0, sent_again = 0;
    std::uint64_t data_bytes = 0;
    std::size_t ect = 0, ce = 0;  // ECN 01/10 (capable), 11 (congestion experienced)
    std::size_t acks = 0, naks = 0, rnr_naks = 0;  // AETH kinds
    double first_s = 0, last_s = 0;
    double goodput_mbit() const;  // 0 when the span is empty
};
// The streams of the packets (in order of their first packet), each one's counts.
std::vector<FlowSummary> flow_summaries(const std::vector<Packet>& packets);
// Jain's fairness index of the data streams' goodput (those with data bytes):
// (Σx)² / (n·Σx²), 1 when all are equal, 1/n when one takes everything; 0 when there are none.
double jain_fairness(const std::vector<FlowSummary>& flows);
// The summaries as a tab-separated table (a header line, a row per stream), then a line
// "# jain_fairness\tJ\tN data streams".
std::string flows_table(const std::vector<FlowSummary>& flows);

// The on-the-wire lesson's prediction (its client's output: lines "client:   client → server
// OPCODE [× N] QP Q PSN P[–P2] BYTES B …") against the packets: every predicted packet must be
// there, and no other packet of those QPs within the predicted PSN range. A predicted packet seen
// more than once was sent again: counted apart.
struct PredictionCheck {
    std::size_t predicted = 0, found = 0, missing = 0, sent_again = 0;
    long long extra = 0;
    std::vector<std::string> missing_lines;  // "missing: client → server SEND Only PSN 5 512 B"
    std::string summary() const;             // "predicted N found F missing M extra E sent-again A"
};
PredictionCheck check_prediction(const std::vector<Packet>& packets, std::string_view client_out,
                                 const std::string& client_address,
                                 const std::string& server_address);

}  // namespace rdmalab::wire
