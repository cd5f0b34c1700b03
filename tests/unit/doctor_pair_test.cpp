// Unit tests of rdma-doctor's pair rules (doctor/pair_rules.cpp): a healthy made-up pair has no
// finding, and each way of breaking it gives the one finding that names the cause, with its fix.
// The same worlds, broken for real between two lab hosts, are tests/wire/doctor-pair.sh.
#include "pair.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace rdmalab::doctor;

namespace {

PairEnd lab_end(const std::string& address, const std::string& mapped) {
    PairEnd end;
    end.address = address;
    end.port_name = "rxe0 port 1";
    end.netdev = "eth0";
    end.active_mtu = 1024;
    end.netdev_mtu = 1500;
    end.gids = {{0, "fe80:0000:0000:0000:5054:00ff:fe5e:0102", "RoCE v2", ""},
                {1, mapped, "RoCE v2", ""}};
    return end;
}

RoundTrip trip(unsigned index, unsigned mtu, ProbeOutcome outcome = ProbeOutcome::kVerified) {
    return {index, index, mtu, 64, outcome, outcome == ProbeOutcome::kVerified ? "" : "why"};
}

PairFacts healthy_pair() {
    PairFacts pair;
    pair.local = lab_end("198.51.100.2", "0000:0000:0000:0000:0000:ffff:c633:6402");
    pair.peer = lab_end("198.51.100.1", "0000:0000:0000:0000:0000:ffff:c633:6401");
    pair.gid_probes = {trip(1, 1024)};
    pair.mtu_probes = {trip(1, 1024)};
    pair.class_probe = ClassProbe{0, true, 0};
    return pair;
}

Diagnosis diagnosed(const PairFacts& pair) {
    Diagnosis diagnosis;
    diagnose_pair(pair, diagnosis);
    return diagnosis;
}

// The one finding of a pair broken one way, checked to be the expected one.
Finding only_finding(const PairFacts& pair, const std::string& check) {
    const Diagnosis diagnosis = diagnosed(pair);
    EXPECT_EQ(diagnosis.findings.size(), 1u);
    if (diagnosis.findings.empty()) return {};
    EXPECT_EQ(diagnosis.findings.front().check, check);
    return diagnosis.findings.front();
}

}  // namespace

TEST(DoctorPair, HealthyPairHasNoFinding) {
    const Diagnosis diagnosis = diagnosed(healthy_pair());
    EXPECT_TRUE(diagnosis.findings.empty());
    std::vector<std::string> checks;
    for (const Healthy& h : diagnosis.healthy) checks.push_back(h.check);
    EXPECT_EQ(checks, (std::vector<std::string>{"round-trip", "path-mtu", "traffic-class"}));
}

TEST(DoctorPair, NothingArrivingNamesTheFirewallOnThePeer) {
    PairFacts pair = healthy_pair();
    pair.gid_probes = {trip(1, 1024, ProbeOutcome::kNotArrived)};
    pair.mtu_probes.clear();
    pair.class_probe.reset();
    const Finding f = only_finding(pair, "roce-blocked");
    EXPECT_NE(f.what.find("never reach 198.51.100.1"), std::string::npos) << f.what;
    EXPECT_NE(f.fix.find("on 198.51.100.1"), std::string::npos) << f.fix;
    EXPECT_NE(f.fix.find("udp dport 4791 accept"), std::string::npos) << f.fix;
}

TEST(DoctorPair, NoAnswerComingBackNamesThisHostsFirewall) {
    PairFacts pair = healthy_pair();
    pair.gid_probes = {trip(1, 1024, ProbeOutcome::kNoEcho)};
    const Finding f = only_finding(pair, "roce-blocked");
    EXPECT_NE(f.fix.find("on this host"), std::string::npos) << f.fix;
}

TEST(DoctorPair, RefusedBringUpIsNamed) {
    PairFacts pair = healthy_pair();
    pair.gid_probes = {trip(1, 1024, ProbeOutcome::kRtrRefused)};
    EXPECT_NE(only_finding(pair, "round-trip").what.find("could not be brought up"),
              std::string::npos);
}

TEST(DoctorPair, DifferentMtusAtTheEndsAreTheCause) {
    PairFacts pair = healthy_pair();
    pair.local.netdev_mtu = 9000;
    pair.local.active_mtu = 4096;
    pair.mtu_probes = {trip(1, 4096, ProbeOutcome::kNoEcho), trip(1, 2048, ProbeOutcome::kNoEcho),
                       trip(1, 1024)};
    const Finding f = only_finding(pair, "mtu-mismatch");
    EXPECT_NE(f.what.find("here eth0 9000 (RDMA MTU 4096)"), std::string::npos) << f.what;
    EXPECT_NE(f.why.find("at path MTU 4096 failed"), std::string::npos) << f.why;
    EXPECT_NE(f.fix.find("sudo ip link set dev eth0 mtu 1500 here"), std::string::npos) << f.fix;
    // The other way round: the fix lowers the peer.
    pair.local.netdev_mtu = 1500;
    pair.local.active_mtu = 1024;
    pair.peer.netdev_mtu = 9000;
    pair.peer.active_mtu = 4096;
    EXPECT_NE(only_finding(pair, "mtu-mismatch").fix.find("mtu 1500 on 198.51.100.1"),
              std::string::npos);
}

