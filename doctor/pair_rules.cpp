// rdma-doctor's pair rules: from what the probes between two hosts found to findings (see
// pair.hpp). No I/O here.
#include "pair.hpp"

#include <arpa/inet.h>
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cstdio>

namespace rdmalab::doctor {
namespace {

bool is_link_local_text(const std::string& sysfs_gid) {
    return sysfs_gid.starts_with("fe80:");
}

const GidFact* find_gid(const PairEnd& end, unsigned index) {
    for (const GidFact& gid : end.gids)
        if (gid.index == index) return &gid;
    return nullptr;
}

// The entry a RoCE v2 application should use for the end's address.
const GidFact* address_gid(const PairEnd& end) {
    const std::string wanted = ipv4_mapped_gid(end.address);
    for (const GidFact& gid : end.gids)
        if (gid.gid == wanted && gid.type == "RoCE v2") return &gid;
    return nullptr;
}

std::string describe(const GidFact& gid) {
    return fmt::format("{} ({}{})", readable_gid(gid.gid),
                       gid.type.empty() ? "type unknown" : gid.type,
                       is_link_local_text(gid.gid) ? ", IPv6 link-local" : "");
}

std::string round_trip_text(const RoundTrip& probe) {
    if (probe.outcome == ProbeOutcome::kVerified)
        return fmt::format("at path MTU {} verified", probe.path_mtu);
    return fmt::format("at path MTU {} failed: {}{}", probe.path_mtu, outcome_name(probe.outcome),
                       probe.detail.empty() ? "" : fmt::format(" ({})", probe.detail));
}

const char* ecn_name(unsigned ecn) {
    static constexpr std::array names{"Not-ECT", "ECT(1)", "ECT(0)", "CE"};
    return names[ecn & 3];
}

std::string gid_index_fix(const PairFacts& pair, unsigned right_index) {
    if (pair.gid_index_source == "NCCL_IB_GID_INDEX")
        return fmt::format(
            "NCCL_IB_GID_INDEX={} (or unset it: NCCL then picks the IPv4-mapped "
            "RoCE v2 entry itself)",
            right_index);
    return fmt::format("{} {}", pair.gid_index_source, right_index);
}

void check_requested_gid(const PairFacts& pair, Diagnosis& out) {
    if (!pair.requested_gid_index) return;
    const unsigned index = *pair.requested_gid_index;
    const GidFact* right = address_gid(pair.local);
    const std::string right_text =
        right ? fmt::format("{}'s entry is index {}", pair.local.address, right->index)
              : fmt::format("{} has no RoCE v2 entry", pair.local.address);
    const GidFact* chosen = find_gid(pair.local, index);
    const std::string setting = fmt::format("{}={}", pair.gid_index_source, index);
    if (!chosen) {
        std::string valid;
        for (const GidFact& gid : pair.local.gids)
            valid += fmt::format("{}{}", valid.empty() ? "" : ", ", gid.index);
        out.findings.push_back(
            {"gid-index", Severity::kProblem,
             fmt::format("{}: {} has no GID at index {} (valid: {}; {})", setting,
                         pair.local.port_name, index, valid.empty() ? "none" : valid, right_text),
             "ibv_modify_qp to RTR fails with EINVAL — the \"Failed to modify QP to RTR\" that "
             "NCCL and perftest report",
             right ? gid_index_fix(pair, right->index)
                   : "add an IPv4 address to the port's netdev"});
        return;
    }
    if (right && chosen->index == right->index) {
        out.healthy.push_back({"gid-index", fmt::format("{} is {}'s IPv4-mapped RoCE v2 entry",
                                                        setting, pair.local.address)});
        return;
    }
    // The probe that used the requested index on both ends, if there was one.
    const RoundTrip* probe = nullptr;
    for (const RoundTrip& p : pair.gid_probes)
        if (p.local_gid_index == index && p.peer_gid_index == index) probe = &p;
    const bool verified = probe && probe->outcome == ProbeOutcome::kVerified;
    std::string why;
    if (is_link_local_text(chosen->gid))
        why =
            "a link-local address is never routed: it reaches hosts on this link only, and a "
            "peer behind a router fails";
    else if (chosen->type != "RoCE v2")
        why =
            "RoCE v1 has no IP header: it is never routed, and a peer on another subnet (or "
            "one whose switches expect RoCE v2) fails";
    else
        why =
            "it is not the address the host is reached at: its packets route differently from "
            "the TCP connection, and the two ends may disagree on which entry that is";
    if (probe)
        why += fmt::format(" (here, index {} on both ends: {})", index, round_trip_text(*probe));
    out.findings.push_back({"gid-index", verified ? Severity::kWarning : Severity::kProblem,
                            fmt::format("{} is {}, not the address's GID ({})", setting,
                                        describe(*chosen), right_text),
                            why, right ? gid_index_fix(pair, right->index) : "see the gid check"});
}

// Whether RoCE gets through at all: the small round trips on the addresses' GIDs.
void check_reachability(const PairFacts& pair, Diagnosis& out) {
    const RoundTrip* verified = nullptr;
    for (const RoundTrip& p : pair.gid_probes)
        if (p.outcome == ProbeOutcome::kVerified && !verified) verified = &p;
    if (verified) {
        const GidFact* gid = find_gid(pair.local, verified->local_gid_index);
        out.healthy.push_back(
            {"round-trip",
             fmt::format("RC connection to {} ({}) and a verified {}-byte round trip on GID index "
                         "{} → {}{}",
                         pair.peer.address, pair.peer.port_name, verified->bytes,
                         verified->local_gid_index, verified->peer_gid_index,
                         gid ? fmt::format(" ({})", describe(*gid)) : "")});
        return;
    }
    if (pair.gid_probes.empty()) return;
    // Nothing got through: name the first failure of the probe on the addresses' own GIDs.
    const RoundTrip& first = pair.gid_probes.front();
    switch (first.outcome) {
        case ProbeOutcome::kNotArrived:
            out.findings.push_back(
                {"roce-blocked", Severity::kProblem,
                 fmt::format("RoCE v2 packets (UDP port 4791) from here never reach {}, though "
                             "TCP to it works (a {}-byte round trip on GID index {} → {}: {})",
                             pair.peer.address, first.bytes, first.local_gid_index,
                             first.peer_gid_index, outcome_name(first.outcome)),
                 "every RDMA connection between the two fails: rdma_cm's connect times out, a "
                 "hand-made QP ends in \"transport retry counter exceeded\" "
                 "(IBV_WC_RETRY_EXC_ERR)",
                 fmt::format(
                     "on {} (and on the path): sudo nft list ruleset | grep 4791; let it in: "
                     "sudo nft insert rule inet filter input udp dport 4791 accept "
                     "(iptables: sudo iptables -I INPUT -p udp --dport 4791 -j ACCEPT)",
                     pair.peer.address)});
            return;
        case ProbeOutcome::kNoEcho:
            out.findings.push_back(
                {"roce-blocked", Severity::kProblem,
                 fmt::format("{} receives RoCE v2 packets from here, but nothing it sends back "
                             "(UDP port 4791: data, ACKs) arrives here",
                             pair.peer.address),
                 "every RDMA connection between the two fails: the sender never sees an ACK and "
                 "ends in \"transport retry counter exceeded\" (IBV_WC_RETRY_EXC_ERR)",
                 "on this host: sudo nft list ruleset | grep 4791; let it in: sudo nft insert rule "
                 "inet filter input udp dport 4791 accept (iptables: sudo iptables -I INPUT -p "
                 "udp --dport 4791 -j ACCEPT)"});
            return;
        case ProbeOutcome::kRtrRefused:
            out.findings.push_back(
                {"round-trip", Severity::kProblem,
                 fmt::format("the RC connection to {} could not be brought up: {}",
                             pair.peer.address, first.detail),
                 "the \"Failed to modify QP to RTR\" applications report: the address vector, "
                 "path MTU or GID index is refused by the device",
                 "check the gid and gid-index findings; ibv_devinfo -v for the port's limits"});
            return;
        case ProbeOutcome::kCorrupt:
        case ProbeOutcome::kVerified:
            out.findings.push_back(
                {"round-trip", Severity::kProblem,
                 fmt::format("data sent to {} arrived changed: {}", pair.peer.address,
                             first.detail),
                 "RDMA's ICRC should make this impossible: memory or a device is faulty",
                 "run rdma-bench with --verify between the two; check the port counters"});
            return;
    }
}

void check_mtu(const PairFacts& pair, Diagnosis& out) {
    const PairEnd& a = pair.local;
    const PairEnd& b = pair.peer;
    const RoundTrip* largest_verified = nullptr;
    const RoundTrip* largest_failed = nullptr;
    for (const RoundTrip& p : pair.mtu_probes) {
        if (p.outcome == ProbeOutcome::kVerified && !largest_verified) largest_verified = &p;
        if (p.outcome != ProbeOutcome::kVerified && !largest_failed) largest_failed = &p;
    }
    std::string evidence;
    for (const RoundTrip& p : pair.mtu_probes)
        evidence += fmt::format("{}{}", evidence.empty() ? "" : "; ", round_trip_text(p));
    const bool netdev_differs = a.netdev_mtu && b.netdev_mtu && a.netdev_mtu != b.netdev_mtu;
    if (netdev_differs || a.active_mtu != b.active_mtu) {
        const bool lower_here = a.netdev_mtu > b.netdev_mtu;
        out.findings.push_back(
            {"mtu-mismatch", Severity::kProblem,
             fmt::format("the MTU differs between the ends: here {} {} (RDMA MTU {}), on {} {} {} "
                         "(RDMA MTU {})",
                         a.netdev, a.netdev_mtu, a.active_mtu, b.address, b.netdev, b.netdev_mtu,
                         b.active_mtu),
             fmt::format("a program that takes the path MTU from its own port sends {}-byte "
                         "packets the other end's link is not set for; they are dropped and the "
                         "connection ends in \"transport retry counter exceeded\"{}",
                         std::max(a.active_mtu, b.active_mtu),
                         evidence.empty() ? "" : fmt::format(" (probed: {})", evidence)),
             lower_here ? fmt::format("one MTU for both: sudo ip link set dev {} mtu {} here (or "
                                      "raise {}'s {}, and every switch port between, to {})",
                                      a.netdev, b.netdev_mtu, b.address, b.netdev, a.netdev_mtu)
                        : fmt::format("one MTU for both: sudo ip link set dev {} mtu {} on {} (or "
                                      "raise this host's {}, and every switch port between, to {})",
                                      b.netdev, a.netdev_mtu, b.address, a.netdev, b.netdev_mtu)});
        return;
    }
    if (largest_failed &&
        (!largest_verified || largest_failed->path_mtu > largest_verified->path_mtu)) {
        out.findings.push_back(
            {"path-mtu", Severity::kProblem,
             fmt::format("both ends say RDMA MTU {}, but round trips at path MTU {} fail ({})",
                         a.active_mtu, largest_failed->path_mtu, evidence),
             "a hop between the two has a smaller MTU than the ends: full-size packets are "
             "dropped and every large transfer ends in \"transport retry counter exceeded\"",
             fmt::format("find the hop: tracepath -n {}; until then lower both ends' MTU "
                         "(sudo ip link set dev {} mtu …)",
                         b.address, a.netdev)});
        return;
    }
    out.healthy.push_back(
        {"path-mtu", fmt::format("both ends MTU {} (RDMA MTU {}){}", a.netdev_mtu, a.active_mtu,
                                 largest_verified ? fmt::format("; a round trip {}",
                                                                round_trip_text(*largest_verified))
                                                  : "")});
}

void check_traffic_class(const PairFacts& pair, Diagnosis& out) {
    const unsigned tclass = pair.tclass;
    const std::string source = pair.tclass_source.empty() ? "the default" : pair.tclass_source;
    const std::optional<ClassProbe>& probe = pair.class_probe;
    const bool arrived = probe && probe->arrived;
    const std::string received =
        arrived
            ? fmt::format("the peer received DSCP {}, ECN {:02b} ({})", probe->received_tos >> 2,
                          probe->received_tos & 3, ecn_name(probe->received_tos))
            : "";
    if ((tclass & 3) == 3) {
        out.findings.push_back(
            {"traffic-class", Severity::kProblem,
             fmt::format("traffic class {} ({}) sets both ECN bits: every packet leaves marked "
                         "Congestion Experienced{}",
                         tclass, source, arrived ? fmt::format(" ({})", received) : ""),
             "a RoCE NIC answers every CE packet with a CNP and DCQCN cuts the sender's rate each "
             "time: bandwidth collapses with no congestion anywhere",
             fmt::format("the ECN bits are the network's: use DSCP << 2 | 2 (ECT(0)), e.g. {}=106 "
                         "for DSCP 26",
                         pair.tclass_source.empty() ? "the traffic class" : pair.tclass_source)});
        return;
    }
    // The DSCP is the application's to choose; a different one arriving means something
    // overrode it on the way (ECN may change in the network: CE on an ECT packet is congestion).
    if (arrived && (probe->received_tos >> 2) != (tclass >> 2)) {
        out.findings.push_back(
            {"traffic-class", Severity::kWarning,
             fmt::format("traffic class {} ({}) was sent as DSCP {}, but {}", tclass, source,
                         tclass >> 2, received),
             "something sets the class over the application's — a port-wide traffic class (mlx5: "
             "/sys/class/infiniband/DEV/tc/PORT/traffic_class) or a switch rewriting DSCP — and "
             "the DSCP picks the lossless queue (PFC) and the ECN marking",
             "cat /sys/class/infiniband/*/tc/1/traffic_class on both ends; check the switches' "
             "DSCP trust and rewrite settings"});
        return;
    }
    if (!probe) return;
    out.healthy.push_back(
        {"traffic-class",
         arrived ? fmt::format("traffic class {} ({}): {}{}", tclass, source, received,
                               (tclass & 3) == 0 ? " — not ECN-capable: a marking switch drops "
                                                   "instead of marking"
                                                 : "")
                 : fmt::format("traffic class {} ({}): the UD datagram that carries it did not "
                               "arrive, so what the peer receives is unknown",
                               tclass, source)});
}

}  // namespace

const char* outcome_name(ProbeOutcome outcome) {
    switch (outcome) {
        case ProbeOutcome::kVerified:
            return "verified";
        case ProbeOutcome::kRtrRefused:
            return "refused at bring-up";
        case ProbeOutcome::kNotArrived:
            return "nothing arrived at the peer";
        case ProbeOutcome::kNoEcho:
            return "the peer got it, its answer never came back";
        case ProbeOutcome::kCorrupt:
            return "data arrived changed";
    }
    return "?";
}

bool parse_sysfs_gid(const std::string& text, GidBytes& bytes) {
    unsigned groups[8];
    int used = 0;
    if (text.size() != 39 ||
        std::sscanf(text.c_str(), "%4x:%4x:%4x:%4x:%4x:%4x:%4x:%4x%n", &groups[0], &groups[1],
                    &groups[2], &groups[3], &groups[4], &groups[5], &groups[6], &groups[7],
                    &used) != 8 ||
        used != 39)
        return false;
    for (int i = 0; i < 8; ++i) {
        bytes[2 * i] = static_cast<unsigned char>(groups[i] >> 8);
        bytes[2 * i + 1] = static_cast<unsigned char>(groups[i] & 0xff);
    }
    return true;
}

std::string sysfs_gid_text(const GidBytes& b) {
    return fmt::format(
        "{:02x}{:02x}:{:02x}{:02x}:{:02x}{:02x}:{:02x}{:02x}:{:02x}{:02x}:{:02x}{:02x}:{:02x}{:02x}"
        ":"
        "{:02x}{:02x}",
        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
        b[14], b[15]);
}

std::string readable_gid(const std::string& sysfs_gid) {
    GidBytes bytes{};
    if (!parse_sysfs_gid(sysfs_gid, bytes)) return sysfs_gid;
    char text[INET6_ADDRSTRLEN] = {};
    if (!inet_ntop(AF_INET6, bytes.data(), text, sizeof text)) return sysfs_gid;
    return text;
}

void diagnose_pair(const PairFacts& pair, Diagnosis& out) {
    if (!pair.route_problem.empty()) {
        out.findings.push_back(
            {"pair-route", Severity::kProblem, pair.route_problem,
             "RoCE leaves from the port whose GID carries the source address; traffic to the "
             "peer would leave from a port without RDMA, or the two would disagree on the path",
             "ip route get PEER shows the way out: give that interface's RDMA port the address, "
             "or route the peer's subnet through the RDMA interface"});
        return;
    }
    check_requested_gid(pair, out);
    check_reachability(pair, out);
    const bool reachable = std::any_of(pair.gid_probes.begin(), pair.gid_probes.end(), [](auto& p) {
        return p.outcome == ProbeOutcome::kVerified;
    });
    if (reachable) {
        check_mtu(pair, out);
        check_traffic_class(pair, out);
    }
}

records::DoctorPair pair_record(const PairFacts& pair) {
    auto end = [](const PairEnd& e) {
        records::DoctorPairEnd out{.address = e.address,
                                   .port = e.port_name,
                                   .netdev = e.netdev,
                                   .netdev_mtu = e.netdev_mtu,
                                   .active_mtu = e.active_mtu};
        for (const GidFact& g : e.gids)
            out.gids.push_back(records::DoctorGid{g.index, readable_gid(g.gid), g.type});
        return out;
    };
    auto trips = [](const std::vector<RoundTrip>& probes) {
        std::vector<records::DoctorRoundTrip> list;
        for (const RoundTrip& p : probes)
            list.push_back(
                records::DoctorRoundTrip{.local_gid_index = p.local_gid_index,
                                         .peer_gid_index = p.peer_gid_index,
                                         .path_mtu = p.path_mtu,
                                         .bytes = p.bytes,
                                         .outcome = outcome_name(p.outcome),
                                         .verified = p.outcome == ProbeOutcome::kVerified,
                                         .detail = p.detail});
        return list;
    };
    records::DoctorPair out{.local = end(pair.local),
                            .peer = end(pair.peer),
                            .tclass = pair.tclass,
                            .gid_round_trips = trips(pair.gid_probes),
                            .mtu_round_trips = trips(pair.mtu_probes)};
    if (!pair.route_problem.empty()) out.route_problem = pair.route_problem;
    out.requested_gid_index = pair.requested_gid_index;
    if (pair.class_probe)
        out.class_probe =
            records::DoctorClassProbe{pair.class_probe->sent_tclass, pair.class_probe->arrived,
                                      pair.class_probe->received_tos};
    return out;
}

}  // namespace rdmalab::doctor
