// gpu-memory-bench's record: one run's numbers (allocation, dma-buf export, fill/verify, the
// staging copies against the copy ceiling) with the machine's facts, as a C++ type, its schema
// (kGpuMemorySchema; records/schema/gpu-memory.json) and its JSON. gpu-memory-bench writes it and
// makes its Markdown report from it (bench/gpu_memory_record.hpp), and `rdma-bench json` reads it
// through it (tool_documents.hpp). The records in gpu/results still read, byte for byte (a unit
// test reads them all). A new field: the struct, kGpuMemorySchema, to_json and
// gpu_memory_from_json, and the schema file (RDMALAB_UPDATE_SCHEMAS=1 build/bin/unit_tests).
#pragma once

#include "rdmalab/records/document.hpp"
#include "rdmalab/records/environment.hpp"
#include "rdmalab/records/schema.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rdmalab::records {

// "units": how the numbers are given, in words.
struct GpuMemoryUnits {
    std::string bandwidth = "GB/s = 10^9 bytes/s";
    std::string time = "microseconds";
    std::string size = "bytes";
    std::string of_ceiling =
        "fraction of the ceiling of the same direction, measured in the same run";
    bool operator==(const GpuMemoryUnits&) const = default;
};

struct GpuMemoryConfig {
    std::string mem{};  // --mem: "cuda:0", "host"
    std::vector<std::uint64_t> sizes{};
    int reps = 0;
    std::uint64_t ceiling_size = 0;
    int ceiling_copies = 0;
    bool operator==(const GpuMemoryConfig&) const = default;
};

// "memory": what was measured.
struct GpuMemoryFacts {
    std::string kind{};
    bool gpu = false;
    std::string description{}, copy_call{}, pinned_call{};
    std::optional<std::uint64_t> buffer_size{};  // once the buffer is made
    bool operator==(const GpuMemoryFacts&) const = default;
};

// "environment": the host's, with the device's facts in the order the backend gave them.
struct GpuMemoryEnvironment {
    Environment host{};
    std::vector<std::pair<std::string, std::string>> device{};
    bool operator==(const GpuMemoryEnvironment&) const = default;
};

struct GpuAllocationRow {  // one size's medians, µs
    std::uint64_t size = 0;
    double device_memory_us = 0;  // DeviceMemory(spec, size): its own backend, then allocate
    double device_memory_free_us = 0;
    double allocate_us = 0;  // Backend::allocate alone: allocation + zero-fill
    double release_us = 0;
    double pinned_us = 0;  // PinnedHostMemory: what the staging path's bounce buffer costs
    double pinned_free_us = 0;
    bool operator==(const GpuAllocationRow&) const = default;
};
struct GpuAllocation {
    double first_device_memory_us = 0;  // the run's first DeviceMemory, backend start-up included
    std::vector<GpuAllocationRow> rows{};
    bool operator==(const GpuAllocation&) const = default;
};

struct GpuExport {  // "dmabuf_export"
    std::uint64_t size = 0;
    bool exported = false;
    std::string call{};  // the export call that gave the fd
    std::uint64_t offset = 0;
    std::string failure{};  // why there is no dma-buf
    std::string outcome{};  // the two above in words
    double median_us = 0;
    int attempts = 0;
    bool operator==(const GpuExport&) const = default;
};

struct GpuKernels {
    std::string worker{};  // "GPU kernels", "the CPU (host backend)"
    std::uint64_t size = 0;
    double fill_gbps = 0, fill_us = 0, verify_gbps = 0, verify_us = 0;
    bool verified = false;
    std::uint64_t wrong_seed_caught_at = 0;
    bool operator==(const GpuKernels&) const = default;
};

struct GpuCeiling {
    std::uint64_t size = 0;
    int copies = 0;
    std::string statistic{};  // "best of reps"
    double h2d_gbps = 0, h2d_us = 0, d2h_gbps = 0, d2h_us = 0;
    bool operator==(const GpuCeiling&) const = default;
};
struct GpuCopyRow {  // one size's copies, each direction
    std::uint64_t size = 0;
    double h2d_gbps = 0, h2d_us = 0, h2d_of_ceiling = 0;
    double d2h_gbps = 0, d2h_us = 0, d2h_of_ceiling = 0;
    bool operator==(const GpuCopyRow&) const = default;
};
struct GpuCopies {
    std::string method{};
    bool verified = false;
    std::string verification{};
    GpuCeiling ceiling{};
    std::vector<GpuCopyRow> pinned{};
    GpuCopyRow pageable{};
    bool operator==(const GpuCopies&) const = default;
};

struct GpuMemoryRecord {
    std::string tool{};  // "gpu-memory-bench 0.1"
    GpuMemoryUnits units{};
    GpuMemoryConfig config{};
    GpuMemoryFacts memory{};
    GpuMemoryEnvironment environment{};
    GpuAllocation allocation{};
    GpuExport dmabuf_export{};
    GpuKernels kernels{};
    GpuCopies copies{};
    bool operator==(const GpuMemoryRecord&) const = default;
};

Json to_json(const GpuMemoryRecord& record);
// The record's object → the record, checked against kGpuMemorySchema first; throws
// rdmalab::Error naming where and the field.
GpuMemoryRecord gpu_memory_from_json(const Json& object, const std::string& where);
// Whether a document's "tool" names gpu-memory-bench.
bool is_gpu_memory_record(const Json& object);

extern const std::vector<Field> kGpuMemorySchema;

}  // namespace rdmalab::records
