// HIP kernels of the GPU lessons: fill a buffer with the rdmalab pattern, and verify one (the
// pattern below count, zeros above), each a grid-stride loop on the caller's stream.
#include "device_pattern.hpp"
#include "kernels.hpp"

#include <hip/hip_runtime.h>

namespace rdmalab::gpu {
namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kMaxBlocks = 1024;

unsigned blocks_for(std::size_t count) {
    std::size_t blocks = (count + kThreads - 1) / kThreads;
    return static_cast<unsigned>(blocks < kMaxBlocks ? (blocks == 0 ? 1 : blocks) : kMaxBlocks);
}

__global__ void fill_kernel(unsigned char* device, std::size_t count, std::uint64_t seed) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
         i += stride)
        device[i] = device_pattern_byte(seed, i);
}

__global__ void verify_kernel(const unsigned char* device, std::size_t size, std::size_t count,
                              std::uint64_t seed, unsigned long long* first_bad) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < size;
         i += stride) {
        const unsigned char expected = i < count ? device_pattern_byte(seed, i) : 0;
        if (device[i] != expected) {
            atomicMin(first_bad, static_cast<unsigned long long>(i));
            return;  // later indices of this thread are larger
        }
    }
}

}  // namespace

int hip_launch_fill(void* device, std::size_t count, std::uint64_t seed, void* stream) {
    fill_kernel<<<blocks_for(count), kThreads, 0, static_cast<hipStream_t>(stream)>>>(
        static_cast<unsigned char*>(device), count, seed);
    return static_cast<int>(hipGetLastError());
}

int hip_launch_verify(const void* device, std::size_t size, std::size_t count, std::uint64_t seed,
                      unsigned long long* first_bad, void* stream) {
    verify_kernel<<<blocks_for(size), kThreads, 0, static_cast<hipStream_t>(stream)>>>(
        static_cast<const unsigned char*>(device), size, count, seed, first_bad);
    return static_cast<int>(hipGetLastError());
}

}  // namespace rdmalab::gpu
