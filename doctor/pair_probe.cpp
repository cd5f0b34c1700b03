// rdma-doctor's pair probes (see pair_probe.hpp). The conversation, over one TCP connection:
//   prober → "RDDR" version 1; responder → its end (MTUs, GID table, names)
//   then requests, each answered in step: ROUND_TRIP (an RC QP each, a SEND there and back),
//   CLASS (a UD datagram sent with the traffic class; the responder reports the TOS it saw),
//   BYE. Every word is validated before use; every wait has a limit.
#include "pair_probe.hpp"

#include "gather.hpp"

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/port_address.hpp"
#include "rdmalab/qp_endpoint.hpp"
#include "rdmalab/qp_transitions.hpp"
#include "rdmalab/tcp_exchange.hpp"
#include "rdmalab/verbs.hpp"
#include "rdmalab/verbs_names.hpp"

#include <fmt/core.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <thread>

namespace rdmalab::doctor {
namespace {

using std::chrono::milliseconds;

constexpr std::uint32_t kMagic = 0x52444452;  // "RDDR"
constexpr std::uint32_t kVersion = 1;
enum Request : std::uint32_t { kBye = 0, kRoundTrip = 1, kClass = 2 };
constexpr std::uint32_t kMaxGids = 128;
constexpr std::uint32_t kMaxName = 64;
constexpr std::uint32_t kClassPayload = 64;
constexpr std::uint32_t kGrhBytes = 40;  // a UD receive starts with the GRH (or the IP header)
constexpr std::uint32_t kClassQkey = 0x1d0c7017;
constexpr std::uint64_t kSendId = 1;
constexpr std::uint64_t kReceiveId = 2;
// How long the receiving side waits for a probe's data: far longer than the sender's retries
// take to give up (timeout 14 ≈ 67 ms, 3 retries), short enough to keep a broken pair quick.
constexpr milliseconds kArrivalWait{2000};
constexpr milliseconds kCompletionWait{5000};
constexpr Reliability kProbeReliability{.timeout = 14, .retry_cnt = 3, .rnr_retry = 3};

// What the responder says about each round trip.
enum Arrival : std::uint32_t { kArrivedVerified = 0, kArrivedNothing = 1, kArrivedChanged = 2 };
// The echo's status when its SEND did not complete in time.
constexpr std::uint32_t kNoCompletion = 0xffff;

// ---- One end's facts, from gather()'s, for the port whose RoCE v2 GID is the address.

PairEnd describe_end(const HostFacts& host, const std::string& address) {
    PairEnd end;
    end.address = address;
    const std::string wanted = ipv4_mapped_gid(address);
    for (const DeviceFact& device : host.devices)
        for (const PortFact& port : device.ports)
            for (const GidFact& gid : port.gids)
                if (gid.gid == wanted && gid.type == "RoCE v2" && end.port_name.empty()) {
                    end.port_name = fmt::format("{} port {}", device.name, port.number);
                    end.netdev = port.netdev;
                    end.active_mtu = port.active_mtu;
                    end.netdev_mtu =
                        port.netdev_mtu > 0 ? static_cast<unsigned>(port.netdev_mtu) : 0;
                    end.gids = port.gids;
                }
    return end;
}

std::uint32_t type_code(const std::string& type) {
    return type == "RoCE v2" ? 2 : type == "IB/RoCE v1" ? 1 : 0;
}
std::string type_text(std::uint32_t code) {
    return code == 2 ? "RoCE v2" : code == 1 ? "IB/RoCE v1" : "";
}

void send_text(TcpExchange& tcp, const std::string& text) {
    send_word(tcp, static_cast<std::uint32_t>(text.size()));
    tcp.send_all(std::as_bytes(std::span(text)));
}

std::string receive_text(TcpExchange& tcp, std::string_view what) {
    const std::uint32_t size = receive_word(tcp);
    if (size > kMaxName)
        fail(fmt::format("the peer's {} is {} bytes long (at most {})", what, size, kMaxName));
    std::string text(size, '\0');
    tcp.receive_exact(std::as_writable_bytes(std::span(text)));
    for (char c : text)
        if (!std::isalnum(static_cast<unsigned char>(c)) && !std::strchr(" ._:-@", c))
            fail(fmt::format("the peer's {} holds a character that has no place there", what));
    return text;
}

void send_end(TcpExchange& tcp, const PairEnd& end) {
    send_words(tcp, {end.active_mtu, end.netdev_mtu, static_cast<std::uint32_t>(end.gids.size())});
    for (const GidFact& gid : end.gids) {
        GidBytes bytes{};
        parse_sysfs_gid(gid.gid, bytes);
        send_words(tcp, {gid.index, type_code(gid.type)});
        tcp.send_all(std::as_bytes(std::span(bytes)));
    }
    send_text(tcp, end.port_name);
    send_text(tcp, end.netdev);
}

PairEnd receive_end(TcpExchange& tcp, const std::string& address) {
    PairEnd end;
    end.address = address;
    const auto [active_mtu, netdev_mtu, count] = receive_words<3>(tcp);
    if (active_mtu != 0 && !mtu_from_bytes(active_mtu))
        fail(fmt::format("the peer says its RDMA MTU is {}, which no port has", active_mtu));
    if (netdev_mtu > 65536) fail(fmt::format("the peer says its MTU is {}", netdev_mtu));
    if (count > kMaxGids)
        fail(fmt::format("the peer says it has {} GIDs (at most {})", count, kMaxGids));
    end.active_mtu = active_mtu;
    end.netdev_mtu = netdev_mtu;
    for (std::uint32_t i = 0; i < count; ++i) {
        const auto [index, type] = receive_words<2>(tcp);
        GidBytes bytes{};
        tcp.receive_exact(std::as_writable_bytes(std::span(bytes)));
        if (index > 0xffff || type > 2) fail("the peer sent a GID entry out of range");
        end.gids.push_back({index, sysfs_gid_text(bytes), type_text(type), ""});
    }
    end.port_name = receive_text(tcp, "port name");
    end.netdev = receive_text(tcp, "netdev name");
    return end;
}

// ---- The verbs objects of one probe, released in reverse order of creation.

struct ProbeEnd {
    LocalPort port;
    ProtectionDomain pd;
    CompletionQueue cq;
    QueuePair qp;
    Buffer buffer;
    MemoryRegion mr;

