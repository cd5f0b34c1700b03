// The passes of merge() (merge.hpp), in the order it runs them, each one job and tested on its
// own (tests/unit/trace_passes_test.cpp):
//   1. index_captures       each host's captured packets, by packet, as sent and as received
//   2. smallest_transits,   the clocks: each host's offset from the reference's (hosts[0]'s),
//      place_clocks,        the NTP estimate along the pairs that exchanged packets both ways
//      clock_record
//   3. pair_packets         each sender's copy of a packet with the receiver's, on one clock
//   4. align_events,        the program events on that clock; the earliest time of all (t0);
//      earliest,            the output's packet and event records, times from t0
//      packet_records,
//      event_records
//   5. link_host            per host: its WRs ↔ their packets, ACKs and completions, with the
//                           causal checks on the way (qp_peers, host_qps, sent_requests,
//                           group_messages, link_send_wrs, attach_retransmissions,
//                           link_send_completions, received_messages,
//                           link_receive_completions, link_receive_posts)
//   6. check_packet_order,  the last check (no packet arrives before it left), the checks' record
//      checks_record
//   7. build_timeline       every event, departure and arrival in time order
// Times are ns since the epoch: on a host's own clock until place_clocks, then on the
// reference's (aligned), and in the output's records from t0.
#pragma once

