// The merge's passes: see merge_passes.hpp.
#include "merge_passes.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <set>

namespace rdmalab::trace_merge::passes {

namespace {

// A capture's timestamps have microsecond resolution (pcap), truncated: a packet can look up to
// 1 µs older than it is. The one check that this could trip (a post before its first packet)
// allows that much.
constexpr std::int64_t kCaptureResolutionNs = 1000;

// BTH opcodes (RC; the low five bits for UC/UD too).
enum Opcode : int {
    kSendFirst = 0,
    kSendMiddle = 1,
    kSendLast = 2,
    kSendLastImm = 3,
    kSendOnly = 4,
    kSendOnlyImm = 5,
    kWriteFirst = 6,
    kWriteMiddle = 7,
    kWriteLast = 8,
    kWriteLastImm = 9,
    kWriteOnly = 10,
    kWriteOnlyImm = 11,
    kReadRequest = 12,
    kReadResponseFirst = 13,
    kReadResponseMiddle = 14,
    kReadResponseLast = 15,
    kReadResponseOnly = 16,
    kAcknowledge = 17,
    kAtomicAcknowledge = 18,
    kCompareSwap = 19,
    kFetchAdd = 20,
    kSendLastInv = 22,
    kSendOnlyInv = 23,
};

bool is_response(int op) {
    op %= 32;
    return op >= kReadResponseFirst && op <= kAtomicAcknowledge;
}
bool starts_message(int op) {
    op %= 32;
    return op == kSendFirst || op == kSendOnly || op == kSendOnlyImm || op == kWriteFirst ||
           op == kWriteOnly || op == kWriteOnlyImm || op == kReadRequest || op == kCompareSwap ||
           op == kFetchAdd || op == kSendOnlyInv;
}
bool ends_message(int op) {
    op %= 32;
    return op == kSendLast || op == kSendLastImm || op == kSendOnly || op == kSendOnlyImm ||
           op == kWriteLast || op == kWriteLastImm || op == kWriteOnly || op == kWriteOnlyImm ||
           op == kReadRequest || op == kCompareSwap || op == kFetchAdd || op == kSendLastInv ||
           op == kSendOnlyInv;
}
// A message that consumes a receive WR at its target.
bool consumes_receive(int op) {
    op %= 32;
    return op <= kSendOnlyImm || op == kWriteLastImm || op == kWriteOnlyImm || op == kSendLastInv ||
           op == kSendOnlyInv;
}

bool opcode_fits(const std::string& wr_opcode, int first) {
    first %= 32;
    if (wr_opcode == "RDMA_WRITE") return first == kWriteFirst || first == kWriteOnly;
    if (wr_opcode == "RDMA_WRITE_WITH_IMM") return first == kWriteFirst || first == kWriteOnlyImm;
    if (wr_opcode == "SEND" || wr_opcode == "SEND_WITH_IMM" || wr_opcode == "SEND_WITH_INV")
        return first <= kSendOnlyImm || first == kSendOnlyInv;
    if (wr_opcode == "RDMA_READ") return first == kReadRequest;
    if (wr_opcode == "ATOMIC_CMP_AND_SWP") return first == kCompareSwap;
    if (wr_opcode == "ATOMIC_FETCH_AND_ADD") return first == kFetchAdd;
    return false;
}

std::uint32_t qpn_of(const MergedPacket& p) {
    return p.record->qpn;
}
int opcode_of(const MergedPacket& p) {
    return int{p.record->opcode};
}
std::int64_t psn_of(const MergedPacket& p) {
    return std::int64_t{p.record->psn};
}

// A WR's id in a message: its number, or null where the line had none.
std::string wr_id_text(const trace::Event& event) {
    return event.wr_id ? std::to_string(*event.wr_id) : "null";
}

// The copies of one packet key into packets: each received copy with the latest unpaired copy
// sent before it arrived, then the sent copies left unpaired.
void pair_copies(std::vector<Capture> txs, const std::vector<Capture>& rxs,
                 const Captures& captures, const Clocks& clocks,
                 std::vector<MergedPacket>& packets) {
    const wire::Packet& any = txs.empty() ? *rxs[0].packet : *txs[0].packet;
    auto src = captures.host_of_address.find(any.src), dst = captures.host_of_address.find(any.dst);
    std::optional<std::size_t> from, to;
    if (src != captures.host_of_address.end()) from = src->second;
    if (dst != captures.host_of_address.end()) to = dst->second;
    for (const auto& rx : rxs) {
        const std::int64_t at = clocks.aligned(*to, rx.t);
        Capture* best = nullptr;
        for (auto& tx : txs)
            if (!tx.used && clocks.aligned(*from, tx.t) <= at + kCaptureResolutionNs &&
                (best == nullptr || tx.t > best->t))
                best = &tx;
        if (best == nullptr) {
            packets.push_back({rx.packet, std::nullopt, at, from, to});
            continue;
        }
        best->used = true;
        packets.push_back({best->packet, clocks.aligned(*from, best->t), at, from, to});
    }
    for (auto& tx : txs)
        if (!tx.used)
            packets.push_back({tx.packet, clocks.aligned(*from, tx.t), std::nullopt, from, to});
}

}  // namespace

std::int64_t parse_epoch(const std::string& text, const std::string& source) {
    const auto dot = text.find('.');
    const std::string seconds = text.substr(0, dot);
    std::string fraction = dot == std::string::npos ? "" : text.substr(dot + 1);
    auto digits = [](const std::string& s) {
        return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (seconds.empty() || seconds.size() > 11 || !digits(seconds) || !digits(fraction))
        throw InputError(fmt::format("{}: time_epoch '{}' is not seconds.fraction", source, text));
    fraction = (fraction + "000000000").substr(0, 9);
    // kLatestNs: see there.
    const long long whole = std::stoll(seconds);
    if (whole > kLatestNs / 1'000'000'000)
        throw InputError(fmt::format("{}: time_epoch '{}' is out of range", source, text));
    return whole * 1'000'000'000 + std::stoll(fraction);
}

std::string packet_key(const wire::Packet& p) {
    return fmt::format("{}>{}:{}:{}:{}", p.src, p.dst, p.qpn, p.psn, p.opcode);
}

Captures index_captures(const std::vector<HostInput>& hosts) {
    Captures captures;
    for (std::size_t h = 0; h < hosts.size(); ++h) captures.host_of_address[hosts[h].address] = h;
    for (std::size_t h = 0; h < hosts.size(); ++h)
        for (const auto& p : hosts[h].packets) {
            const std::int64_t t = parse_epoch(p.time_epoch, hosts[h].name);
            if (p.src == hosts[h].address) captures.sent[packet_key(p)].push_back({&p, t});
            if (p.dst == hosts[h].address) captures.received[packet_key(p)].push_back({&p, t});
        }
    return captures;
}

Transits smallest_transits(const Captures& captures, std::size_t hosts) {
    Transits transit(hosts, std::vector<std::int64_t>(hosts, kNoTransit));
    for (const auto& [key, txs] : captures.sent) {
        auto rx = captures.received.find(key);
        if (txs.size() != 1 || rx == captures.received.end() || rx->second.size() != 1) continue;
        const wire::Packet& p = *txs[0].packet;
        const auto src = captures.host_of_address.find(p.src);
        const auto dst = captures.host_of_address.find(p.dst);
        if (src == captures.host_of_address.end() || dst == captures.host_of_address.end())
            continue;
        auto& smallest = transit[src->second][dst->second];
        smallest = std::min(smallest, rx->second[0].t - txs[0].t);
    }
    return transit;
}

Clocks place_clocks(const Transits& transit) {
    const std::size_t n = transit.size();
    Clocks clocks{std::vector<std::int64_t>(n, 0), {0}};
    std::vector<std::size_t>& placed = clocks.placed;
    for (std::size_t next = 0; next < placed.size(); ++next) {
        const std::size_t a = placed[next];
        for (std::size_t b = 0; b < n; ++b) {
            if (std::find(placed.begin(), placed.end(), b) != placed.end() ||
                transit[a][b] == kNoTransit || transit[b][a] == kNoTransit)
                continue;
            clocks.offset[b] = clocks.offset[a] + (transit[a][b] - transit[b][a]) / 2;
            placed.push_back(b);
        }
    }
    return clocks;
}

ClockRecord clock_record(const std::vector<HostInput>& hosts, const Clocks& clocks) {
    ClockRecord clock{.reference = hosts[0].name,
                      .method =
                          "each host's events and packets share its CLOCK_REALTIME (capture inside "
                          "the guest); other hosts are shifted onto the reference by the NTP "
                          "estimate from the packets seen both ways between them and a host "
                          "already placed (half the difference of the smallest one-way transit "
                          "times)",
                      .offsets_ns = {},
                      .unaligned = std::vector<std::string>{}};
    for (std::size_t b = 1; b < hosts.size(); ++b) {
        clock.offsets_ns[hosts[b].name] = clocks.offset[b];
        if (std::find(clocks.placed.begin(), clocks.placed.end(), b) == clocks.placed.end())
            clock.unaligned->push_back(hosts[b].name);
    }
    return clock;
}

std::vector<MergedPacket> pair_packets(const Captures& captures, const Clocks& clocks) {
    std::set<std::string> keys;
    for (const auto& [k, v] : captures.sent) keys.insert(k);
    for (const auto& [k, v] : captures.received) keys.insert(k);
    auto copies = [](const std::map<std::string, std::vector<Capture>>& by_key,
                     const std::string& key) {
        const auto found = by_key.find(key);
        return found == by_key.end() ? std::vector<Capture>{} : found->second;
    };
    std::vector<MergedPacket> packets;
    for (const std::string& key : keys)
        pair_copies(copies(captures.sent, key), copies(captures.received, key), captures, clocks,
                    packets);
    std::sort(packets.begin(), packets.end(), [](const MergedPacket& a, const MergedPacket& b) {
        return a.tx.value_or(a.rx.value_or(0)) < b.tx.value_or(b.rx.value_or(0));
    });
    return packets;
}

std::vector<AlignedEvent> align_events(const std::vector<HostInput>& hosts, const Clocks& clocks) {
    std::vector<AlignedEvent> events;
    for (std::size_t h = 0; h < hosts.size(); ++h)
        for (const auto& e : hosts[h].events) events.push_back({e, h, clocks.aligned(h, e.t_ns)});
    std::stable_sort(events.begin(), events.end(),
                     [](const AlignedEvent& a, const AlignedEvent& b) { return a.t < b.t; });
    return events;
}

std::int64_t earliest(const std::vector<AlignedEvent>& events,
                      const std::vector<MergedPacket>& packets) {
    std::int64_t t0 = std::numeric_limits<std::int64_t>::max();
    for (const auto& e : events) t0 = std::min(t0, e.t);
    for (const auto& p : packets) t0 = std::min(t0, p.tx.value_or(p.rx.value_or(t0)));
    return t0;
}

std::vector<PacketRecord> packet_records(const std::vector<HostInput>& hosts,
                                         const std::vector<MergedPacket>& packets,
                                         std::int64_t t0) {
    std::vector<PacketRecord> records;
    for (std::size_t i = 0; i < packets.size(); ++i) {
        const MergedPacket& p = packets[i];
        PacketRecord record{.packet = *p.record, .id = i};
        record.from = p.from ? hosts[*p.from].name : p.record->src;
        record.to = p.to ? hosts[*p.to].name : p.record->dst;
        if (p.tx) record.tx_ns = *p.tx - t0;
        if (p.rx) record.rx_ns = *p.rx - t0;
        record.lost = p.tx && !p.rx && p.to.has_value();
        records.push_back(std::move(record));
    }
    return records;
}

std::vector<EventRecord> event_records(const std::vector<HostInput>& hosts,
                                       const std::vector<AlignedEvent>& events, std::int64_t t0) {
    std::vector<EventRecord> records;
    for (std::size_t i = 0; i < events.size(); ++i) {
        EventRecord record{.fields = events[i].fields, .id = i};
        record.fields.host = hosts[events[i].host].name;
        record.fields.t_ns = events[i].t - t0;
        records.push_back(std::move(record));
    }
    return records;
}

QpPeers qp_peers(const std::vector<MergedPacket>& packets, std::size_t host) {
    QpPeers peer_of;
    for (const auto& p : packets) {
        if (p.to != host || !p.from) continue;
        auto [at, added] = peer_of.try_emplace(p.record->qpn, *p.from);
        if (!added && at->second != *p.from) at->second = kSeveralPeers;
    }
    return peer_of;
}

bool goes_to_peer(const QpPeers& peers, std::uint32_t qp, const MergedPacket& p) {
    const auto peer = peers.find(qp);
    return peer == peers.end() || peer->second == kSeveralPeers || p.to == peer->second;
}

HostQps host_qps(const Links& links, std::size_t host) {
    HostQps qps;
    for (std::size_t i = 0; i < links.events.size(); ++i) {
        if (links.events[i].host != host) continue;
        const trace::Event& e = links.event_records[i].fields;
        if (!e.qp_num) continue;
        const std::uint32_t qp = *e.qp_num;
        if (e.event == "post_send" && e.dest_qp) {
            qps.posts[qp].push_back(i);
            qps.dest_of[qp] = *e.dest_qp;
        } else if (e.event == "post_recv") {
            qps.recv_posts[qp].push_back(i);
        } else if (e.event == "modify_qp" && e.to == "RTS") {
            qps.rts_at[qp].push_back(links.events[i].t);
        } else if (e.event == "completion") {
            const bool receive = e.opcode == "RECV" || e.opcode == "RECV_RDMA_WITH_IMM";
            (receive ? qps.recv_done : qps.send_done)[qp].push_back(i);
        }
    }
    return qps;
}

SentRequests sent_requests(const std::vector<MergedPacket>& packets, std::size_t host,
                           std::uint32_t qp, std::uint32_t dest,
                           const std::vector<std::int64_t>& rts_at, const QpPeers& peers) {
    SentRequests sent;
    std::vector<std::int64_t> span_base;
    std::size_t span_of_last = SIZE_MAX;
    for (std::size_t i = 0; i < packets.size(); ++i) {
        const MergedPacket& p = packets[i];
        if (p.from != host || qpn_of(p) != dest || is_response(opcode_of(p)) || !p.tx ||
            !goes_to_peer(peers, qp, p))
            continue;
        const std::string transport = p.record->transport();
        sent.unacknowledged = sent.unacknowledged || transport == "UD" || transport == "UC";
        const std::size_t span = static_cast<std::size_t>(
            std::upper_bound(rts_at.begin(), rts_at.end(), *p.tx) - rts_at.begin());
        if (span != span_of_last && (sent.spans.empty() || span > span_of_last)) {
            // PSNs are 24 bits and may wrap: ordered relative to half the space below the
            // span's first one.
            span_base.push_back(psn_of(p) - (1 << 23));
            sent.spans.push_back(
                {{},
                 span < rts_at.size() ? rts_at[span] : std::numeric_limits<std::int64_t>::max()});
            span_of_last = span;
        }
        const std::int64_t relative = (psn_of(p) - span_base.back()) & 0xffffff;
        sent.spans.back().packets.emplace(relative, i);  // the earliest copy stays
    }
    return sent;
}

std::vector<Message> group_messages(const std::vector<MergedPacket>& packets,
                                    const std::vector<Span>& spans) {
    std::vector<Message> messages;
    for (const Span& span : spans)
        for (const auto& [relative, i] : span.packets) {
            const MergedPacket& p = packets[i];
            if (starts_message(opcode_of(p)) || messages.empty())
                messages.push_back({{}, opcode_of(p), psn_of(p), psn_of(p), span.until});
            messages.back().packets.push_back(i);
            messages.back().last_psn = psn_of(p);
        }
    return messages;
}

void attach_read_responses(Links& links, std::size_t host, std::uint32_t qp, EventRecord& post,
                           Message& message) {
    std::int64_t last = message.first_psn;
    for (std::size_t i = 0; i < links.packets.size(); ++i) {
        const MergedPacket& p = links.packets[i];
        const int op = opcode_of(p) % 32;
        if (p.to != host || qpn_of(p) != qp || op < kReadResponseFirst || op > kReadResponseOnly ||
            psn_of(p) < message.first_psn ||
            ((op == kReadResponseFirst || op == kReadResponseOnly) &&
             psn_of(p) != message.first_psn))
            continue;
        if (psn_of(p) > last + 64 * 1024) continue;
        links.packet_records[i].wr = post.id;
        if (!post.packets) post.packets.emplace();
        post.packets->push_back(i);
        if (op == kReadResponseLast || op == kReadResponseOnly) {
            message.last_psn = psn_of(p);
            break;
        }
        last = psn_of(p);
    }
}

std::optional<std::size_t> completing_ack(const std::vector<MergedPacket>& packets,
                                          std::size_t host, std::uint32_t qp,
                                          const Message& message, bool read) {
    const std::int64_t sent_at = packets[message.packets.back()].tx.value_or(0);
    for (std::size_t i = 0; i < packets.size(); ++i) {
        const MergedPacket& p = packets[i];
        if (p.to != host || qpn_of(p) != qp || !p.rx || *p.rx < sent_at || *p.rx >= message.until)
            continue;
        const int op = opcode_of(p) % 32;
        const bool positive = !p.record->aeth || p.record->aeth->syndrome < 32;
        if (!positive || psn_of(p) < message.last_psn) continue;
        if (op == kAcknowledge || op == kAtomicAcknowledge ||
            (read && (op == kReadResponseLast || op == kReadResponseOnly)))
            return i;
    }
    return std::nullopt;
}

void check_posted_before_sent(Links& links, const std::string& host_name, std::size_t post_id,
                              const Message& message) {
    ++links.checks.posts;
    const trace::Event& post = links.event_records[post_id].fields;
    const std::int64_t posted = links.events[post_id].t;
    const std::int64_t first_tx = *links.packets[message.packets.front()].tx;
    if (posted > first_tx + kCaptureResolutionNs)
        links.checks.post.push_back(fmt::format(
            "{}: WR {} ({}) posted {} ns after its first packet (PSN {}) left", host_name,
            wr_id_text(post), post.opcode.value_or(""), posted - first_tx, message.first_psn));
}

std::map<std::int64_t, std::size_t> link_send_wrs(Links& links, const std::string& host_name,
                                                  std::size_t host, std::uint32_t qp,
                                                  const std::vector<std::size_t>& post_ids,
                                                  std::vector<Message> messages,
                                                  bool unacknowledged) {
    std::map<std::int64_t, std::size_t> wr_of_psn;
    if (unacknowledged && messages.size() != post_ids.size()) messages.clear();
    for (std::size_t m = 0; m < messages.size() && m < post_ids.size(); ++m) {
        EventRecord& post = links.event_records[post_ids[m]];
        if (!opcode_fits(post.fields.opcode.value_or(""), messages[m].first_opcode)) break;
        for (std::size_t p : messages[m].packets) links.packet_records[p].wr = post.id;
        post.packets = messages[m].packets;
        // Its packets' PSNs (First..Last, consecutive in a well-formed capture; a loop over the
        // range would trust the file's numbers for its length).
        for (std::size_t p : messages[m].packets) wr_of_psn[psn_of(links.packets[p])] = post_ids[m];
        const bool read = post.fields.opcode == "RDMA_READ";
        if (read && post.fields.length) attach_read_responses(links, host, qp, post, messages[m]);
        if (const auto ack = completing_ack(links.packets, host, qp, messages[m], read)) {
            post.acked_by = *ack;
            PacketRecord& ack_record = links.packet_records[*ack];
            if (!ack_record.acks) ack_record.acks.emplace();
            ack_record.acks->push_back(post.id);
        }
        check_posted_before_sent(links, host_name, post_ids[m], messages[m]);
    }
    return wr_of_psn;
}

void attach_retransmissions(Links& links, std::size_t host, std::uint32_t qp, std::uint32_t dest,
                            const QpPeers& peers,
                            const std::map<std::int64_t, std::size_t>& wr_of_psn) {
    for (std::size_t i = 0; i < links.packets.size(); ++i) {
        const MergedPacket& p = links.packets[i];
        if (p.from == host && qpn_of(p) == dest && p.record->sent_again &&
            goes_to_peer(peers, qp, p)) {
            auto owner = wr_of_psn.find(psn_of(p));
            if (owner != wr_of_psn.end()) links.packet_records[i].wr = owner->second;
        }
    }
}

void link_send_completions(Links& links, const std::string& host_name,
                           const std::vector<std::size_t>& done_ids,
                           const std::vector<std::size_t>& post_ids, bool unacknowledged) {
    for (std::size_t c : done_ids) {
        EventRecord& done = links.event_records[c];
        const bool ok = done.fields.ok.value_or(false);
        for (std::size_t p : post_ids) {
            EventRecord& post = links.event_records[p];
            if (post.completion || post.fields.wr_id != done.fields.wr_id) continue;
            // An unsignaled WR completes only if it fails (and a wr_id may repeat).
            if (ok && !post.fields.signaled.value_or(true)) continue;
            post.completion = c;
            done.wr = p;
            // A failed WR has no ACK; a UD or UC send completes once sent.
            if (!ok || unacknowledged) break;
            ++links.checks.completions;
            if (!post.acked_by) {
                links.checks.completion.push_back(
                    fmt::format("{}: completion of WR {} with no ACK for it in the capture",
                                host_name, wr_id_text(done.fields)));
            } else {
                const std::size_t a = *post.acked_by;
                done.caused_by = a;
                const MergedPacket& ack = links.packets[a];
                if (links.events[c].t < *ack.rx)
                    links.checks.completion.push_back(fmt::format(
                        "{}: WR {} completed {} ns before the ACK (PSN {}) arrived", host_name,
                        wr_id_text(done.fields), *ack.rx - links.events[c].t, psn_of(ack)));
            }
            break;
        }
    }
}

std::vector<Message> received_messages(const std::vector<MergedPacket>& packets, std::size_t host,
                                       std::uint32_t qp) {
    std::vector<Message> messages;
    for (std::size_t i = 0; i < packets.size(); ++i) {
        const MergedPacket& p = packets[i];
        if (p.to != host || qpn_of(p) != qp || is_response(opcode_of(p)) || !p.rx ||
            p.record->sent_again)
            continue;
        if (starts_message(opcode_of(p)) || messages.empty())
            messages.push_back({{}, opcode_of(p), psn_of(p), psn_of(p)});
        messages.back().packets.push_back(i);
        messages.back().first_opcode = opcode_of(p);  // the last one decides
    }
    return messages;
}

void link_receive_completions(Links& links, const std::string& host_name,
                              const std::vector<Message>& messages,
                              const std::vector<std::size_t>& done_ids) {
    std::size_t next = 0;
    for (std::size_t c : done_ids) {
        while (next < messages.size() && !(consumes_receive(messages[next].first_opcode) &&
                                           ends_message(messages[next].first_opcode)))
            ++next;
        if (next == messages.size()) break;
        const std::size_t last = messages[next].packets.back();
        links.event_records[c].caused_by = last;
        links.packet_records[last].received_by = c;
        ++links.checks.receives;
        const MergedPacket& arrived = links.packets[last];
        if (links.events[c].t < *arrived.rx)
            links.checks.receive.push_back(fmt::format(
                "{}: receive completion {} ns before its message's last packet (PSN {}) arrived",
                host_name, *arrived.rx - links.events[c].t, psn_of(arrived)));
        ++next;
    }
}

void link_receive_posts(Links& links, const std::vector<std::size_t>& done_ids,
                        const std::vector<std::size_t>& post_ids) {
    for (std::size_t c : done_ids)
        for (std::size_t p : post_ids) {
            EventRecord& post = links.event_records[p];
            if (post.completion || post.fields.wr_id != links.event_records[c].fields.wr_id)
                continue;
            post.completion = c;
            links.event_records[c].wr = p;
            break;
        }
}

void link_host(Links& links, const std::string& host_name, std::size_t host) {
    const QpPeers peers = qp_peers(links.packets, host);
    const HostQps qps = host_qps(links, host);
    auto ids = [](const auto& by_qp, std::uint32_t qp) {
        const auto found = by_qp.find(qp);
        return found == by_qp.end() ? std::vector<std::size_t>{} : found->second;
    };
    for (const auto& [qp, post_ids] : qps.posts) {
        const std::uint32_t dest = qps.dest_of.at(qp);
        const auto rts = qps.rts_at.find(qp);
        const SentRequests sent = sent_requests(
            links.packets, host, qp, dest,
            rts == qps.rts_at.end() ? std::vector<std::int64_t>{} : rts->second, peers);
        const auto wr_of_psn =
            link_send_wrs(links, host_name, host, qp, post_ids,
                          group_messages(links.packets, sent.spans), sent.unacknowledged);
        attach_retransmissions(links, host, qp, dest, peers, wr_of_psn);
        link_send_completions(links, host_name, ids(qps.send_done, qp), post_ids,
                              sent.unacknowledged);
    }
    for (const auto& [qp, done_ids] : qps.recv_done) {
        link_receive_completions(links, host_name, received_messages(links.packets, host, qp),
                                 done_ids);
        link_receive_posts(links, done_ids, ids(qps.recv_posts, qp));
    }
}

void check_packet_order(Links& links) {
    for (const auto& p : links.packets)
        if (p.tx && p.rx) {
            ++links.checks.pairs;
            if (*p.rx < *p.tx)
                links.checks.order.push_back(fmt::format(
                    "{} → {} {} PSN {} arrived {} ns before it was sent", p.record->src,
                    p.record->dst, p.record->opcode_name(), p.record->psn, *p.tx - *p.rx));
        }
}

std::vector<CheckRecord> checks_record(const CausalChecks& checks) {
    std::vector<CheckRecord> record;
    auto check = [&](const char* name, std::size_t checked, const std::vector<std::string>& bad) {
        record.push_back({name, checked, bad.empty(), bad});
    };
    check("every packet arrives after it was sent", checks.pairs, checks.order);
    check("every WR is posted before its first packet leaves", checks.posts, checks.post);
    check("every send completion follows the ACK that produced it", checks.completions,
          checks.completion);
    check("every receive completion follows its message's last packet", checks.receives,
          checks.receive);
    return record;
}

std::vector<TimelineEntry> build_timeline(const std::vector<EventRecord>& event_records,
                                          const std::vector<PacketRecord>& packet_records) {
    struct Step {
        std::int64_t t;
        int rank;
        const char* kind;
        std::size_t index;
    };
    std::vector<Step> steps;
    for (std::size_t i = 0; i < event_records.size(); ++i)
        steps.push_back({event_records[i].fields.t_ns,
                         event_records[i].fields.event == "post_send" ? 0 : 3, "event", i});
    for (std::size_t i = 0; i < packet_records.size(); ++i) {
        if (packet_records[i].tx_ns) steps.push_back({*packet_records[i].tx_ns, 1, "send", i});
        if (packet_records[i].rx_ns) steps.push_back({*packet_records[i].rx_ns, 2, "arrive", i});
    }
    std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) {
        return a.t != b.t ? a.t < b.t : a.rank < b.rank;
    });
    std::vector<TimelineEntry> timeline;
    for (const auto& s : steps) timeline.push_back({s.t, s.kind, s.index});
    return timeline;
}

}  // namespace rdmalab::trace_merge::passes