    ProbeEnd(const sockaddr_storage& address, const std::string& device, unsigned gid_index,
             ibv_qp_type type, std::size_t bytes)
        : port(open_port_for_address(address, device, -1)), buffer(bytes) {
        // The index the application asked for, whatever it holds: RTR is where a bad one fails.
        port.address.gid_index = static_cast<int>(gid_index);
        ibv_gid_entry entry{};
        if (ibv_query_gid_ex(port.context.get(), port.address.port, gid_index, &entry, 0) == 0)
            port.address.gid = entry.gid;
        else
            port.address.gid = ibv_gid{};
        pd.reset(check_ptr(ibv_alloc_pd(port.context.get()), "ibv_alloc_pd"));
        cq.reset(
            check_ptr(ibv_create_cq(port.context.get(), 4, nullptr, nullptr, 0), "ibv_create_cq"));
        ibv_qp_init_attr init{};
        init.send_cq = cq.get();
        init.recv_cq = cq.get();
        init.qp_type = type;
        init.sq_sig_all = 1;
        init.cap = {.max_send_wr = 1,
                    .max_recv_wr = 1,
                    .max_send_sge = 1,
                    .max_recv_sge = 1,
                    .max_inline_data = 0};
        qp.reset(check_ptr(ibv_create_qp(pd.get(), &init), "ibv_create_qp"));
        // Only receives land here, and nothing of the peer's touches it: local write alone.
        mr.reset(
            check_ptr(ibv_reg_mr(pd.get(), buffer.data(), buffer.size(), IBV_ACCESS_LOCAL_WRITE),
                      "ibv_reg_mr"));
    }

    void post_receive(std::size_t length, std::size_t offset = 0) {
        ibv_sge sge{reinterpret_cast<std::uint64_t>(buffer.data() + offset),
                    static_cast<std::uint32_t>(length), mr->lkey};
        ibv_recv_wr wr{};
        wr.wr_id = kReceiveId;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        ibv_recv_wr* bad = nullptr;
        check_ibv(ibv_post_recv(qp.get(), &wr, &bad), "ibv_post_recv");
    }

    void post_send(std::size_t length, ibv_ah* ah = nullptr, std::uint32_t remote_qpn = 0) {
        ibv_sge sge{reinterpret_cast<std::uint64_t>(buffer.data()),
                    static_cast<std::uint32_t>(length), mr->lkey};
        ibv_send_wr wr{};
        wr.wr_id = kSendId;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_SEND;
        wr.send_flags = IBV_SEND_SIGNALED;
        if (ah) {
            wr.wr.ud.ah = ah;
            wr.wr.ud.remote_qpn = remote_qpn;
            wr.wr.ud.remote_qkey = kClassQkey;
        }
        ibv_send_wr* bad = nullptr;
        check_ibv(ibv_post_send(qp.get(), &wr, &bad), "ibv_post_send");
    }

