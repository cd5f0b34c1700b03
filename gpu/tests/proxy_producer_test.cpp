// Unit tests of the proxy lesson's host-side pieces: the host producer against a proxy played
// here, the words for how a producer ended, and the latency legs of the report.
#include "rdmalab/gpu/proxy_producer.hpp"
#include "rdmalab/gpu/memory.hpp"
#include "rdmalab/gpu/proxy_latency.hpp"
#include "rdmalab/pattern.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace gpu = rdmalab::gpu;

namespace {

// A proxy with no NIC: completes each request as soon as its doorbell is rung.
void complete_each(gpu::ProxyRings& rings, std::uint64_t requests) {
    for (std::uint64_t taken = 0; taken < requests;) {
        gpu::ProxyRequest& slot = rings.requests[taken % gpu::kProxySlots];
        if (std::atomic_ref(slot.doorbell).load(std::memory_order_acquire) != 1) {
            std::this_thread::yield();
            continue;
        }
        ASSERT_EQ(slot.sequence, taken + 1);
        std::atomic_ref(slot.doorbell).store(0, std::memory_order_release);
        gpu::ProxyCompletion& completion = rings.completions[taken % gpu::kProxySlots];
        completion.sequence = taken + 1;
        completion.status = 0;
        ++taken;
        std::atomic_ref(rings.completions_published).store(taken, std::memory_order_release);
    }
}

}  // namespace

TEST(HostProxyProducer, WritesEveryRequestAndSeesEveryCompletion) {
    const gpu::ProducerPlan plan{
        .requests = 40, .length = 64, .in_flight = 4, .seed = 0x50, .timeout_ns = 10'000'000'000};
    gpu::DeviceMemory data({gpu::MemoryKind::kHost, 0}, plan.requests * plan.length);
    gpu::ProxySharedMemory shared({gpu::MemoryKind::kHost, 0}, plan.requests);
    {
        gpu::ProxyProducer producer(data, shared, plan);
        EXPECT_TRUE(producer.same_clock_as_proxy());
        complete_each(shared.rings(), plan.requests);
        producer.wait(std::chrono::seconds(10));
    }
    EXPECT_EQ(shared.rings().producer_state, gpu::kProducerDone);
    for (std::uint32_t k = 1; k <= plan.requests; ++k) {
        EXPECT_FALSE(
            data.find_mismatch(plan.seed + k, plan.length, (k - 1) * plan.length, plan.length))
            << "request " << k;
        const gpu::ProducerSample& sample = shared.samples()[k - 1];
        EXPECT_GT(sample.enqueued_ns, 0u);
        EXPECT_GE(sample.completion_seen_ns, sample.enqueued_ns);
    }
}

TEST(HostProxyProducer, GivesUpWhenNoCompletionComes) {
    // One request in flight and nobody completing it: the second request never finds room.
    const gpu::ProducerPlan plan{
        .requests = 2, .length = 8, .in_flight = 1, .seed = 1, .timeout_ns = 20'000'000};
    gpu::DeviceMemory data({gpu::MemoryKind::kHost, 0}, plan.requests * plan.length);
    gpu::ProxySharedMemory shared({gpu::MemoryKind::kHost, 0}, plan.requests);
    gpu::host_producer(static_cast<std::byte*>(data.data()), shared.rings(), shared.samples(),
                       plan);
    EXPECT_EQ(shared.rings().producer_state, gpu::kProducerNoRoom);
    EXPECT_EQ(shared.rings().requests[0].doorbell, 1u);
    EXPECT_STREQ(gpu::producer_outcome(shared.rings().producer_state),
                 "timed out waiting for a free slot");
}

TEST(HostProxyProducer, StopsWhenTheProxyStops) {
    const gpu::ProducerPlan plan{
        .requests = 2, .length = 8, .in_flight = 1, .seed = 1, .timeout_ns = 10'000'000'000};
    gpu::DeviceMemory data({gpu::MemoryKind::kHost, 0}, plan.requests * plan.length);
    gpu::ProxySharedMemory shared({gpu::MemoryKind::kHost, 0}, plan.requests);
    shared.rings().proxy_stopped = 1;
    gpu::host_producer(static_cast<std::byte*>(data.data()), shared.rings(), shared.samples(),
                       plan);
    EXPECT_EQ(shared.rings().producer_state, gpu::kProducerProxyStopped);
}

TEST(ProxyProducerOutcome, NamesEveryState) {
    EXPECT_STREQ(gpu::producer_outcome(gpu::kProducerDone), "saw every completion");
    EXPECT_STREQ(gpu::producer_outcome(gpu::kProducerBadCompletion),
                 "read a completion out of order or failed");
    EXPECT_STREQ(gpu::producer_outcome(99), "ended in an unknown state");
}

TEST(ProxyLatencyLegs, SplitsEachRequestIntoItsLegs) {
    // Two requests; times in ns, so each leg below is a whole number of microseconds.
    const std::vector<gpu::ProxyTimes> proxy = {
        {.seen = 3'000, .posted = 4'000, .completed = 10'000, .published = 11'000},
        {.seen = 23'000, .posted = 25'000, .completed = 33'000, .published = 34'000}};
    const gpu::ProducerSample samples[] = {{.enqueued_ns = 1'000, .completion_seen_ns = 12'000},
                                           {.enqueued_ns = 20'000, .completion_seen_ns = 36'000}};
    const auto legs = gpu::proxy_latency_legs(proxy, samples, true, true);
    ASSERT_EQ(legs.size(), 6u);
    EXPECT_EQ(legs[0].name, "producer enqueue → proxy sees the doorbell");
    EXPECT_EQ(legs[0].us, (std::vector<double>{2, 3}));
    EXPECT_EQ(legs[1].us, (std::vector<double>{1, 2}));  // the post
    EXPECT_EQ(legs[2].us, (std::vector<double>{6, 8}));  // the WRITE
    EXPECT_EQ(legs[3].us, (std::vector<double>{1, 1}));  // publishing the completion
    EXPECT_EQ(legs[4].us, (std::vector<double>{1, 2}));  // back to the producer
    EXPECT_EQ(legs[5].name, "total: the producer's round trip");
    EXPECT_EQ(legs[5].us, (std::vector<double>{11, 16}));

    // Another clock (a GPU's), no NIC: the crossings together, as round trip − proxy time.
    const auto other = gpu::proxy_latency_legs(proxy, samples, false, false);
    ASSERT_EQ(other.size(), 3u);
    EXPECT_EQ(other[0].name, "proxy sees it → completion ring written");
    EXPECT_EQ(other[0].us, (std::vector<double>{8, 11}));
    EXPECT_EQ(other[1].name, "both ring crossings (round trip − proxy time)");
    EXPECT_EQ(other[1].us, (std::vector<double>{3, 5}));
    EXPECT_EQ(other[2].us, (std::vector<double>{11, 16}));
}
