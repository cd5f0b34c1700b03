// Connecting to a peer that may not be listening yet. The ranks of a ring start in any order and
// each connects to a neighbour that may still be connecting to its own: TcpExchange::connect_to
// waits kStartupGrace for a server that is starting; this waits as long as the caller allows.
#pragma once

#include "rdmalab/tcp_exchange.hpp"

#include <chrono>
#include <cstdint>
#include <string>

namespace rdmalab {

// TcpExchange::connect_to, tried again every 200 ms until it succeeds or `timeout` has passed;
// then its last error is thrown.
TcpExchange connect_with_patience(const std::string& address, std::uint16_t port,
                                  std::chrono::milliseconds timeout);

}  // namespace rdmalab
