// rdma-doctor's pair checks: what two hosts find when they try RoCE between them. The facts
// come from probes (pair_probe.cpp: a responder on the peer, RC round trips per GID index and
// path MTU, a UD datagram whose IP header the peer reads back); the rules here turn them into
// findings with no I/O, so tests/unit/doctor_test.cpp gives each rule a pair made up to break it.
#pragma once

#include "doctor.hpp"

#include "rdmalab/records/doctor.hpp"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace rdmalab::doctor {

// One end of the pair: the RDMA port that carries the address the pair's TCP connection uses.
struct PairEnd {
    std::string address;        // "198.51.100.2"
    std::string port_name;      // "rxe0 port 1"
    std::string netdev;         // "eth0"
    unsigned active_mtu = 0;    // bytes
    unsigned netdev_mtu = 0;    // bytes; 0 unknown
    std::vector<GidFact> gids;  // the port's valid GID entries (gid in sysfs's text)
};

enum class ProbeOutcome {
    kVerified,    // the data went there and came back intact
    kRtrRefused,  // ibv_modify_qp to RTR or RTS refused the parameters (on either side)
    kNotArrived,  // the peer's receive saw nothing within its wait
    kNoEcho,      // the peer verified the data, but its answer never arrived here
    kCorrupt,     // data arrived, but not the bytes sent
};

const char* outcome_name(ProbeOutcome outcome);

// One RC connection brought up with an application's parameters, and a verified round trip.
struct RoundTrip {
    unsigned local_gid_index = 0;
    unsigned peer_gid_index = 0;
    unsigned path_mtu = 0;  // bytes
    unsigned bytes = 0;     // sent each way
    ProbeOutcome outcome = ProbeOutcome::kVerified;
    std::string detail;  // what failed: "ibv_modify_qp(RTR) on the peer: Invalid argument"…
};

// A UD datagram sent with the traffic class, and the IP header's TOS byte the peer received.
struct ClassProbe {
    unsigned sent_tclass = 0;
    bool arrived = false;
    unsigned received_tos = 0;
};

struct PairFacts {
    PairEnd local;
    PairEnd peer;
    std::string route_problem;  // non-empty: no RDMA port carries the address the route uses
    std::optional<unsigned> requested_gid_index;  // what the application is told to use
    std::string gid_index_source;                 // "--gid-index" or "NCCL_IB_GID_INDEX"
    unsigned tclass = 0;
    std::string tclass_source;          // "--tclass", "NCCL_IB_TC", or "" (the default, 0)
    std::vector<RoundTrip> gid_probes;  // small round trips, one per GID index pairing
    std::vector<RoundTrip> mtu_probes;  // on the IPv4-mapped RoCE v2 GID, largest MTU first
    std::optional<ClassProbe> class_probe;
};

// Appends the pair's findings and healthy checks to `out`.
void diagnose_pair(const PairFacts& pair, Diagnosis& out);

// The pair's facts for --json ("pair" in the report).
records::DoctorPair pair_record(const PairFacts& pair);

// "::ffff:198.51.100.1" or "fe80::5054:ff:fe5e:201" for sysfs's GID text; the text itself if it
// is not a GID.
std::string readable_gid(const std::string& sysfs_gid);

// sysfs's GID text ("fe80:0000:…", 8 groups of 4 hex digits) and the 16 bytes it stands for.
using GidBytes = std::array<unsigned char, 16>;
bool parse_sysfs_gid(const std::string& text, GidBytes& bytes);
std::string sysfs_gid_text(const GidBytes& bytes);

}  // namespace rdmalab::doctor
