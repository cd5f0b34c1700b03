// Fuzzes gpu::parse_memory_spec, which reads --mem and the memory kind an rdma-bench server
// names in its hello ("host", "cuda:0", "rocm:1"). Checks: an accepted spec has a device number
// >= 0 (host: none), and its printed form parses back to the same spec.
#include "fuzz.hpp"
#include "rdmalab/gpu/memory.hpp"

using namespace rdmalab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto spec = gpu::parse_memory_spec(fuzz::text(data, size));
    if (!spec) return 0;
    FUZZ_CHECK(spec->device >= 0);
    const auto again = gpu::parse_memory_spec(gpu::to_string(*spec));
    FUZZ_CHECK(again && again->kind == spec->kind && again->device == spec->device);
    return 0;
}
