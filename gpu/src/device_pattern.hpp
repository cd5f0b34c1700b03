// The rdmalab data pattern (common/src/pattern.cpp) as a function both host and GPU code can
// call: the GPU kernels fill and verify exactly the bytes the CPU-side lessons do.
#pragma once

#include <cstdint>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define RDMALAB_HOST_DEVICE __host__ __device__
#else
#define RDMALAB_HOST_DEVICE
#endif

namespace rdmalab::gpu {

RDMALAB_HOST_DEVICE inline unsigned char device_pattern_byte(std::uint64_t seed,
                                                             std::uint64_t index) {
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + index;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return static_cast<unsigned char>(x >> 56);
}

}  // namespace rdmalab::gpu