#include "merge.hpp"
#include "timeline.hpp"

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rdmalab::trace_merge::passes {

// Times are ns since the epoch, at most this (2065): two such times, a clock offset between
// them and a difference from the earliest all stay within int64 (a file's times are peer input).
inline constexpr std::int64_t kLatestNs = 3'000'000'000'000'000'000;

// "1764000000.123456000" → ns since the epoch, exactly (no doubles); InputError naming source.
std::int64_t parse_epoch(const std::string& text, const std::string& source);

// ---- 1. The captures.

struct Capture {                 // one packet as one host's capture saw it
    const wire::Packet* packet;  // in its HostInput
    std::int64_t t;              // on that host's clock
    bool used = false;           // pair_packets: paired with the receiver's copy
};

// "SRC>DST:QPN:PSN:OPCODE": the same packet in every capture that saw it (and its
// retransmissions: the same key).
std::string packet_key(const wire::Packet& p);

struct Captures {
    std::map<std::string, std::size_t> host_of_address;  // a RoCE address → its host
    // By packet key: the copies a host's capture saw it send (src is the host's address) and
    // receive (dst is), each host's in its capture's order, hosts in order.
    std::map<std::string, std::vector<Capture>> sent, received;
};

// The captures point into hosts, which must outlive them.
Captures index_captures(const std::vector<HostInput>& hosts);

// ---- 2. The clocks.

inline constexpr std::int64_t kNoTransit = std::numeric_limits<std::int64_t>::max();
// [a][b]: the smallest rx_b − tx_a over packets a → b seen exactly once on each side (no
// retransmission to confuse them), each time on its own host's clock; kNoTransit where none.
using Transits = std::vector<std::vector<std::int64_t>>;
Transits smallest_transits(const Captures& captures, std::size_t hosts);

struct Clocks {
    std::vector<std::int64_t> offset;  // each host's clock minus the reference's
    std::vector<std::size_t> placed;   // the hosts on the reference clock, in the order placed
    // A time on host h's clock, on the reference's.
    std::int64_t aligned(std::size_t h, std::int64_t t) const { return t - offset[h]; }
};

// For packets A→B, rx_B − tx_A = delay + θ (θ: B's clock minus A's); for B→A, rx_A − tx_B =
// delay − θ. With the smallest delay alike both ways, θ = (min(rx_B − tx_A) − min(rx_A −
// tx_B)) / 2 — the NTP estimate. A host that never talks to the reference (a ring of four: rank
// 0 and rank 2) is placed through one that does: offsets add up along the pairs that exchanged
// packets both ways. A host no such pair reaches keeps offset 0 and is not placed.
Clocks place_clocks(const Transits& transits);

// The output's "clock": the reference, the method, each other host's offset, the unplaced.
ClockRecord clock_record(const std::vector<HostInput>& hosts, const Clocks& clocks);

// ---- 3. The packets.

struct MergedPacket {
    const wire::Packet* record;           // the sender's copy where there is one
    std::optional<std::int64_t> tx, rx;   // on the reference clock
    std::optional<std::size_t> from, to;  // hosts (none: an address no host has)
};

// Each receiver's copy paired with the latest unpaired copy sent before it arrived (a lost copy
// stays unpaired, its retransmission pairs), the rest alone; in time order (tx, else rx).
std::vector<MergedPacket> pair_packets(const Captures& captures, const Clocks& clocks);

// ---- 4. The events, t0 and the output's records.

struct AlignedEvent {
    trace::Event fields;  // as the host's --trace file has it
    std::size_t host;
    std::int64_t t;  // on the reference clock
};

// Every host's events on the reference clock, in time order (a host's at one instant in its
// file's order, hosts in order).
std::vector<AlignedEvent> align_events(const std::vector<HostInput>& hosts, const Clocks& clocks);

// The earliest time of all, every other one counted from it (int64 max when there is none).
std::int64_t earliest(const std::vector<AlignedEvent>& events,
                      const std::vector<MergedPacket>& packets);

// The output's packets (the packet record, with id, from, to, tx_ns, rx_ns and lost) and events
// (the event with its id, the merge's name for its host and t_ns), times from t0.
std::vector<PacketRecord> packet_records(const std::vector<HostInput>& hosts,
                                         const std::vector<MergedPacket>& packets, std::int64_t t0);
std::vector<EventRecord> event_records(const std::vector<HostInput>& hosts,
                                       const std::vector<AlignedEvent>& events, std::int64_t t0);

// ---- 5. WRs ↔ packets, per host and QP, and the causal checks.

struct CausalChecks {  // each check's violations (one line each) and how many it checked
    std::vector<std::string> order, post, completion, receive;
    std::size_t pairs = 0, posts = 0, completions = 0, receives = 0;
};

// What the linking passes read (packets, events: by id) and write (the records' links, the
// checks).
struct Links {
    std::vector<MergedPacket> packets;
    std::vector<AlignedEvent> events;
    std::vector<PacketRecord> packet_records;  // the output's, ids as above
    std::vector<EventRecord> event_records;
    CausalChecks checks;
};

// The host at the other end of each of host's QPs: whoever sent packets to it. QP numbers are
// per host, so with three hosts or more two peers can own the same number; what this host sent
// is matched to the peer its QP is connected to. UD (packets from several hosts): kSeveralPeers,
// no filter.
inline constexpr std::size_t kSeveralPeers = std::numeric_limits<std::size_t>::max();
using QpPeers = std::map<std::uint32_t, std::size_t>;  // local QP → its peer host
QpPeers qp_peers(const std::vector<MergedPacket>& packets, std::size_t host);
// Whether p (sent from local QP qp's host) goes to qp's peer, or qp has no single peer.
bool goes_to_peer(const QpPeers& peers, std::uint32_t qp, const MergedPacket& p);

struct HostQps {  // one host's events by local QP (event ids, in time order)
    std::map<std::uint32_t, std::vector<std::size_t>> posts;  // post_send with qp_num, dest_qp
    std::map<std::uint32_t, std::uint32_t> dest_of;           // the QP its sends go to
    std::map<std::uint32_t, std::vector<std::size_t>> recv_posts, recv_done, send_done;
    std::map<std::uint32_t, std::vector<std::int64_t>> rts_at;  // its moves to RTS (times)
};
HostQps host_qps(const Links& links, std::size_t host);

// A request message: its packets (ids), the first's opcode and PSN, the last's PSN.
struct Message {
    std::vector<std::size_t> packets;
    int first_opcode = 0;
    std::int64_t first_psn = 0, last_psn = 0;
    std::int64_t until = std::numeric_limits<std::int64_t>::max();  // its QP's next move to RTS
};

// The requests one QP sent, each PSN's first captured copy, in PSN order within each span
// between its moves to RTS (a QP reset and brought up again starts a new PSN). PSN order, not
// time order: a packet lost before the sender's capture saw it (netem drops it on the way out)
// first appears as its retransmission, after later PSNs.
struct Span {
    std::map<std::int64_t, std::size_t> packets;  // PSN relative to the span's base → packet
    std::int64_t until;                           // the next move to RTS, or int64 max
};
struct SentRequests {
    std::vector<Span> spans;
    bool unacknowledged = false;  // UD, UC: no ACK completes a send
};
// host's QP qp, whose packets carry dest; rts_at: qp's moves to RTS.
SentRequests sent_requests(const std::vector<MergedPacket>& packets, std::size_t host,
                           std::uint32_t qp, std::uint32_t dest,
                           const std::vector<std::int64_t>& rts_at, const QpPeers& peers);
// The spans' packets grouped into messages (a message-starting opcode begins one).
std::vector<Message> group_messages(const std::vector<MergedPacket>& packets,
                                    const std::vector<Span>& spans);

// A READ's responses (PSNs from the request's, one per path-MTU packet) to the post, the
// message's last PSN moved to the last response's.
void attach_read_responses(Links& links, std::size_t host, std::uint32_t qp, EventRecord& post,
                           Message& message);
// What completes a message: the first ACK for its last PSN (or the READ's last response, an
// atomic's acknowledge) host received on qp after sending it, before qp's next move to RTS.
std::optional<std::size_t> completing_ack(const std::vector<MergedPacket>& packets,
                                          std::size_t host, std::uint32_t qp,
                                          const Message& message, bool read);
// The check that post_id was posted before its message's first packet left.
void check_posted_before_sent(Links& links, const std::string& host_name, std::size_t post_id,
                              const Message& message);

// The messages belong to the QP's send WRs (post_ids) in posting order (a QP executes its send
// queue in order), until one does not fit its WR's opcode: each WR gets its packets (READ
// responses too) and the ACK that completes it, each packet its WR. UD, UC (unacknowledged): a
// message lost before the capture leaves no trace, so they pair up only when every one is
// there. The result: which WR (event id) owns each PSN sent.
std::map<std::int64_t, std::size_t> link_send_wrs(Links& links, const std::string& host_name,
                                                  std::size_t host, std::uint32_t qp,
                                                  const std::vector<std::size_t>& post_ids,
                                                  std::vector<Message> messages,
                                                  bool unacknowledged);
// A retransmission belongs to the WR that owns its PSN.
void attach_retransmissions(Links& links, std::size_t host, std::uint32_t qp, std::uint32_t dest,
                            const QpPeers& peers,
                            const std::map<std::int64_t, std::size_t>& wr_of_psn);
// Send completions: each names its WR by wr_id; the first such WR not yet completed. A
// successful one on an acknowledged QP is checked against the ACK that completed its WR.
void link_send_completions(Links& links, const std::string& host_name,
                           const std::vector<std::size_t>& done_ids,
                           const std::vector<std::size_t>& post_ids, bool unacknowledged);

// The messages that arrived for host's QP qp, first transmissions only, in arrival order.
std::vector<Message> received_messages(const std::vector<MergedPacket>& packets, std::size_t host,
                                       std::uint32_t qp);
// Messages that consume a receive WR complete the QP's receive completions (done_ids) in
// order (RC completes them in that order), each checked against its message's last packet.
void link_receive_completions(Links& links, const std::string& host_name,
                              const std::vector<Message>& messages,
                              const std::vector<std::size_t>& done_ids);
// Each receive completion ↔ the first post_recv of its wr_id not yet completed.
void link_receive_posts(Links& links, const std::vector<std::size_t>& done_ids,
                        const std::vector<std::size_t>& post_ids);

// All of the above for one host (hosts[host], named host_name).
void link_host(Links& links, const std::string& host_name, std::size_t host);

// ---- 6. The checks.

// Every packet seen leaving and arriving arrived after it left.
void check_packet_order(Links& links);
// The output's "checks": one entry per check, with its violations.
std::vector<CheckRecord> checks_record(const CausalChecks& checks);

// ---- 7. The timeline.

// Every event and every packet's departure and arrival, in time order (at one instant: a post,
// then departures, then arrivals, then the rest): {t_ns, kind (event, send, arrive), index}.
std::vector<TimelineEntry> build_timeline(const std::vector<EventRecord>& event_records,
                                          const std::vector<PacketRecord>& packet_records);

}  // namespace rdmalab::trace_merge::passes
