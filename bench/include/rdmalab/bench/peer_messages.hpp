// What rdma-bench reads from its peer's control messages, checked before use: the hello's
// protocol and MTU, the QP endpoints, the responder depth and the memory the peer registered.
// Every function throws rdmalab::Error naming what was wrong (the fuzz target bench_control
// calls them on arbitrary messages).
#pragma once

#include "rdmalab/bench/config.hpp"
#include "rdmalab/bench/records.hpp"
#include "rdmalab/gpu/memory.hpp"
#include "rdmalab/qp_endpoint.hpp"

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rdmalab::bench {

// The peer's hello: its control protocol must be ours; its port's active MTU a valid code.
ibv_mtu peer_mtu(const Record& peer_hello);
// The endpoints message: one hex QpEndpoint per QP, of the configuration's transport, each
// advertising the peer's buffer.
std::vector<QpEndpoint> decode_endpoints(const Record& message, const BenchConfig& config);
// How many READs the peer will serve at once per QP (its responder resources): at most 255.
std::uint8_t peer_depth(const Record& message);
// How one side's buffer was had and registered, as the records keep it (copies_in_timed_loop
// is counted later, 0 here).
records::BenchMemorySide memory_record(const gpu::MemorySpec& spec, const std::string& path,
                                       const std::string& where, const std::string& copies);
// The peer's memory path, description and staging copies from its endpoints message, as a
// memory record for the peer's side (spec: the memory kind it announced in its hello).
records::BenchMemorySide peer_memory(const Record& message, const gpu::MemorySpec& spec);

}  // namespace rdmalab::bench
