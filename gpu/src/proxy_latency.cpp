// The proxy lesson's latency report (see proxy_latency.hpp).
#include "rdmalab/gpu/proxy_latency.hpp"

#include "rdmalab/percentile.hpp"

#include <fmt/core.h>

namespace rdmalab::gpu {

namespace {

double us(std::uint64_t from, std::uint64_t to) {
    return (static_cast<double>(to) - static_cast<double>(from)) / 1000.0;
}

}  // namespace

std::vector<LatencyLeg> proxy_latency_legs(std::span<const ProxyTimes> proxy,
                                           const ProducerSample* samples, bool same_clock,
                                           bool nic) {
    std::vector<LatencyLeg> legs;
    auto leg = [&](std::string name, auto sample) {
        LatencyLeg& added = legs.emplace_back(LatencyLeg{std::move(name), {}});
        for (std::size_t k = 0; k < proxy.size(); ++k) added.us.push_back(sample(k));
    };
    // The producer's clock and the proxy's are one clock only for a host producer: a GPU's
    // %globaltimer is another, so its two ring crossings are measured together, as the
    // producer's round trip minus the proxy's own time.
    if (same_clock)
        leg("producer enqueue → proxy sees the doorbell",
            [&](std::size_t k) { return us(samples[k].enqueued_ns, proxy[k].seen); });
    if (nic) {
        leg("proxy sees it → ibv_post_send returned",
            [&](std::size_t k) { return us(proxy[k].seen, proxy[k].posted); });
        leg("posted → completion polled (the WRITE)",
            [&](std::size_t k) { return us(proxy[k].posted, proxy[k].completed); });
        leg("completion polled → completion ring written",
            [&](std::size_t k) { return us(proxy[k].completed, proxy[k].published); });
    } else {
        leg("proxy sees it → completion ring written",
            [&](std::size_t k) { return us(proxy[k].seen, proxy[k].published); });
    }
    if (same_clock)
        leg("completion ring written → producer sees it",
            [&](std::size_t k) { return us(proxy[k].published, samples[k].completion_seen_ns); });
    else
        leg("both ring crossings (round trip − proxy time)", [&](std::size_t k) {
            return us(samples[k].enqueued_ns, samples[k].completion_seen_ns) -
                   us(proxy[k].seen, proxy[k].published);
        });
    leg("total: the producer's round trip",
        [&](std::size_t k) { return us(samples[k].enqueued_ns, samples[k].completion_seen_ns); });
    return legs;
}

void report_proxy_latency(std::string_view who, std::span<const ProxyTimes> proxy,
                          const ProxySharedMemory& shared, bool same_clock, bool nic) {
    const ProducerSample* samples = shared.samples();
    fmt::print("{}:   {:<46} {:>9} {:>9}  (µs)\n", who,
               fmt::format("latency per request, {} requests", proxy.size()), "median", "p99");
    for (const LatencyLeg& l : proxy_latency_legs(proxy, samples, same_clock, nic))
        fmt::print("{}:   {:<46} {:>9.2f} {:>9.2f}\n", who, l.name, median(l.us),
                   percentile(l.us, 0.99));
    // And the rate: every request from the first enqueue to the last completion seen.
    const double span_s =
        us(samples[0].enqueued_ns, samples[proxy.size() - 1].completion_seen_ns) / 1e6;
    fmt::print("{}: {} requests in {:.3f} ms by the producer's clock: {:.0f} requests/s\n", who,
               proxy.size(), span_s * 1e3, static_cast<double>(proxy.size()) / span_s);
    if (!same_clock)
        fmt::print("{}: the producer's clock (%globaltimer) ticks in steps of {} ns\n", who,
                   shared.rings().producer_clock_step_ns);
}

}  // namespace rdmalab::gpu