    // The completion of work request `id` (others met on the way are kept for their turn).
    std::optional<ibv_wc> completion(std::uint64_t id, milliseconds wait) {
        for (auto it = pending_.begin(); it != pending_.end(); ++it)
            if (it->wr_id == id) {
                ibv_wc wc = *it;
                pending_.erase(it);
                return wc;
            }
        const auto give_up = std::chrono::steady_clock::now() + wait;
        while (std::chrono::steady_clock::now() < give_up) {
            ibv_wc wc{};
            const int n = ibv_poll_cq(cq.get(), 1, &wc);
            if (n < 0) fail("ibv_poll_cq failed");
            if (n == 0) {
                std::this_thread::sleep_for(milliseconds(1));
                continue;
            }
            if (wc.wr_id == id) return wc;
            pending_.push_back(wc);
        }
        return std::nullopt;
    }

    // RESET → INIT → RTR → RTS with the probe's parameters; 0, or the error of the call that
    // refused them (detail says which).
    int bring_up(const QpEndpoint& remote, std::uint32_t sq_psn, std::string& detail) {
        const ibv_qp_type type = qp->qp_type;
        QpTransition rtr = rtr_transition(type, port.address, remote, kProbeReliability);
        const std::array<std::pair<QpTransition, const char*>, 2> steps{
            std::pair{rtr, "ibv_modify_qp(INIT -> RTR)"},
            std::pair{rts_transition(type, sq_psn, kProbeReliability),
                      "ibv_modify_qp(RTR -> RTS)"}};
        for (auto [transition, call] : steps) {
            const int rc = ibv_modify_qp(qp.get(), &transition.attributes, transition.mask);
            if (rc != 0) {
                detail = fmt::format("{}: {}", call, std::strerror(rc));
                return rc;
            }
        }
        return 0;
    }

    void init(std::uint32_t qkey) {
        QpTransition t = qp->qp_type == IBV_QPT_UD ? ud_init_transition(port.address, qkey)
                                                   : init_transition(port.address, 0);
        check_ibv(ibv_modify_qp(qp.get(), &t.attributes, t.mask), "ibv_modify_qp(RESET -> INIT)");
    }

