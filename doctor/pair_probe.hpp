// rdma-doctor's pair probes (see pair.hpp): `--respond` on one host answers `--peer ADDR` on the
// other over a TCP connection; between them, RC connections brought up as an application would
// (GID index, path MTU, traffic class), each with a verified round trip, and a UD datagram whose
// IP header the responder reads back.
#pragma once

#include "doctor.hpp"
#include "pair.hpp"
#include "rdmalab/tcp_exchange.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace rdmalab::doctor {

inline constexpr std::uint16_t kDefaultPairPort = 18516;

struct ProbeOptions {
    std::string peer;  // the responder's numeric IP address
    std::uint16_t port = kDefaultPairPort;
    std::string device;  // "" = the port that carries the route's source address
    std::optional<unsigned> gid_index;
    std::string gid_index_source;
    unsigned tclass = 0;
    std::string tclass_source;
};

// Runs every probe over `tcp`, the connection to the responder. `host` is this host's facts
// (gather()). Throws (one line) when the responder breaks the protocol.
PairFacts probe_peer(const ProbeOptions& options, const HostFacts& host, TcpExchange tcp);

struct RespondOptions {
    std::uint16_t port = kDefaultPairPort;
    std::string device;
    std::chrono::milliseconds wait{60000};  // for the prober to come, and for each request
};

// Waits for one prober, answers its probes until it says goodbye; returns how many it answered.
unsigned respond(const RespondOptions& options);

}  // namespace rdmalab::doctor
