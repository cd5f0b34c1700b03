// rdma-doctor's reachability probe: after the pair's TCP connection failed, how far a packet to
// the peer gets on this host's side — the facts diagnose_reach (reach.hpp) turns into the one
// finding that names the failing layer.
#pragma once

#include "reach.hpp"

#include <cstdint>
#include <string>

namespace rdmalab::doctor {

// The TCP layer's outcome for a connect's errno (0: connected; ETIMEDOUT: silent).
TcpOutcome tcp_outcome(int error);

// Three ICMP echoes to the peer, then the route lookup, the interface and the next hop's
// neighbour entry. `connect_error` is the errno the pair's connection ended with.
ReachFacts probe_reach(const std::string& peer, std::uint16_t port, double connect_wait_s,
                       int connect_error);

}  // namespace rdmalab::doctor
