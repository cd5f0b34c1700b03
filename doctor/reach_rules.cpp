// rdma-doctor's reachability rules: why the pair's TCP connection to the peer failed, named by
// the first layer on the way that fails (see reach.hpp). No I/O here.
#include "reach.hpp"

#include <fmt/core.h>

namespace rdmalab::doctor {

const char* route_kind_name(RouteKind kind) {
    switch (kind) {
        case RouteKind::kUnicast:
            return "unicast";
        case RouteKind::kNone:
            return "none";
        case RouteKind::kUnreachable:
            return "unreachable";
        case RouteKind::kProhibit:
            return "prohibit";
        case RouteKind::kBlackhole:
            return "blackhole";
        case RouteKind::kOther:
            return "error";
    }
    return "?";
}

const char* neighbour_state_name(NeighbourState state) {
    switch (state) {
        case NeighbourState::kAbsent:
            return "absent";
        case NeighbourState::kIncomplete:
            return "INCOMPLETE";
        case NeighbourState::kFailed:
            return "FAILED";
        case NeighbourState::kReachable:
            return "REACHABLE";
        case NeighbourState::kPermanent:
            return "PERMANENT";
        case NeighbourState::kNoArp:
            return "NOARP";
    }
    return "?";
}

const char* tcp_outcome_name(TcpOutcome outcome) {
    switch (outcome) {
        case TcpOutcome::kConnected:
            return "connected";
        case TcpOutcome::kRefused:
            return "refused";
        case TcpOutcome::kSilent:
            return "silent";
        case TcpOutcome::kUnreachable:
            return "unreachable";
        case TcpOutcome::kOther:
            return "error";
    }
    return "?";
}

namespace {

std::string route_text(const ReachFacts& r) {
    return fmt::format("{} leaves by {} from {}{}", r.peer, r.interface,
                       r.source.empty() ? "?" : r.source,
                       r.gateway.empty() ? " (on the link)" : fmt::format(" via {}", r.gateway));
}

std::string echo_text(const ReachFacts& r) {
    if (!r.echo_error.empty()) return fmt::format("no ICMP echo could be sent ({})", r.echo_error);
    return fmt::format("{} of {} ICMP echoes answered", r.echoes_answered, r.echoes_sent);
}

bool echo_answered(const ReachFacts& r) {
    return r.echoes_answered > 0;
}

// The route's layer: a finding when the lookup itself says no (or sends the packets nowhere).
bool check_route(const ReachFacts& r, Diagnosis& out) {
    const std::string show = fmt::format("ip route get {}", r.peer);
    switch (r.route) {
        case RouteKind::kUnicast:
            out.healthy.push_back({"route", route_text(r)});
            return true;
        case RouteKind::kNone:
            out.findings.push_back(
                {"route", Severity::kProblem,
                 fmt::format("no route to {} ({}: {})", r.peer, show, r.route_error),
                 "no interface has an address on the peer's subnet and no gateway leads there, "
                 "so not one packet leaves",
                 fmt::format("give the RDMA netdev an address on {}'s subnet (ip addr add … dev "
                             "IF), or a route (ip route add {}/32 via GATEWAY)",
                             r.peer, r.peer)});
            return false;
        case RouteKind::kUnreachable:
        case RouteKind::kProhibit:
        case RouteKind::kBlackhole:
            out.findings.push_back(
                {"route", Severity::kProblem,
                 fmt::format("a route of type {} covers {} ({}{})", route_kind_name(r.route),
                             r.peer, show,
                             r.route_error.empty() ? "" : fmt::format(": {}", r.route_error)),
                 r.route == RouteKind::kBlackhole
                     ? "the kernel discards every packet to it, silently"
                     : "the kernel refuses every packet to it before it leaves this host",
                 fmt::format("find it (ip route show table all | grep {}) and delete it (ip "
                             "route del {} PREFIX)",
                             route_kind_name(r.route), route_kind_name(r.route))});
            return false;
        case RouteKind::kOther:
            out.findings.push_back(
                {"route", Severity::kProblem,
                 fmt::format("the route lookup for {} failed: {}", r.peer, r.route_error),
                 "without a route no packet leaves",
                 fmt::format("read {} and ip route show table all", show)});
            return false;
    }
    return false;
}

bool check_interface(const ReachFacts& r, Diagnosis& out) {
    if (r.interface_up && r.carrier) {
        out.healthy.push_back({"interface", fmt::format("{} is up, with carrier", r.interface)});
        return true;
    }
    out.findings.push_back(
        {"interface", Severity::kProblem,
         r.interface_up
             ? fmt::format("{}, which the route to {} leaves by, has no carrier", r.interface,
                           r.peer)
             : fmt::format("{}, which the route to {} leaves by, is down", r.interface, r.peer),
         "packets queue on an interface that sends nothing",
         r.interface_up ? "check the cable, the switch port, or the virtual link (ip link show)"
                        : fmt::format("ip link set {} up", r.interface)});
    return false;
}

// The neighbour's layer: ARP gave no answer, or a static entry sends the frames elsewhere.
bool check_neighbour(const ReachFacts& r, Diagnosis& out) {
    const bool answered_at_all = echo_answered(r) || r.tcp == TcpOutcome::kRefused;
    const std::string on = fmt::format("{} on {}", r.next_hop, r.interface);
    if (r.neighbour == NeighbourState::kFailed || r.neighbour == NeighbourState::kIncomplete) {
        out.findings.push_back(
            {"neighbour", Severity::kProblem,
             fmt::format("ARP for {} got no answer (neighbour entry {}; {})", on,
                         neighbour_state_name(r.neighbour), echo_text(r)),
             r.gateway.empty()
                 ? "no host on that link answers for the peer's address: it is down, on "
                   "another link or VLAN, or ignores ARP (arp_ignore, arp off)"
                 : "the gateway does not answer on that link",
             fmt::format("on {}: ip addr show (is the address there?), sysctl "
                         "net.ipv4.conf.all.arp_ignore (0 answers), ip link (is ARP on?); "
                         "here: ip neigh show {}",
                         r.gateway.empty() ? "the peer" : "the gateway", r.next_hop)});
        return false;
    }
    if (r.neighbour == NeighbourState::kPermanent && !answered_at_all) {
        out.findings.push_back(
            {"neighbour", Severity::kProblem,
             fmt::format("a static neighbour entry on {} sends {}'s frames to {} and nothing "
                         "answers through it ({})",
                         r.interface, r.next_hop, r.link_address, echo_text(r)),
             "ARP is never asked for a PERMANENT entry: if that is not the peer's link address, "
             "every frame goes to a host that is not there",
             fmt::format("compare with the peer's (ip link show on it); delete the entry (ip "
                         "neigh del {} dev {}) and let ARP learn it",
                         r.next_hop, r.interface)});
        return false;
    }
    if (r.neighbour != NeighbourState::kAbsent)
        out.healthy.push_back({"neighbour", fmt::format("{} is {} ({})", on, r.link_address,
                                                        neighbour_state_name(r.neighbour))});
    return true;
}

void check_port(const ReachFacts& r, Diagnosis& out) {
    const std::string where = fmt::format("{} port {}", r.peer, r.port);
    const std::string respond = fmt::format(
        "run rdma-doctor --respond there (--pair-port {} if it is not the default)", r.port);
    if (echo_answered(r)) out.healthy.push_back({"echo", echo_text(r)});
    switch (r.tcp) {
        case TcpOutcome::kRefused:
            out.findings.push_back(
                {"tcp-port", Severity::kProblem, fmt::format("{} refused the connection", where),
                 "the host is up and answers, but nothing listens on that port", respond});
            return;
        case TcpOutcome::kSilent:
            if (echo_answered(r))
                out.findings.push_back(
                    {"firewall", Severity::kProblem,
                     fmt::format("{} answers ICMP echo, but TCP to {} got no answer within "
                                 "{:.1f} s",
                                 r.peer, where, r.connect_wait_s),
                     "a closed port answers with a reset; silence means a firewall drops the "
                     "connection (on the peer, here, or between)",
                     fmt::format("on the peer: nft list ruleset (or iptables -L -v -n): find "
                                 "the rule that drops TCP port {} and let the pair's port through",
                                 r.port)});
            else
                out.findings.push_back(
                    {"firewall", Severity::kProblem,
                     fmt::format("{} answers ARP ({}) but neither ICMP echo nor TCP to {} "
                                 "within {:.1f} s",
                                 r.peer, r.link_address, where, r.connect_wait_s),
                     "the host is on the link and drops everything that comes in: a firewall "
                     "(or a host stopped above the link)",
                     "on the peer: nft list ruleset (or iptables -L -v -n), and whether it is "
                     "up at all"});
            return;
        case TcpOutcome::kUnreachable:
        case TcpOutcome::kOther:
            out.findings.push_back(
                {"tcp-port", Severity::kProblem,
                 fmt::format("connecting to {} failed: {} ({})", where, r.tcp_error, echo_text(r)),
                 "an ICMP error came back, or the kernel gave up",
                 "a firewall that rejects (nft/iptables reject rules) on the peer or between"});
            return;
        case TcpOutcome::kConnected:
            out.healthy.push_back({"tcp-port", fmt::format("{} accepts", where)});
            return;
    }
}

}  // namespace

void diagnose_reach(const ReachFacts& reach, Diagnosis& out) {
    if (!reach.layers_read) {  // the TCP outcome alone
        check_port(reach, out);
        return;
    }
    if (!check_route(reach, out)) return;
    if (!check_interface(reach, out)) return;
    if (!check_neighbour(reach, out)) return;
    check_port(reach, out);
}

records::DoctorReach reach_record(const ReachFacts& r) {
    return records::DoctorReach{.peer = r.peer,
                                .port = r.port,
                                .layers_read = r.layers_read,
                                .tcp = tcp_outcome_name(r.tcp),
                                .tcp_error = r.tcp_error,
                                .route = route_kind_name(r.route),
                                .route_error = r.route_error,
                                .interface = r.interface,
                                .source = r.source,
                                .gateway = r.gateway,
                                .interface_up = r.interface_up,
                                .carrier = r.carrier,
                                .next_hop = r.next_hop,
                                .neighbour = neighbour_state_name(r.neighbour),
                                .link_address = r.link_address,
                                .echoes_sent = r.echoes_sent,
                                .echoes_answered = r.echoes_answered,
                                .echo_error = r.echo_error};
}

}  // namespace rdmalab::doctor
