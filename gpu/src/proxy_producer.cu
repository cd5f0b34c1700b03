// The proxy lesson's GPU producer: a kernel that plays the "device" of lessons/proxy. It writes
// each request's bytes into GPU memory, publishes the request in a ring in pinned host memory
// mapped into the GPU, and waits for the CPU proxy's completion there — what a NCCL kernel does
// with its proxy thread, and an NVSHMEM kernel with the proxy transport. Only loads, stores and
// fences cross PCIe: the ring is host memory, and atomic read-modify-writes from the GPU to
// host memory are not something every platform's PCIe offers.
#include "device_pattern.hpp"
#include "kernels.hpp"
#include "rdmalab/gpu/proxy_ring.hpp"

#include <cuda_runtime.h>

namespace rdmalab::gpu {
namespace {

// The GPU's nanosecond clock. Not the CPU's clock: times from the two are never subtracted.
__device__ std::uint64_t globaltimer_ns() {
    std::uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Thread 0: reads every completion the proxy has published since the last call, checks each,
// and stamps when it was seen. Returns kProducerRunning, or kProducerBadCompletion.
__device__ std::uint32_t consume_completions(volatile ProxyRings* rings,
                                             volatile ProducerSample* samples,
                                             std::uint64_t requests, std::uint64_t& consumed) {
    // #region gpu-consume
    // A volatile load: every call reads host memory across PCIe, never a cached copy.
    const std::uint64_t published = rings->completions_published;
    if (published == consumed) return kProducerRunning;
    const std::uint64_t seen = globaltimer_ns();
    // The acquire half: the completions are read after the index that published them.
    __threadfence_system();
    if (published < consumed || published > requests || published - consumed > kProxySlots)
        return kProducerBadCompletion;
    for (; consumed < published; ++consumed) {
        volatile ProxyCompletion* completion = &rings->completions[consumed % kProxySlots];
        if (completion->sequence != consumed + 1 || completion->status != 0)
            return kProducerBadCompletion;
        samples[consumed].completion_seen_ns = seen;
    }
    return kProducerRunning;
    // #endregion gpu-consume
}

__global__ void proxy_producer_kernel(unsigned char* data, ProxyRings* shared_rings,
                                      ProducerSample* shared_samples, ProducerPlan plan) {
    volatile ProxyRings* rings = shared_rings;
    volatile ProducerSample* samples = shared_samples;
    __shared__ std::uint32_t outcome;  // thread 0 decides, every thread reads after a barrier
    std::uint64_t consumed = 0;        // thread 0's: completions read so far
    if (threadIdx.x == 0) {
        outcome = kProducerRunning;
        // The clock's tick, measured: the smallest step between two different readings.
        const std::uint64_t t0 = globaltimer_ns();
        std::uint64_t t1 = t0, t2;
        while ((t1 = globaltimer_ns()) == t0) {
        }
        while ((t2 = globaltimer_ns()) == t1) {
        }
        rings->producer_clock_step_ns = t2 - t1;
    }
    __syncthreads();
    for (std::uint64_t k = 1; k <= plan.requests; ++k) {
        volatile ProxyRequest* slot = &rings->requests[(k - 1) % kProxySlots];
        if (threadIdx.x == 0) {
            // Room for request k: fewer than in_flight outstanding and its slot free.
            const std::uint64_t deadline = globaltimer_ns() + plan.timeout_ns;
            while (outcome == kProducerRunning) {
                outcome = consume_completions(rings, samples, plan.requests, consumed);
                if (outcome != kProducerRunning) break;
                if (k - 1 - consumed < plan.in_flight && slot->doorbell == 0) break;
                if (rings->proxy_stopped != 0)
                    outcome = kProducerProxyStopped;
                else if (globaltimer_ns() > deadline)
                    outcome = kProducerNoRoom;
            }
        }
        __syncthreads();
        if (outcome != kProducerRunning) break;
        // #region gpu-publish
        // Every thread writes its share of request k's bytes in GPU memory, then fences them:
        // they are visible system-wide (to the NIC reading GPU memory, to a staging copy)
        // before anything this thread writes afterwards.
        unsigned char* bytes = data + (k - 1) * plan.length;
        for (std::uint32_t i = threadIdx.x; i < plan.length; i += blockDim.x)
            bytes[i] = device_pattern_byte(plan.seed + k, i);
        __threadfence_system();
        __syncthreads();  // every thread's bytes are written and fenced
        if (threadIdx.x == 0) {
            slot->offset = (k - 1) * plan.length;
            slot->length = plan.length;
            slot->sequence = k;
            samples[k - 1].enqueued_ns = globaltimer_ns();
            // The release half: the fields above reach host memory before the doorbell does.
            __threadfence_system();
            slot->doorbell = 1;
        }
        // #endregion gpu-publish
    }
    if (threadIdx.x == 0) {
        const std::uint64_t deadline = globaltimer_ns() + plan.timeout_ns;
        while (outcome == kProducerRunning && consumed < plan.requests) {
            outcome = consume_completions(rings, samples, plan.requests, consumed);
            if (outcome != kProducerRunning) break;
            if (consumed == plan.requests) break;
            if (rings->proxy_stopped != 0)
                outcome = kProducerProxyStopped;
            else if (globaltimer_ns() > deadline)
                outcome = kProducerNoCompletion;
        }
        if (outcome == kProducerRunning) outcome = kProducerDone;
        __threadfence_system();  // the samples before the state that says they are complete
        rings->producer_state = outcome;
    }
}

}  // namespace

int cuda_launch_proxy_producer(void* data, void* rings_device, void* samples_device,
                               const ProducerPlan& plan, void* stream) {
    proxy_producer_kernel<<<1, kProxyProducerThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<unsigned char*>(data), static_cast<ProxyRings*>(rings_device),
        static_cast<ProducerSample*>(samples_device), plan);
    return static_cast<int>(cudaGetLastError());
}

}  // namespace rdmalab::gpu
