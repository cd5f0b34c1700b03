// The proxy lesson's producer as a host thread (see proxy_producer.hpp): it plays the GPU kernel
// of proxy_producer.cu on a machine without one, the lab's included, with std::atomic_ref's
// release and acquire where the kernel has volatile and __threadfence_system().
#include "rdmalab/gpu/proxy_producer.hpp"
#include "rdmalab/pattern.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace rdmalab::gpu {

std::uint64_t host_clock_ns() {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
}

// For each request: wait for room, write the bytes, fill the slot, ring its doorbell; meanwhile,
// read completions.
void host_producer(std::byte* data, ProxyRings& rings, ProducerSample* samples,
                   const ProducerPlan& plan) {
    std::uint64_t consumed = 0;  // completions read (the completion ring's tail: ours alone)
    std::uint32_t outcome = kProducerRunning;
    // Reads what the proxy has published: the head index with acquire, so the completions
    // written before it (release, by the proxy) are complete when read here.
    auto consume = [&] {
        const std::uint64_t published =
            std::atomic_ref(rings.completions_published).load(std::memory_order_acquire);
        if (published == consumed) return true;
        const std::uint64_t seen = host_clock_ns();
        if (published < consumed || published > plan.requests || published - consumed > kProxySlots)
            return false;
        for (; consumed < published; ++consumed) {
            const ProxyCompletion& completion = rings.completions[consumed % kProxySlots];
            if (completion.sequence != consumed + 1 || completion.status != 0) return false;
            samples[consumed].completion_seen_ns = seen;
        }
        return true;
    };
    // Every wait is bounded, and ends early if the proxy has given up.
    auto wait_until = [&](auto ready, std::uint32_t timed_out) {
        const std::uint64_t deadline = host_clock_ns() + plan.timeout_ns;
        for (unsigned polls = 0;;) {
            if (!consume()) return outcome = kProducerBadCompletion;
            if (ready()) return outcome;
            if (std::atomic_ref(rings.proxy_stopped).load(std::memory_order_acquire) != 0)
                return outcome = kProducerProxyStopped;
            if (host_clock_ns() > deadline) return outcome = timed_out;
            if (++polls % 64 == 0) std::this_thread::yield();  // 2 CPUs in the lab: let others run
        }
    };
    // #region host-producer
    for (std::uint64_t k = 1; k <= plan.requests; ++k) {
        ProxyRequest& slot = rings.requests[(k - 1) % kProxySlots];
        auto room = [&] {
            return k - 1 - consumed < plan.in_flight &&
                   std::atomic_ref(slot.doorbell).load(std::memory_order_acquire) == 0;
        };
        if (wait_until(room, kProducerNoRoom) != kProducerRunning) break;
        const std::uint64_t offset = (k - 1) * plan.length;
        fill_pattern({data + offset, plan.length}, plan.seed + k);
        slot.offset = offset;
        slot.length = plan.length;
        slot.sequence = k;
        samples[k - 1].enqueued_ns = host_clock_ns();
        // The doorbell, with release: every write above — the request's bytes, the slot's
        // fields — happens before it for whoever sees it with acquire. Without release the
        // compiler (on any CPU) or the CPU itself (on Arm, as in a Grace Hopper) may make the
        // doorbell visible first, and the proxy would send stale bytes or a stale offset.
        std::atomic_ref(slot.doorbell).store(1, std::memory_order_release);
    }
    // #endregion host-producer
    if (outcome == kProducerRunning)
        wait_until([&] { return consumed == plan.requests; }, kProducerNoCompletion);
    if (outcome == kProducerRunning) outcome = kProducerDone;
    std::atomic_ref(rings.producer_state).store(outcome, std::memory_order_release);
}

}  // namespace rdmalab::gpu
