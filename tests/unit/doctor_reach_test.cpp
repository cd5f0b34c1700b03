// Unit tests of rdma-doctor's reachability rules (doctor/reach_rules.cpp): a peer that cannot be
// reached gives exactly one finding, the first layer on the way that fails, with its fix; the
// layers below it are reported healthy. The same worlds, broken for real between two lab hosts,
// are tests/wire/doctor-pair.sh (checked in tests/vm/wire.sh).
#include "reach.hpp"

#include <gtest/gtest.h>

using namespace rdmalab::doctor;

namespace {

// Two lab hosts on one link, the responder not running: the connection refused.
ReachFacts refused_peer() {
    ReachFacts reach;
    reach.peer = "198.51.100.1";
    reach.port = 18516;
    reach.connect_wait_s = 3;
    reach.tcp = TcpOutcome::kRefused;
    reach.tcp_error = "Connection refused";
    reach.interface = "eth0";
    reach.source = "198.51.100.2";
    reach.next_hop = "198.51.100.1";
    reach.neighbour = NeighbourState::kReachable;
    reach.link_address = "52:54:00:5e:01:01";
    reach.echoes_sent = 3;
    reach.echoes_answered = 3;
    return reach;
}

Finding reach_only_finding(const ReachFacts& reach, const std::string& check) {
    Diagnosis diagnosis;
    diagnose_reach(reach, diagnosis);
    EXPECT_EQ(diagnosis.findings.size(), 1u);
    if (diagnosis.findings.empty()) return {};
    EXPECT_EQ(diagnosis.findings.front().check, check);
    return diagnosis.findings.front();
}

bool reach_healthy_has(const ReachFacts& reach, const std::string& check) {
    Diagnosis diagnosis;
    diagnose_reach(reach, diagnosis);
    for (const Healthy& h : diagnosis.healthy)
        if (h.check == check) return true;
    return false;
}

}  // namespace

TEST(DoctorReach, RefusedNamesThePortAndTheResponder) {
    const Finding f = reach_only_finding(refused_peer(), "tcp-port");
    EXPECT_NE(f.what.find("198.51.100.1 port 18516 refused"), std::string::npos) << f.what;
    EXPECT_NE(f.fix.find("rdma-doctor --respond"), std::string::npos) << f.fix;
    EXPECT_TRUE(reach_healthy_has(refused_peer(), "route"));
    EXPECT_TRUE(reach_healthy_has(refused_peer(), "neighbour"));
    EXPECT_TRUE(reach_healthy_has(refused_peer(), "echo"));
}

TEST(DoctorReach, EachRouteTypeIsItsOwnFinding) {
    for (auto [kind, name] : {std::pair{RouteKind::kUnreachable, "unreachable"},
                              std::pair{RouteKind::kProhibit, "prohibit"},
                              std::pair{RouteKind::kBlackhole, "blackhole"}}) {
        ReachFacts reach = refused_peer();
        reach.route = kind;
        reach.tcp = TcpOutcome::kOther;
        const Finding f = reach_only_finding(reach, "route");
        EXPECT_NE(f.what.find(std::string("type ") + name), std::string::npos) << f.what;
        EXPECT_NE(f.fix.find(std::string("ip route del ") + name), std::string::npos) << f.fix;
    }
    ReachFacts none = refused_peer();
    none.route = RouteKind::kNone;
    none.route_error = "Network is unreachable";
    EXPECT_NE(reach_only_finding(none, "route").what.find("no route to 198.51.100.1"),
              std::string::npos);
}

TEST(DoctorReach, AnInterfaceDownComesBeforeItsNeighbour) {
    ReachFacts reach = refused_peer();
    reach.interface_up = false;
    reach.carrier = false;
    reach.neighbour = NeighbourState::kFailed;
    const Finding f = reach_only_finding(reach, "interface");
    EXPECT_NE(f.what.find("eth0"), std::string::npos);
    EXPECT_EQ(f.fix, "ip link set eth0 up");
    reach.interface_up = true;
    EXPECT_NE(reach_only_finding(reach, "interface").what.find("no carrier"), std::string::npos);
}

