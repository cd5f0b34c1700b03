// Merging program events and packets into one timeline: see merge.hpp.
#include "merge.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

namespace rdmalab::trace_merge {

using nlohmann::json;

namespace {

// A capture's timestamps have microsecond resolution (pcap), truncated: a packet can look up to
// 1 µs older than it is. The one check that this could trip (a post before its first packet)
// allows that much.
constexpr std::int64_t kCaptureResolutionNs = 1000;
// Times are ns since the epoch, at most this (2065): two such times, a clock offset between
// them and a difference from the earliest all stay within int64 (a file's times are peer input).
constexpr std::int64_t kLatestNs = 3'000'000'000'000'000'000;

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

// "1764000000.123456000" → ns since the epoch, exactly (no doubles).
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
    if (t_ns < 0 || t_ns > kLatestNs) bad("t_ns", "ns since the epoch, before 2065");
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
        for (const auto& p : packets) parse_epoch(p.time_epoch, source);  // refused here, not later
        return packets;
    } catch (const wire::InputError& e) {
        throw InputError(e.what());
    }
}

namespace {

struct Capture {  // one packet as one host's capture saw it
    const wire::Packet* packet;
    std::int64_t t;  // on that host's clock
    bool used = false;
};

struct Message {  // a request message: its packets (indices into the merged packets)
    std::vector<std::size_t> packets;
    int first_opcode = 0;
    std::int64_t first_psn = 0, last_psn = 0;
    std::int64_t until = std::numeric_limits<std::int64_t>::max();  // its QP's next move to RTS
};

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

}  // namespace

