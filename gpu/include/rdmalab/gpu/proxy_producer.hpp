// The GPU side of the proxy lesson (lessons/proxy): the memory a producer shares with the CPU
// proxy thread (the rings of proxy_ring.hpp and the producer's samples), and a producer that is
// a CUDA kernel. The kernel (src/proxy_producer.cu) fills each request's bytes in GPU memory,
// fences, writes a request slot in mapped pinned host memory and rings its doorbell, then waits
// for the proxy's completion by reading that memory: the model of NCCL's proxy thread and of
// NVSHMEM's proxy transport. A HIP producer is not written: --mem rocm is refused in one line.
// With host memory the producer is a host thread standing in for the kernel (host_producer,
// src/host_proxy_producer.cpp); ProxyProducer starts whichever of the two the memory asks for.
#pragma once

#include "rdmalab/gpu/memory.hpp"
#include "rdmalab/gpu/proxy_ring.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace rdmalab::gpu {

// Throws Error with one line unless a producer of this kind can run in this build: host always;
// cuda with the CUDA backend ("--mem cuda: this build has no CUDA backend …"); rocm never.
void require_proxy_producer(const MemorySpec& spec);

// ProxyRings and `samples` ProducerSamples in one allocation both sides reach: for a CUDA
// producer, pinned host memory mapped into the device's address space (cudaHostAlloc with
// cudaHostAllocMapped: the GPU's loads and stores cross PCIe to it); for a host producer,
// ordinary page-aligned memory. Zero-filled.
class ProxySharedMemory {
  public:
    ProxySharedMemory(const MemorySpec& spec, std::size_t samples);
    ~ProxySharedMemory();
    ProxySharedMemory(const ProxySharedMemory&) = delete;
    ProxySharedMemory& operator=(const ProxySharedMemory&) = delete;

    ProxyRings& rings() const { return *rings_; }  // the CPU's view
    ProducerSample* samples() const { return samples_; }
    std::size_t sample_count() const { return sample_count_; }
    // The producer's view (the same memory at the address the GPU uses).
    void* device_address() const { return device_address_; }
    std::string description() const;  // "16 request + 16 completion slots in …"

  private:
    MemorySpec spec_;
    void* allocation_ = nullptr;
    void* device_address_ = nullptr;
    ProxyRings* rings_ = nullptr;
    ProducerSample* samples_ = nullptr;
    std::size_t sample_count_ = 0;
};

// A producer kernel running on the GPU that holds `data` (CUDA memory): one block; its threads
// fill each request's bytes, thread 0 publishes the request and consumes completions. Launched
// on a stream of its own (not the memory's), so the proxy may synchronize the memory's stream
// (the staging copy) while the kernel runs.
class GpuProxyProducer {
  public:
    GpuProxyProducer(DeviceMemory& data, ProxySharedMemory& shared, const ProducerPlan& plan);
    ~GpuProxyProducer();  // waits (bounded) for the kernel; the kernel's own timeouts end it
    GpuProxyProducer(const GpuProxyProducer&) = delete;
    GpuProxyProducer& operator=(const GpuProxyProducer&) = delete;

    // Waits up to `limit` for the kernel to end; throws Error if it does not, or if the launch
    // or the kernel failed. The kernel's outcome is ProxyRings::producer_state.
    void wait(std::chrono::milliseconds limit);
    std::string description() const;  // "a CUDA kernel (1 block of 256 threads) on …"

  private:
    struct State;
    std::unique_ptr<State> state_;
};

// The clock of the proxy thread and of a host producer (steady_clock), in nanoseconds: their
// times can be subtracted. A kernel's (%globaltimer) is another clock.
std::uint64_t host_clock_ns();

// The producer as a host thread: what the kernel in src/proxy_producer.cu does, with C++
// atomics instead of volatile and __threadfence_system(). Returns once every completion has been
// seen or a wait gave up; either way its outcome is in rings.producer_state.
void host_producer(std::byte* data, ProxyRings& rings, ProducerSample* samples,
                   const ProducerPlan& plan);

// How a producer ended (a ProducerState), for a message: "timed out waiting for a free slot".
const char* producer_outcome(std::uint32_t state);

// The producer of a run: a host thread (host_producer) for host memory, else a CUDA kernel.
class ProxyProducer {
  public:
    ProxyProducer(DeviceMemory& data, ProxySharedMemory& shared, const ProducerPlan& plan);
    // Waits for the producer to end; its outcome is in the rings.
    void wait(std::chrono::milliseconds limit);
    bool same_clock_as_proxy() const { return !kernel_; }
    const std::string& description() const { return description_; }

  private:
    std::string description_;
    std::optional<GpuProxyProducer> kernel_;
    std::jthread thread_;
};

}  // namespace rdmalab::gpu