TEST(DoctorReach, ArpWithoutAnswerIsTheNeighboursLayer) {
    for (NeighbourState state : {NeighbourState::kFailed, NeighbourState::kIncomplete}) {
        ReachFacts reach = refused_peer();
        reach.neighbour = state;
        reach.link_address.clear();
        reach.tcp = TcpOutcome::kUnreachable;
        reach.echoes_answered = 0;
        const Finding f = reach_only_finding(reach, "neighbour");
        EXPECT_NE(f.what.find("ARP for 198.51.100.1 on eth0 got no answer"), std::string::npos)
            << f.what;
        EXPECT_NE(f.what.find(neighbour_state_name(state)), std::string::npos) << f.what;
        EXPECT_NE(f.fix.find("arp_ignore"), std::string::npos);
    }
}

TEST(DoctorReach, AStaticEntryNobodyAnswersThroughIsNamed) {
    ReachFacts reach = refused_peer();
    reach.neighbour = NeighbourState::kPermanent;
    reach.link_address = "02:00:00:00:00:99";
    reach.tcp = TcpOutcome::kSilent;
    reach.echoes_answered = 0;
    const Finding f = reach_only_finding(reach, "neighbour");
    EXPECT_NE(f.what.find("static neighbour entry"), std::string::npos);
    EXPECT_NE(f.what.find("02:00:00:00:00:99"), std::string::npos);
    EXPECT_EQ(f.fix.find("compare"), 0u);
    EXPECT_NE(f.fix.find("ip neigh del 198.51.100.1 dev eth0"), std::string::npos);
    // A static entry that works (the peer answers through it) is no finding of its own.
    reach.echoes_answered = 3;
    EXPECT_EQ(reach_only_finding(reach, "firewall").check, "firewall");
}

TEST(DoctorReach, SilenceWithEchoesIsAFirewall) {
    ReachFacts reach = refused_peer();
    reach.tcp = TcpOutcome::kSilent;
    const Finding f = reach_only_finding(reach, "firewall");
    EXPECT_NE(f.what.find("answers ICMP echo, but TCP"), std::string::npos) << f.what;
    EXPECT_NE(f.what.find("3.0 s"), std::string::npos) << f.what;
    EXPECT_NE(f.fix.find("nft list ruleset"), std::string::npos);
    reach.echoes_answered = 0;
    EXPECT_NE(reach_only_finding(reach, "firewall").what.find("neither ICMP echo nor TCP"),
              std::string::npos);
}

TEST(DoctorReach, TheGatewayIsTheNextHop) {
    ReachFacts reach = refused_peer();
    reach.gateway = "192.0.2.254";
    reach.next_hop = "192.0.2.254";
    reach.neighbour = NeighbourState::kFailed;
    reach.echoes_answered = 0;
    reach.tcp = TcpOutcome::kUnreachable;
    const Finding f = reach_only_finding(reach, "neighbour");
    EXPECT_NE(f.what.find("ARP for 192.0.2.254"), std::string::npos) << f.what;
    EXPECT_NE(f.why.find("gateway"), std::string::npos);
}

TEST(DoctorReach, AnIpv6PeerGetsItsTcpOutcomeAlone) {
    ReachFacts reach;
    reach.peer = "2001:db8::1";
    reach.port = 18516;
    reach.layers_read = false;
    reach.tcp = TcpOutcome::kRefused;
    reach.echo_error = "not sent";
    const Finding f = reach_only_finding(reach, "tcp-port");
    EXPECT_NE(f.what.find("2001:db8::1 port 18516 refused"), std::string::npos) << f.what;
    EXPECT_FALSE(reach_healthy_has(reach, "route"));
}

TEST(DoctorReach, JsonNamesEveryLayer) {
    const rdmalab::records::DoctorReach reach = reach_record(refused_peer());
    EXPECT_EQ(reach.tcp, "refused");
    EXPECT_EQ(reach.route, "unicast");
    EXPECT_EQ(reach.neighbour, "REACHABLE");
    EXPECT_EQ(reach.echoes_answered, 3u);
}
