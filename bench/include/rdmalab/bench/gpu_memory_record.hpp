// gpu-memory-bench's record: the numbers its measurements give (allocation, dma-buf export,
// fill/verify, the staging copies against the copy ceiling) as the typed record it writes
// (records::GpuMemoryRecord, records/gpu_memory.hpp), and the Markdown report made from that
// record alone. Pure logic: the tool measures and prints.
#pragma once

#include "rdmalab/records/gpu_memory.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rdmalab::bench::gpu_memory {

inline constexpr const char* kToolVersion = "gpu-memory-bench 0.1";
// The ceiling queues this many copies back to back before one synchronize, so the time of one
// launch and one wait is spread over them and only the copy engine's speed is left.
inline constexpr int kCeilingCopies = 4;
inline constexpr const char* kUnits =
    "GB/s = 10^9 bytes/s; times in microseconds (us); sizes in bytes (B)";

// Times are kept to the nanosecond (the clock's resolution), speeds and ratios to 4 decimals:
// the digits past those are noise, and a results file is read by people.
double rounded(double value, double unit);
double microseconds(double seconds);
double gigabytes_per_second(double bytes, double seconds);
std::string percent(double fraction);  // 0.5 → "50.0%"

// ---- What the measurements give.

// One size's allocation medians, µs: the record's row as it is.
using AllocationRow = records::GpuAllocationRow;

struct ExportResult {
    std::size_t size = 0;
    bool exported = false;
    std::string call;  // the export call that gave the fd
    std::uint64_t offset = 0;
    std::string failure;   // why there is no dma-buf: recorded, it is a fact of this machine
    double median_us = 0;  // of the export call alone (closing the fd is not counted)
    int attempts = 0;
};

struct KernelResult {
    std::size_t size = 0;
    double fill_us = 0, verify_us = 0;
    std::size_t wrong_seed_caught_at = 0;
};

struct CopyPair {  // one size's copy times, each direction, in µs
    double h2d_us = 0, d2h_us = 0;
};

// The sizes whose allocation is measured: the smallest and largest of --sizes (sorted) and the
// ceiling's, each once, in order.
std::vector<std::size_t> allocation_sizes(const std::vector<std::size_t>& sizes,
                                          std::size_t ceiling_size);

// ---- The record's parts, in its order.

records::GpuMemoryConfig config_record(const std::string& mem,
                                       const std::vector<std::size_t>& sizes, int reps,
                                       std::size_t ceiling_size);
// "memory": what was measured (buffer_size is added once the buffer is made).
records::GpuMemoryFacts memory_record(const std::string& kind, bool gpu,
                                      const std::string& description, const std::string& copy_call,
                                      const std::string& pinned_call);
records::GpuAllocation allocation_record(double first_device_memory_us,
                                         const std::vector<AllocationRow>& rows);
// "fd from CALL (offset N); each fd closed", or "failed: WHY".
std::string export_outcome(const ExportResult& exported);
records::GpuExport export_record(const ExportResult& exported);
// worker: what ran the kernels ("GPU kernels", "the CPU (host backend)").
records::GpuKernels kernel_record(const std::string& worker, const KernelResult& kernels);
// The ceiling: kCeilingCopies copies of ceiling_size bytes, the best time of each direction.
records::GpuCeiling ceiling_record(std::size_t ceiling_size, const CopyPair& ceiling);
// One size's copies: GB/s, µs, and each direction's fraction of the ceiling's GB/s.
records::GpuCopyRow copy_numbers(std::size_t size, const CopyPair& times,
                                 const CopyPair& ceiling_times, std::size_t ceiling_bytes);
// How the copies were verified before they were timed.
std::string copy_verification(std::size_t pinned_bytes, std::size_t pageable_bytes);
records::GpuCopies copies_record(const std::string& copy_call, const std::string& verification,
                                 const records::GpuCeiling& ceiling,
                                 const std::vector<records::GpuCopyRow>& pinned_rows,
                                 const records::GpuCopyRow& pageable);
// The whole record: the tool and units, then the parts above and the environment.
records::GpuMemoryRecord run_record(const records::GpuMemoryConfig& config,
                                    const records::GpuMemoryFacts& memory,
                                    const records::GpuMemoryEnvironment& environment,
                                    const records::GpuAllocation& allocation,
                                    const records::GpuExport& dmabuf_export,
                                    const records::GpuKernels& kernels,
                                    const records::GpuCopies& copies);

// ---- The Markdown report.

// The report's title, from the record's "memory".
std::string title(const records::GpuMemoryFacts& memory);
// Text for a table cell: '|' escaped.
std::string markdown_cell(const std::string& text);
// The Markdown report, from the record alone, so it says exactly what the JSON file says.
std::string to_markdown(const records::GpuMemoryRecord& record);

}  // namespace rdmalab::bench::gpu_memory