json merge(const std::vector<HostInput>& hosts, const json& meta) {
    if (hosts.empty()) throw InputError("no hosts to merge");
    std::map<std::string, std::size_t> host_of_address;
    for (std::size_t h = 0; h < hosts.size(); ++h) host_of_address[hosts[h].address] = h;

    // Each host's captures, split into what it sent and what it received.
    std::map<std::string, std::vector<Capture>> sent, received;  // by packet key
    for (std::size_t h = 0; h < hosts.size(); ++h)
        for (const auto& p : hosts[h].packets) {
            const std::int64_t t = parse_epoch(p.time_epoch, hosts[h].name);
            if (p.src == hosts[h].address) sent[packet_key(p)].push_back({&p, t});
            if (p.dst == hosts[h].address) received[packet_key(p)].push_back({&p, t});
        }

    // Clock offsets onto hosts[0]'s clock. For packets A→B, rx_B − tx_A = delay + θ (θ: B's
    // clock minus A's); for B→A, rx_A − tx_B = delay − θ. With the smallest delay alike both
    // ways, θ = (min(rx_B − tx_A) − min(rx_A − tx_B)) / 2 — the NTP estimate. Packets seen
    // exactly once on each side (no retransmission to confuse them) are used. A host that never
    // talks to the reference (a ring of four: rank 0 and rank 2) is placed through one that
    // does: offsets add up along the pairs that exchanged packets both ways.
    const std::size_t n = hosts.size();
    constexpr auto kNone = std::numeric_limits<std::int64_t>::max();
    std::vector<std::vector<std::int64_t>> transit(n, std::vector<std::int64_t>(n, kNone));
    for (const auto& [key, txs] : sent) {
        auto rx = received.find(key);
        if (txs.size() != 1 || rx == received.end() || rx->second.size() != 1) continue;
        const wire::Packet& p = *txs[0].packet;
        const auto src = host_of_address.find(p.src), dst = host_of_address.find(p.dst);
        if (src == host_of_address.end() || dst == host_of_address.end()) continue;
        auto& smallest = transit[src->second][dst->second];
        smallest = std::min(smallest, rx->second[0].t - txs[0].t);
    }
    std::vector<std::int64_t> offset(n, 0);
    std::vector<std::size_t> placed{0};  // hosts on the reference clock, in the order placed
    for (std::size_t next = 0; next < placed.size(); ++next) {
        const std::size_t a = placed[next];
        for (std::size_t b = 0; b < n; ++b) {
            if (std::find(placed.begin(), placed.end(), b) != placed.end() ||
                transit[a][b] == kNone || transit[b][a] == kNone)
                continue;
            offset[b] = offset[a] + (transit[a][b] - transit[b][a]) / 2;
            placed.push_back(b);
        }
    }
    json clock = {{"reference", hosts[0].name},
                  {"method",
                   "each host's events and packets share its CLOCK_REALTIME (capture inside the "
                   "guest); other hosts are shifted onto the reference by the NTP estimate from "
                   "the packets seen both ways between them and a host already placed (half the "
                   "difference of the smallest one-way transit times)"},
                  {"offsets_ns", json::object()},
                  {"unaligned", json::array()}};
    for (std::size_t b = 1; b < n; ++b) {
        clock["offsets_ns"][hosts[b].name] = offset[b];
        if (std::find(placed.begin(), placed.end(), b) == placed.end())
            clock["unaligned"].push_back(hosts[b].name);
    }

    // The packets: each sender's copy paired with the receiver's (the latest unpaired copy sent
    // before it arrived: a lost copy stays unpaired, its retransmission pairs).
    struct Packet {
        const wire::Packet* record;
        std::optional<std::int64_t> tx, rx;  // on the reference clock
        std::optional<std::size_t> from, to;
    };
    std::vector<Packet> packets;
    auto aligned = [&](std::size_t h, std::int64_t t) { return t - offset[h]; };
    std::map<std::string, bool> keys;
    for (const auto& [k, v] : sent) keys[k] = true;
    for (const auto& [k, v] : received) keys[k] = true;
    for (const auto& [key, unused] : keys) {
        auto& txs = sent[key];
        auto& rxs = received[key];
        const wire::Packet& any = txs.empty() ? *rxs[0].packet : *txs[0].packet;
        auto src = host_of_address.find(any.src), dst = host_of_address.find(any.dst);
        std::optional<std::size_t> from, to;
        if (src != host_of_address.end()) from = src->second;
        if (dst != host_of_address.end()) to = dst->second;
        for (auto& rx : rxs) {
            const std::int64_t at = aligned(*to, rx.t);
            Capture* best = nullptr;
            for (auto& tx : txs)
                if (!tx.used && aligned(*from, tx.t) <= at + kCaptureResolutionNs &&
                    (best == nullptr || tx.t > best->t))
                    best = &tx;
            if (best == nullptr) {
                packets.push_back({rx.packet, std::nullopt, at, from, to});
                continue;
            }
            best->used = true;
            packets.push_back({best->packet, aligned(*from, best->t), at, from, to});
        }
        for (auto& tx : txs)
            if (!tx.used)
                packets.push_back({tx.packet, aligned(*from, tx.t), std::nullopt, from, to});
    }
    std::sort(packets.begin(), packets.end(), [](const Packet& a, const Packet& b) {
        return a.tx.value_or(a.rx.value_or(0)) < b.tx.value_or(b.rx.value_or(0));
    });

    // Program events on the reference clock.
    struct Event {
        json fields;
        std::size_t host;
        std::int64_t t;
    };
    std::vector<Event> events;
    for (std::size_t h = 0; h < hosts.size(); ++h)
        for (const auto& e : hosts[h].events)
            events.push_back({e, h, aligned(h, e["t_ns"].get<std::int64_t>())});
    std::stable_sort(events.begin(), events.end(),
                     [](const Event& a, const Event& b) { return a.t < b.t; });

    std::int64_t t0 = std::numeric_limits<std::int64_t>::max();
    for (const auto& e : events) t0 = std::min(t0, e.t);
    for (const auto& p : packets) t0 = std::min(t0, p.tx.value_or(p.rx.value_or(t0)));

    json out_packets = json::array();
    for (std::size_t i = 0; i < packets.size(); ++i) {
        json p = wire::to_json(*packets[i].record);  // the packet record's fields, all of them
        p["id"] = i;
        p["from"] = packets[i].from ? json(hosts[*packets[i].from].name) : json(p["src"]);
        p["to"] = packets[i].to ? json(hosts[*packets[i].to].name) : json(p["dst"]);
        p["tx_ns"] = packets[i].tx ? json(*packets[i].tx - t0) : json();
        p["rx_ns"] = packets[i].rx ? json(*packets[i].rx - t0) : json();
        p["lost"] = packets[i].tx && !packets[i].rx && packets[i].to.has_value();
        out_packets.push_back(std::move(p));
    }
    json out_events = json::array();
    for (std::size_t i = 0; i < events.size(); ++i) {
        json e = events[i].fields;
        e["id"] = i;
        e["host"] = hosts[events[i].host].name;
        e["t_ns"] = events[i].t - t0;
        out_events.push_back(std::move(e));
    }
    auto qpn_of = [&](std::size_t i) { return packets[i].record->qpn; };
    auto opcode_of = [&](std::size_t i) { return int{packets[i].record->opcode}; };
    auto psn_of = [&](std::size_t i) { return std::int64_t{packets[i].record->psn}; };

    // WRs ↔ their packets, per host and QP: the requests a QP sent, first transmissions in PSN
    // order, grouped into messages, belong to its posted send WRs in posting order (a QP executes
    // its send queue in order). A retransmission belongs to the WR that owns its PSN.
    json checks = json::array();
    std::vector<std::string> order_violations, post_violations, completion_violations,
        receive_violations;
    std::size_t posts_checked = 0, completions_checked = 0, receives_checked = 0;
    for (std::size_t h = 0; h < hosts.size(); ++h) {
        // The host at the other end of each of this host's QPs: whoever sent packets to it. QP
        // numbers are per host, so with three hosts or more two peers can own the same number;
        // what this host sent is matched to the peer its QP is connected to. UD (packets from
        // several hosts): no single peer, no filter.
        constexpr std::size_t kSeveral = SIZE_MAX;
        std::map<std::uint32_t, std::size_t> peer_of;
        for (const auto& p : packets) {
            if (p.to != h || !p.from) continue;
            auto [at, added] = peer_of.try_emplace(p.record->qpn, *p.from);
            if (!added && at->second != *p.from) at->second = kSeveral;
        }
        auto goes_to_peer = [&](std::uint32_t qp, const Packet& p) {
            const auto peer = peer_of.find(qp);
            return peer == peer_of.end() || peer->second == kSeveral || p.to == peer->second;
        };
        std::map<std::uint32_t, std::vector<std::size_t>> posts;  // local QP → post_send events
        std::map<std::uint32_t, std::uint32_t> dest_of;
        std::map<std::uint32_t, std::vector<std::size_t>> recv_posts, recv_done;
        std::map<std::uint32_t, std::vector<std::size_t>> send_done;
        std::map<std::uint32_t, std::vector<std::int64_t>> rts_at;  // local QP → its moves to RTS
        for (std::size_t i = 0; i < events.size(); ++i) {
            if (events[i].host != h) continue;
            const json& e = out_events[i];
            const std::string kind = e["event"];
            if (kind == "post_send" && e.contains("qp_num") && e.contains("dest_qp")) {
                posts[e["qp_num"]].push_back(i);
                dest_of[e["qp_num"]] = e["dest_qp"];
            } else if (kind == "post_recv" && e.contains("qp_num")) {
                recv_posts[e["qp_num"]].push_back(i);
            } else if (kind == "modify_qp" && e.contains("qp_num") && e.value("to", "") == "RTS") {
                rts_at[e["qp_num"]].push_back(events[i].t);
            } else if (kind == "completion" && e.contains("qp_num")) {
                const std::string op = e.value("opcode", "");
                const bool receive = op == "RECV" || op == "RECV_RDMA_WITH_IMM";
                (receive ? recv_done : send_done)[e["qp_num"]].push_back(i);
            }
        }
        for (const auto& [qp, post_ids] : posts) {
            const std::uint32_t dest = dest_of[qp];
            // The requests this QP sent, each PSN's first captured copy, in PSN order within each
            // span between its moves to RTS (a QP reset and brought up again starts a new PSN).
            // PSN order, not time order: a packet lost before the sender's capture saw it (netem
            // drops it on the way out) first appears as its retransmission, after later PSNs.
            std::vector<std::map<std::int64_t, std::size_t>> spans;  // relative PSN → packet
            std::vector<std::int64_t> span_base, span_until;
            const auto& starts = rts_at[qp];
            std::size_t span_of_last = SIZE_MAX;
            bool unacknowledged = false;  // UD, UC: no ACK completes a send
            for (std::size_t i = 0; i < packets.size(); ++i) {
                if (packets[i].from != h || qpn_of(i) != dest || is_response(opcode_of(i)) ||
                    !packets[i].tx || !goes_to_peer(qp, packets[i]))
                    continue;
                const std::string transport = packets[i].record->transport();
                unacknowledged = unacknowledged || transport == "UD" || transport == "UC";
                const std::size_t span = static_cast<std::size_t>(
                    std::upper_bound(starts.begin(), starts.end(), *packets[i].tx) -
                    starts.begin());
                if (span != span_of_last && (spans.empty() || span > span_of_last)) {
                    spans.emplace_back();
                    // PSNs are 24 bits and may wrap: ordered relative to half the space below
                    // the span's first one.
                    span_base.push_back(psn_of(i) - (1 << 23));
                    span_until.push_back(span < starts.size()
                                             ? starts[span]
                                             : std::numeric_limits<std::int64_t>::max());
                    span_of_last = span;
                }
                const std::int64_t relative = (psn_of(i) - span_base.back()) & 0xffffff;
                spans.back().emplace(relative, i);  // the earliest copy stays
            }
            std::vector<Message> messages;
            std::map<std::int64_t, std::size_t> wr_of_psn;
            for (std::size_t span = 0; span < spans.size(); ++span)
                for (const auto& [relative, i] : spans[span]) {
                    if (starts_message(opcode_of(i)) || messages.empty())
                        messages.push_back(
                            {{}, opcode_of(i), psn_of(i), psn_of(i), span_until[span]});
                    messages.back().packets.push_back(i);
                    messages.back().last_psn = psn_of(i);
                }
            // UD, UC: a message lost before the capture leaves no trace, so messages and WRs
            // pair up by order only when every one is there.
            if (unacknowledged && messages.size() != post_ids.size()) messages.clear();
            for (std::size_t m = 0; m < messages.size() && m < post_ids.size(); ++m) {
                json& post = out_events[post_ids[m]];
                if (!opcode_fits(post.value("opcode", ""), messages[m].first_opcode)) break;
                for (std::size_t p : messages[m].packets) out_packets[p]["wr"] = post["id"];
                post["packets"] = messages[m].packets;
                // Its packets' PSNs (First..Last, consecutive in a well-formed capture; a loop
                // over the range would trust the file's numbers for its length).
                for (std::size_t p : messages[m].packets) wr_of_psn[psn_of(p)] = post_ids[m];
                if (post.value("opcode", "") == "RDMA_READ" && post.contains("length")) {
                    // The responses: PSNs from the request's, one per path-MTU packet.
                    std::int64_t last = messages[m].first_psn;
                    for (std::size_t i = 0; i < packets.size(); ++i)
                        if (packets[i].to == h && qpn_of(i) == qp &&
                            opcode_of(i) % 32 >= kReadResponseFirst &&
                            opcode_of(i) % 32 <= kReadResponseOnly &&
                            psn_of(i) >= messages[m].first_psn &&
                            (opcode_of(i) % 32 == kReadResponseFirst ||
                                     opcode_of(i) % 32 == kReadResponseOnly
                                 ? psn_of(i) == messages[m].first_psn
                                 : true)) {
                            if (psn_of(i) > last + 64 * 1024) continue;
                            out_packets[i]["wr"] = post["id"];
                            post["packets"].push_back(i);
                            if (opcode_of(i) % 32 == kReadResponseLast ||
                                opcode_of(i) % 32 == kReadResponseOnly) {
                                messages[m].last_psn = psn_of(i);
                                break;
                            }
                            last = psn_of(i);
                        }
                }
                // What completes it: the first ACK for its last PSN (or the READ's last
                // response, an atomic's acknowledge) this host received after sending it.
                const std::int64_t sent_at = packets[messages[m].packets.back()].tx.value_or(0);
                std::optional<std::size_t> ack;
                for (std::size_t i = 0; i < packets.size() && !ack; ++i) {
                    if (packets[i].to != h || qpn_of(i) != qp || !packets[i].rx ||
                        *packets[i].rx < sent_at || *packets[i].rx >= messages[m].until)
                        continue;
                    const int op = opcode_of(i) % 32;
                    const wire::Packet& f = *packets[i].record;
                    const bool positive = !f.aeth || f.aeth->syndrome < 32;
                    if (!positive || psn_of(i) < messages[m].last_psn) continue;
                    if (op == kAcknowledge || op == kAtomicAcknowledge ||
                        (post.value("opcode", "") == "RDMA_READ" &&
                         (op == kReadResponseLast || op == kReadResponseOnly)))
                        ack = i;
                }
                if (ack) {
                    post["acked_by"] = *ack;
                    if (!out_packets[*ack].contains("acks"))
                        out_packets[*ack]["acks"] = json::array();
                    out_packets[*ack]["acks"].push_back(post["id"]);
                }
                ++posts_checked;
                const std::int64_t first_tx = *packets[messages[m].packets.front()].tx;
                if (events[post_ids[m]].t > first_tx + kCaptureResolutionNs)
                    post_violations.push_back(fmt::format(
                        "{}: WR {} ({}) posted {} ns after its first packet (PSN {}) left",
                        hosts[h].name, post["wr_id"].dump(), post.value("opcode", ""),
                        events[post_ids[m]].t - first_tx, messages[m].first_psn));
            }
            for (std::size_t i = 0; i < packets.size(); ++i)
                if (packets[i].from == h && qpn_of(i) == dest && packets[i].record->sent_again &&
                    goes_to_peer(qp, packets[i])) {
                    auto owner = wr_of_psn.find(psn_of(i));
                    if (owner != wr_of_psn.end()) out_packets[i]["wr"] = owner->second;
                }
            // Send completions: each names its WR by wr_id; the first such WR not yet completed.
            for (std::size_t c : send_done[qp]) {
                json& done = out_events[c];
                for (std::size_t p : post_ids) {
                    json& post = out_events[p];
                    if (post.contains("completion") || post["wr_id"] != done["wr_id"]) continue;
                    // An unsignaled WR completes only if it fails (and a wr_id may repeat).
                    if (done.value("ok", false) && !post.value("signaled", true)) continue;
                    post["completion"] = c;
                    done["wr"] = p;
                    // A failed WR has no ACK; a UD or UC send completes once sent.
                    if (!done.value("ok", false) || unacknowledged) break;
                    ++completions_checked;
                    if (!post.contains("acked_by")) {
                        completion_violations.push_back(
                            fmt::format("{}: completion of WR {} with no ACK for it in the capture",
                                        hosts[h].name, done["wr_id"].dump()));
                    } else {
                        const std::size_t a = post["acked_by"];
                        done["caused_by"] = a;
                        if (events[c].t < *packets[a].rx)
                            completion_violations.push_back(fmt::format(
                                "{}: WR {} completed {} ns before the ACK (PSN {}) arrived",
                                hosts[h].name, done["wr_id"].dump(), *packets[a].rx - events[c].t,
                                psn_of(a)));
                    }
                    break;
                }
            }
        }
        // Receives: messages that arrived for a QP of this host consume its receive WRs in order,
        // and RC completes them in that order.
        for (const auto& [qp, done_ids] : recv_done) {
            std::vector<Message> messages;
            for (std::size_t i = 0; i < packets.size(); ++i) {
                if (packets[i].to != h || qpn_of(i) != qp || is_response(opcode_of(i)) ||
                    !packets[i].rx || packets[i].record->sent_again)
                    continue;
                if (starts_message(opcode_of(i)) || messages.empty())
                    messages.push_back({{}, opcode_of(i), psn_of(i), psn_of(i)});
                messages.back().packets.push_back(i);
                messages.back().first_opcode = opcode_of(i);  // the last one decides
            }
            std::size_t next = 0;
            for (std::size_t c : done_ids) {
                while (next < messages.size() && !(consumes_receive(messages[next].first_opcode) &&
                                                   ends_message(messages[next].first_opcode)))
                    ++next;
                if (next == messages.size()) break;
                const std::size_t last = messages[next].packets.back();
                out_events[c]["caused_by"] = last;
                out_packets[last]["received_by"] = c;
                ++receives_checked;
                if (events[c].t < *packets[last].rx)
                    receive_violations.push_back(fmt::format(
                        "{}: receive completion {} ns before its message's last packet (PSN {}) "
                        "arrived",
                        hosts[h].name, *packets[last].rx - events[c].t, psn_of(last)));
                ++next;
            }
            for (std::size_t c : done_ids)
                for (std::size_t p : recv_posts[qp]) {
                    json& post = out_events[p];
                    if (post.contains("completion") || post["wr_id"] != out_events[c]["wr_id"])
                        continue;
                    post["completion"] = c;
                    out_events[c]["wr"] = p;
                    break;
                }
        }
    }
    std::size_t pairs = 0;
    for (const auto& p : packets)
        if (p.tx && p.rx) {
            ++pairs;
            if (*p.rx < *p.tx)
                order_violations.push_back(fmt::format(
                    "{} → {} {} PSN {} arrived {} ns before it was sent", p.record->src,
                    p.record->dst, p.record->opcode_name(), p.record->psn, *p.tx - *p.rx));
        }
    auto check = [&](const char* name, std::size_t checked, const std::vector<std::string>& bad) {
        checks.push_back(
            {{"name", name}, {"checked", checked}, {"ok", bad.empty()}, {"violations", bad}});
    };
    check("every packet arrives after it was sent", pairs, order_violations);
    check("every WR is posted before its first packet leaves", posts_checked, post_violations);
    check("every send completion follows the ACK that produced it", completions_checked,
          completion_violations);
    check("every receive completion follows its message's last packet", receives_checked,
          receive_violations);

    // The timeline: every program event and every packet's departure and arrival, in time order
    // (at one instant: a post, then departures, then arrivals, then the rest).
    json timeline = json::array();
    struct Step {
        std::int64_t t;
        int rank;
        const char* kind;
        std::size_t index;
    };
    std::vector<Step> steps;
    for (std::size_t i = 0; i < out_events.size(); ++i)
        steps.push_back({out_events[i]["t_ns"].get<std::int64_t>(),
                         out_events[i]["event"] == "post_send" ? 0 : 3, "event", i});
    for (std::size_t i = 0; i < out_packets.size(); ++i) {
        if (!out_packets[i]["tx_ns"].is_null())
            steps.push_back({out_packets[i]["tx_ns"].get<std::int64_t>(), 1, "send", i});
        if (!out_packets[i]["rx_ns"].is_null())
            steps.push_back({out_packets[i]["rx_ns"].get<std::int64_t>(), 2, "arrive", i});
    }
    std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) {
        return a.t != b.t ? a.t < b.t : a.rank < b.rank;
    });
    for (const auto& s : steps)
        timeline.push_back({{"t_ns", s.t}, {"kind", s.kind}, {"index", s.index}});

    json host_list = json::array();
    for (const auto& h : hosts) host_list.push_back({{"name", h.name}, {"address", h.address}});
    return {{"format", "rdmalab-trace"},
            {"version", kVersion},
            {"packet_schema_version", wire::kSchemaVersion},
            {"meta", meta},
            {"clock", clock},
            {"t0_epoch_ns", t0},
            {"hosts", host_list},
            {"events", out_events},
            {"packets", out_packets},
            {"timeline", timeline},
            {"checks", checks}};
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
