// The proxy lesson's latency report: each request's time split into its legs — producer to
// proxy, the proxy's post, the WRITE, the completion's way back — as median and p99 over all
// requests, and the rate. The proxy's times are steady_clock's (host_clock_ns); a host
// producer's are too, a kernel's are the GPU's own clock, so with a GPU producer the two ring
// crossings are measured together.
#pragma once

#include "rdmalab/gpu/proxy_producer.hpp"
#include "rdmalab/gpu/proxy_ring.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rdmalab::gpu {

// What the proxy did with request k, in its clock (host_clock_ns).
struct ProxyTimes {
    std::uint64_t seen = 0, posted = 0, completed = 0, published = 0;
};

// One leg of a request's way, in microseconds, one sample per request.
struct LatencyLeg {
    std::string name;
    std::vector<double> us;
};

// The legs, in the order they happen, then the producer's whole round trip. `samples` holds one
// ProducerSample per request; `same_clock`: the producer's times are the proxy's clock; `nic`:
// the proxy posted a WRITE for each request (else it completed each at once).
std::vector<LatencyLeg> proxy_latency_legs(std::span<const ProxyTimes> proxy,
                                           const ProducerSample* samples, bool same_clock,
                                           bool nic);

// Prints the legs (median and p99, nearest rank: each value was measured; the medians of the
// legs need not add up to the total's) and the rate, each line starting "who:".
void report_proxy_latency(std::string_view who, std::span<const ProxyTimes> proxy,
                          const ProxySharedMemory& shared, bool same_clock, bool nic);

}  // namespace rdmalab::gpu
