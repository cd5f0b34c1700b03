// Launchers for the fill and verify kernels, one set per GPU toolkit (cuda_kernels.cu built by
// nvcc, hip_kernels.hip built by hipcc). Plain C++ signatures: the backends that call them are
// compiled by the ordinary C++ compiler. The stream is the toolkit's stream handle, passed as
// void*. Each returns the toolkit's error code of the launch (0: launched).
#pragma once

#include "rdmalab/gpu/proxy_ring.hpp"

#include <cstddef>
#include <cstdint>

namespace rdmalab::gpu {

// Bytes [0, count) of device get the pattern for seed.
int cuda_launch_fill(void* device, std::size_t count, std::uint64_t seed, void* stream);
// *first_bad (device memory, set to UINT64_MAX beforehand) ends as the smallest index in
// [0, size) whose byte is wrong: the pattern below count, zero from count on.
int cuda_launch_verify(const void* device, std::size_t size, std::size_t count, std::uint64_t seed,
                       unsigned long long* first_bad, void* stream);

int hip_launch_fill(void* device, std::size_t count, std::uint64_t seed, void* stream);
int hip_launch_verify(const void* device, std::size_t size, std::size_t count, std::uint64_t seed,
                      unsigned long long* first_bad, void* stream);

// The proxy lesson's producer (proxy_producer.cu): one block of kProxyProducerThreads threads
// that fills requests 1..plan.requests in data and publishes them in the rings at rings_device
// (mapped pinned host memory, the GPU's address), its samples at samples_device.
inline constexpr unsigned kProxyProducerThreads = 256;
int cuda_launch_proxy_producer(void* data, void* rings_device, void* samples_device,
                               const ProducerPlan& plan, void* stream);

}  // namespace rdmalab::gpu