TEST(DoctorPair, AHopWithASmallerMtuIsNamedWhenTheEndsAgree) {
    PairFacts pair = healthy_pair();
    pair.local.netdev_mtu = pair.peer.netdev_mtu = 9000;
    pair.local.active_mtu = pair.peer.active_mtu = 4096;
    pair.mtu_probes = {trip(1, 4096, ProbeOutcome::kNotArrived), trip(1, 2048)};
    EXPECT_NE(only_finding(pair, "path-mtu").fix.find("tracepath -n 198.51.100.1"),
              std::string::npos);
}

TEST(DoctorPair, GidIndexThatDoesNotExist) {
    PairFacts pair = healthy_pair();
    pair.requested_gid_index = 5;
    pair.gid_index_source = "NCCL_IB_GID_INDEX";
    const Finding f = only_finding(pair, "gid-index");
    EXPECT_EQ(f.severity, Severity::kProblem);
    EXPECT_NE(f.what.find("no GID at index 5 (valid: 0, 1"), std::string::npos) << f.what;
    EXPECT_NE(f.fix.find("NCCL_IB_GID_INDEX=1"), std::string::npos) << f.fix;
}

TEST(DoctorPair, LinkLocalGidIndexIsAProblemWhenItFailsAndAWarningWhenItWorks) {
    PairFacts pair = healthy_pair();
    pair.requested_gid_index = 0;
    pair.gid_index_source = "--gid-index";
    pair.gid_probes.push_back(trip(0, 1024, ProbeOutcome::kRtrRefused));
    Finding f = only_finding(pair, "gid-index");
    EXPECT_EQ(f.severity, Severity::kProblem);
    EXPECT_NE(f.what.find("IPv6 link-local"), std::string::npos) << f.what;
    EXPECT_EQ(f.fix, "--gid-index 1");
    pair.gid_probes.back().outcome = ProbeOutcome::kVerified;
    f = only_finding(pair, "gid-index");
    EXPECT_EQ(f.severity, Severity::kWarning);
}

TEST(DoctorPair, TheRightGidIndexIsHealthy) {
    PairFacts pair = healthy_pair();
    pair.requested_gid_index = 1;
    pair.gid_index_source = "NCCL_IB_GID_INDEX";
    EXPECT_TRUE(diagnosed(pair).findings.empty());
}

TEST(DoctorPair, BothEcnBitsInTheTrafficClass) {
    PairFacts pair = healthy_pair();
    pair.tclass = 3;
    pair.tclass_source = "NCCL_IB_TC";
    pair.class_probe = ClassProbe{3, true, 3};
    const Finding f = only_finding(pair, "traffic-class");
    EXPECT_NE(f.what.find("ECN 11 (CE)"), std::string::npos) << f.what;
    EXPECT_NE(f.fix.find("NCCL_IB_TC=106"), std::string::npos) << f.fix;
}

TEST(DoctorPair, ARewrittenDscpIsAWarningButCongestionMarksAreNot) {
    PairFacts pair = healthy_pair();
    pair.tclass = 106;  // DSCP 26, ECT(0)
    pair.class_probe = ClassProbe{106, true, 3 << 2 | 2};
    EXPECT_EQ(only_finding(pair, "traffic-class").severity, Severity::kWarning);
    pair.class_probe = ClassProbe{106, true, 26 << 2 | 3};  // marked CE on the way: congestion
    EXPECT_TRUE(diagnosed(pair).findings.empty());
}

TEST(DoctorPair, ARouteThroughAPortWithoutRdmaStopsThePairChecks) {
    PairFacts pair = healthy_pair();
    pair.route_problem =
        "the route to 198.51.100.1 leaves from 192.0.2.5, which no RDMA port carries";
    only_finding(pair, "pair-route");
}

TEST(DoctorPair, GidTextRoundTripsThroughBytes) {
    GidBytes bytes{};
    ASSERT_TRUE(parse_sysfs_gid("0000:0000:0000:0000:0000:ffff:c633:6401", bytes));
    EXPECT_EQ(bytes[15], 0x01);
    EXPECT_EQ(sysfs_gid_text(bytes), "0000:0000:0000:0000:0000:ffff:c633:6401");
    EXPECT_EQ(readable_gid("0000:0000:0000:0000:0000:ffff:c633:6401"), "::ffff:198.51.100.1");
    EXPECT_FALSE(parse_sysfs_gid("0000:0000:0000:0000:0000:ffff:c633", bytes));
    EXPECT_FALSE(parse_sysfs_gid("0000:0000:0000:0000:0000:ffff:c633:6401:", bytes));
    EXPECT_EQ(readable_gid("not a gid"), "not a gid");
}

TEST(DoctorPair, JsonCarriesTheProbes) {
    const rdmalab::records::DoctorPair p = pair_record(healthy_pair());
    ASSERT_EQ(p.gid_round_trips.size(), 1u);
    EXPECT_TRUE(p.gid_round_trips[0].verified);
    EXPECT_EQ(p.gid_round_trips[0].outcome, "verified");
    EXPECT_EQ(p.peer.gids[1].gid, "::ffff:198.51.100.1");
    ASSERT_TRUE(p.class_probe);
    EXPECT_EQ(p.class_probe->received_tos, 0u);
}
