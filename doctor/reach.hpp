// rdma-doctor when the peer cannot be reached at all: before any RDMA, the pair's TCP
// connection failed. The facts say how far an IP packet to the peer gets, layer by layer — the
// route and the interface it leaves by, the neighbour entry of the next hop, an ICMP echo, the
// TCP port — and the rules (reach_rules.cpp, no I/O, unit-tested in doctor_reach_test.cpp) name
// the first layer that fails, with its fix. reach_probe.cpp reads a real host; the same worlds,
// broken for real between two lab hosts, are tests/wire/doctor-pair.sh.
#pragma once

#include "doctor.hpp"

#include "rdmalab/records/doctor.hpp"

#include <string>

namespace rdmalab::doctor {

// What the kernel's route lookup for the peer gave (`ip route get PEER`).
enum class RouteKind {
    kUnicast,      // a route: out of an interface, directly or through a gateway
    kNone,         // no route at all (ENETUNREACH)
    kUnreachable,  // a route of type unreachable covers the peer (EHOSTUNREACH)
    kProhibit,     // type prohibit (EACCES)
    kBlackhole,    // type blackhole: packets vanish with no error
    kOther,        // another error; route_error says which
};

// The next hop's neighbour entry (`ip neigh`), after the connection and the echoes tried it.
enum class NeighbourState {
    kAbsent,      // no entry at all
    kIncomplete,  // ARP asked, no answer yet
    kFailed,      // ARP asked and gave up: nobody answered for that address on that link
    kReachable,   // a link address learnt by ARP (REACHABLE, STALE, DELAY or PROBE)
    kPermanent,   // a static entry someone made: ARP is never asked
    kNoArp,       // the interface does not use ARP
};

enum class TcpOutcome {
    kConnected,
    kRefused,      // a RST came back: the host is there, nothing listens on the port
    kSilent,       // nothing came back within the wait: dropped somewhere
    kUnreachable,  // EHOSTUNREACH/ENETUNREACH: the kernel (or an ICMP error) said no way there
    kOther,
};

struct ReachFacts {
    std::string peer;  // "198.51.100.1"
    unsigned port = 0;
    bool layers_read = true;  // false: an IPv6 peer, whose route and neighbour are not read
    double connect_wait_s = 0;
    TcpOutcome tcp = TcpOutcome::kConnected;
    std::string tcp_error;  // strerror of the connection's errno

    RouteKind route = RouteKind::kUnicast;
    std::string route_error;   // strerror, for kNone…kOther
    std::string interface;     // "eth0": the interface the route leaves by
    std::string source;        // the address packets to the peer leave from
    std::string gateway;       // "" when the peer is on the interface's own link
    bool interface_up = true;  // IFF_UP and operstate not down
    bool carrier = true;       // the link under it is up

    std::string next_hop;  // the peer, or the gateway
    NeighbourState neighbour = NeighbourState::kAbsent;
    std::string link_address;  // the neighbour entry's, "52:54:00:5e:01:01"; "" when none

    unsigned echoes_sent = 0;
    unsigned echoes_answered = 0;
    std::string echo_error;  // why no echo could be sent ("" when they were)
};

const char* route_kind_name(RouteKind kind);
const char* neighbour_state_name(NeighbourState state);
const char* tcp_outcome_name(TcpOutcome outcome);

// Appends one finding — the first layer on the way to the peer that fails — and the layers that
// passed as healthy checks.
void diagnose_reach(const ReachFacts& reach, Diagnosis& out);

// The facts for --json ("reach" in the report).
records::DoctorReach reach_record(const ReachFacts& reach);

}  // namespace rdmalab::doctor