  private:
    std::vector<ibv_wc> pending_;
};

// Both ends: our record out, theirs in (validated), then each says whether its QP reached RTS.
struct Connected {
    QpEndpoint remote;
    bool ready = false;
    std::string detail;
};

Connected connect_probe(TcpExchange& tcp, ProbeEnd& end, ibv_mtu mtu, unsigned tclass,
                        std::string_view side) {
    QpEndpoint ours;
    ours.qp_type = end.qp->qp_type;
    ours.link_layer = end.port.address.link_layer;
    ours.active_mtu = mtu;  // both ends set the probe's MTU: the path MTU is exactly it
    ours.qpn = end.qp->qp_num;
    ours.psn = random_psn();
    ours.gid = end.port.address.gid;
    ours.qkey = ours.qp_type == IBV_QPT_UD ? kClassQkey : 0;
    const QpEndpointWire wire = encode_qp_endpoint(ours);
    tcp.send_all(wire);
    QpEndpointWire theirs{};
    tcp.receive_exact(theirs);
    Connected result;
    result.remote = decode_qp_endpoint_or_throw(theirs, ours.qp_type, PeerBuffer::kNone);
    end.port.address.active_mtu = mtu;
    // The address vector (the RC QP's at RTR, a UD AH's) carries the class from here.
    apply_traffic_class(end.port.address, static_cast<int>(tclass));
    std::string detail;
    const int rc = end.bring_up(result.remote, ours.psn, detail);
    send_word(tcp, static_cast<std::uint32_t>(rc));
    const std::uint32_t peer_rc = receive_word(tcp);
    if (peer_rc > 4095) fail("the peer's bring-up status is not an errno");
    result.ready = rc == 0 && peer_rc == 0;
    if (rc != 0)
        result.detail = fmt::format("{}, {}", side == "prober" ? "here" : "on the peer", detail);
    else if (peer_rc != 0)
        result.detail =
            fmt::format("ibv_modify_qp {}: {}", side == "prober" ? "on the peer" : "here",
                        std::strerror(static_cast<int>(peer_rc)));
    return result;
}

std::string completion_text(const std::optional<ibv_wc>& wc, milliseconds waited) {
    if (!wc) return fmt::format("no completion within {} ms", waited.count());
    return wc_status_name(wc->status);
}

// ---- The prober's side of each request.

RoundTrip prober_round_trip(TcpExchange& tcp, const sockaddr_storage& local,
                            const std::string& device, unsigned local_gid, unsigned peer_gid,
                            unsigned mtu, unsigned tclass, unsigned bytes, std::uint64_t seed) {
    RoundTrip probe{local_gid, peer_gid, mtu, bytes, ProbeOutcome::kVerified, ""};
    send_words(tcp, {kRoundTrip, peer_gid, mtu, tclass, bytes});
    // Sent from the first half of the buffer; the echo lands in the second.
    ProbeEnd end(local, device, local_gid, IBV_QPT_RC, 2 * std::size_t{bytes});
    end.init(0);
    end.post_receive(bytes, bytes);
    // A port that reports no MTU (0) is probed at the largest.
    Connected link =
        connect_probe(tcp, end, mtu_from_bytes(mtu).value_or(IBV_MTU_4096), tclass, "prober");
    if (!link.ready) {
        probe.outcome = ProbeOutcome::kRtrRefused;
        probe.detail = link.detail;
        return probe;
    }
    fill_pattern(end.buffer.bytes().first(bytes), seed);
    end.post_send(bytes);
    const auto sent = end.completion(kSendId, kCompletionWait);
    const auto [arrival, echo_status] = receive_words<2>(tcp);
    if (arrival == kArrivedNothing) {
        probe.outcome = ProbeOutcome::kNotArrived;
        probe.detail = fmt::format("our SEND: {}", completion_text(sent, kCompletionWait));
    } else if (arrival == kArrivedChanged) {
        probe.outcome = ProbeOutcome::kCorrupt;
        probe.detail = "the peer's check of the bytes failed";
    } else if (arrival != kArrivedVerified) {
        fail("the peer's report of a round trip is not one it may send");
    } else {
        // The echo is worth waiting for only if the peer saw it leave.
        const auto echo = end.completion(
            kReceiveId, echo_status == IBV_WC_SUCCESS ? kArrivalWait : milliseconds(0));
        if (!echo || echo->status != IBV_WC_SUCCESS) {
            probe.outcome = ProbeOutcome::kNoEcho;
            probe.detail = fmt::format(
                "the peer's SEND back: {}{}",
                echo_status == kNoCompletion
                    ? fmt::format("no completion there within {} ms", kArrivalWait.count())
                    : wc_status_name(static_cast<ibv_wc_status>(std::min(echo_status, 31u))),
                sent && sent->status == IBV_WC_SUCCESS
                    ? ""
                    : fmt::format("; ours: {}", completion_text(sent, kCompletionWait)));
        } else if (echo->byte_len != bytes ||
                   find_pattern_mismatch(end.buffer.bytes().subspan(bytes, bytes), seed)) {
            probe.outcome = ProbeOutcome::kCorrupt;
            probe.detail = "the bytes that came back differ from those sent";
        }
    }
    return probe;
}

ClassProbe prober_class(TcpExchange& tcp, const sockaddr_storage& local, const std::string& device,
                        unsigned local_gid, unsigned peer_gid, unsigned tclass) {
    send_words(tcp, {kClass, peer_gid, 0, tclass, kClassPayload});
    ProbeEnd end(local, device, local_gid, IBV_QPT_UD, kClassPayload);
    end.init(kClassQkey);
    Connected link = connect_probe(tcp, end, IBV_MTU_1024, tclass, "prober");
    ClassProbe probe{tclass, false, 0};
    if (link.ready) {
        ibv_ah_attr av = address_vector(end.port.address, link.remote);
        AddressHandle ah{check_ptr(ibv_create_ah(end.pd.get(), &av), "ibv_create_ah")};
        fill_pattern(end.buffer.bytes(), tclass);
        end.post_send(kClassPayload, ah.get(), link.remote.qpn);
        end.completion(kSendId, kCompletionWait);
    }
    const auto [arrived, tos] = receive_words<2>(tcp);
    if (arrived > 1 || tos > 255) fail("the peer's report of the traffic class is out of range");
    probe.arrived = arrived == 1;
    probe.received_tos = tos;
    return probe;
}

// ---- The responder's side.

void answer_round_trip(TcpExchange& tcp, const sockaddr_storage& local, const std::string& device,
                       unsigned gid, unsigned mtu, unsigned tclass, unsigned bytes) {
    ProbeEnd end(local, device, gid, IBV_QPT_RC, bytes);
    end.init(0);
    end.post_receive(bytes);
    Connected link =
        connect_probe(tcp, end, mtu_from_bytes(mtu).value_or(IBV_MTU_4096), tclass, "responder");
    if (!link.ready) return;  // the prober knows from the status words
    const auto got = end.completion(kReceiveId, kArrivalWait);
    if (!got || got->status != IBV_WC_SUCCESS) {
        send_words(tcp, {kArrivedNothing, 0});
        return;
    }
    if (got->byte_len != bytes) {
        send_words(tcp, {kArrivedChanged, 0});
        return;
    }
    // The bytes go back as they came: the prober checks them against its pattern.
    end.post_send(bytes);
    const auto echoed = end.completion(kSendId, kArrivalWait);
    send_words(tcp, {kArrivedVerified,
                     echoed ? static_cast<std::uint32_t>(echoed->status) : kNoCompletion});
}

void answer_class(TcpExchange& tcp, const sockaddr_storage& local, const std::string& device,
                  unsigned gid, unsigned tclass) {
    ProbeEnd end(local, device, gid, IBV_QPT_UD, kGrhBytes + kClassPayload);
    end.init(kClassQkey);
    end.post_receive(kGrhBytes + kClassPayload);
    Connected link = connect_probe(tcp, end, IBV_MTU_1024, tclass, "responder");
    std::uint32_t arrived = 0, tos = 0;
    if (link.ready) {
        // #region read-the-class
        const auto got = end.completion(kReceiveId, kArrivalWait);
        if (got && got->status == IBV_WC_SUCCESS && (got->wc_flags & IBV_WC_GRH)) {
            // RoCE v2 over IPv4: the 40 bytes before the payload hold 20 zero bytes and the
            // IPv4 header; over IPv6 they are the IPv6 header. Either way the class is read as
            // it arrived in the packet.
            const auto* grh = reinterpret_cast<const unsigned char*>(end.buffer.data());
            if ((grh[20] >> 4) == 4) {
                arrived = 1;
                tos = grh[21];
            } else if ((grh[0] >> 4) == 6) {
                arrived = 1;
                tos = static_cast<std::uint32_t>((grh[0] & 0x0f) << 4 | grh[1] >> 4);
            }
        }
        // #endregion read-the-class
    }
    send_words(tcp, {arrived, tos});
}

// The peer's entry that pairs with ours: the same type, and the same kind of address (the
// peer's IPv4 address for ours, link-local for link-local).
const GidFact* pairing(const PairEnd& peer, const GidFact& ours, const std::string& our_address) {
    const bool ipv4 = ours.gid == ipv4_mapped_gid(our_address);
    for (const GidFact& theirs : peer.gids) {
        if (theirs.type != ours.type) continue;
        if (ipv4 && theirs.gid == ipv4_mapped_gid(peer.address)) return &theirs;
        if (!ipv4 && ours.gid.starts_with("fe80:") && theirs.gid.starts_with("fe80:"))
            return &theirs;
    }
    return nullptr;
}

}  // namespace

PairFacts probe_peer(const ProbeOptions& options, const HostFacts& host, TcpExchange tcp) {
    const sockaddr_storage local = tcp.local_address();
    const std::string local_ip = format_ip(local);
    const std::string peer_ip = format_ip(tcp.peer_address());
    send_words(tcp, {kMagic, kVersion});
    const auto [magic, version] = receive_words<2>(tcp);
    if (magic != kMagic || version != kVersion)
        fail(fmt::format("{} port {} is not an rdma-doctor --respond of this version", peer_ip,
                         options.port));
    PairFacts pair;
    pair.peer = receive_end(tcp, peer_ip);
    pair.local = describe_end(host, local_ip);
    pair.requested_gid_index = options.gid_index;
    pair.gid_index_source = options.gid_index_source;
    pair.tclass = options.tclass;
    pair.tclass_source = options.tclass_source;
    if (pair.local.port_name.empty())
        pair.route_problem = fmt::format(
            "the route to {} leaves from {}, which no RDMA port carries (no RoCE v2 GID {})",
            peer_ip, local_ip, readable_gid(ipv4_mapped_gid(local_ip)));
    else if (pair.peer.port_name.empty())
        pair.route_problem =
            fmt::format("{} answers at {}, but no RDMA port there carries it", peer_ip, peer_ip);
    if (!pair.route_problem.empty()) {
        send_word(tcp, kBye);
        return pair;
    }
    const unsigned base_mtu = std::min(pair.local.active_mtu, pair.peer.active_mtu);
    std::uint64_t seed = 1;
    // 1. A small round trip on each pairing of GIDs, the addresses' own first.
    std::vector<std::pair<unsigned, unsigned>> pairings;
    for (const GidFact& ours : pair.local.gids)
        if (const GidFact* theirs = pairing(pair.peer, ours, local_ip)) {
            const bool address_pair = ours.gid == ipv4_mapped_gid(local_ip);
            pairings.insert(address_pair ? pairings.begin() : pairings.end(),
                            {ours.index, theirs->index});
        }
    // The application's index is used on both ends, as NCCL_IB_GID_INDEX is.
    if (options.gid_index &&
        std::find(pairings.begin(), pairings.end(),
                  std::pair{*options.gid_index, *options.gid_index}) == pairings.end())
        pairings.emplace_back(*options.gid_index, *options.gid_index);
    for (auto [ours, theirs] : pairings)
        pair.gid_probes.push_back(prober_round_trip(tcp, local, options.device, ours, theirs,
                                                    base_mtu, options.tclass, 64, seed++));
    // 2. On the addresses' GIDs, once RoCE gets through at all: the largest path MTU that
    // carries full packets both ways, from the larger of the two ports' MTUs down.
    if (!pair.gid_probes.empty() && pair.gid_probes.front().outcome == ProbeOutcome::kVerified) {
        const auto [ours, theirs] = pairings.front();
        const unsigned top = std::max(pair.local.active_mtu, pair.peer.active_mtu);
        for (unsigned mtu = 4096; mtu >= 256; mtu /= 2) {
            if (mtu > top) continue;
            pair.mtu_probes.push_back(prober_round_trip(tcp, local, options.device, ours, theirs,
                                                        mtu, options.tclass, 3 * mtu, seed++));
            if (pair.mtu_probes.back().outcome == ProbeOutcome::kVerified) break;
        }
        // 3. What the peer receives of the traffic class.
        pair.class_probe = prober_class(tcp, local, options.device, ours, theirs, options.tclass);
    }
    send_word(tcp, kBye);
    return pair;
}

unsigned respond(const RespondOptions& options) {
    const HostFacts host = gather({options.device, milliseconds(0), nullptr});
    if (host.devices.empty())
        fail(
            "no RDMA device on this host: nothing to answer a prober with (rdma-doctor alone says "
            "why)");
    fmt::print("rdma-doctor: responding to one prober on TCP port {} (waiting up to {} s)\n",
               options.port, options.wait.count() / 1000);
    std::fflush(stdout);
    TcpExchange tcp = TcpExchange::accept_one(options.port, "", options.wait);
    const sockaddr_storage local = tcp.local_address();
    const std::string local_ip = format_ip(local);
    const std::string peer_ip = format_ip(tcp.peer_address());
    const auto [magic, version] = receive_words<2>(tcp);
    if (magic != kMagic || version != kVersion)
        fail(fmt::format("{} is not an rdma-doctor --peer of this version", peer_ip));
    send_words(tcp, {kMagic, kVersion});
    const PairEnd end = describe_end(host, local_ip);
    send_end(tcp, end);
    unsigned answered = 0;
    for (;;) {
        const std::uint32_t request = receive_word(tcp);
        if (request == kBye) break;
        const auto [gid, mtu, tclass, bytes] = receive_words<4>(tcp);
        if (request != kRoundTrip && request != kClass)
            fail(fmt::format("{} asked for probe {}, which does not exist", peer_ip, request));
        if (!mtu_from_bytes(mtu) && request == kRoundTrip)
            fail(fmt::format("{} asked for path MTU {}", peer_ip, mtu));
        if (tclass > 255 || gid > 0xffff)
            fail(fmt::format("{} asked for a traffic class or GID index out of range", peer_ip));
        if (bytes == 0 || bytes > 3 * 4096 || (request == kClass && bytes != kClassPayload))
            fail(fmt::format("{} asked for a {}-byte probe", peer_ip, bytes));
        if (request == kRoundTrip)
            answer_round_trip(tcp, local, options.device, gid, mtu, tclass, bytes);
        else
            answer_class(tcp, local, options.device, gid, tclass);
        ++answered;
    }
    fmt::print("rdma-doctor: answered {} probe{} from {}\n", answered, answered == 1 ? "" : "s",
               peer_ip);
    return answered;
}

}  // namespace rdmalab::doctor
