// gpu-memory-bench's record and report: see gpu_memory_record.hpp.
#include "rdmalab/bench/gpu_memory_record.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace rdmalab::bench::gpu_memory {

double rounded(double value, double unit) {
    return std::round(value / unit) * unit;
}
double microseconds(double seconds) {
    return rounded(seconds * 1e6, 1e-3);
}
double gigabytes_per_second(double bytes, double seconds) {
    return rounded(bytes / seconds / 1e9, 1e-4);
}

std::string percent(double fraction) {
    return fmt::format("{:.1f}%", fraction * 100);
}

std::vector<std::size_t> allocation_sizes(const std::vector<std::size_t>& sizes,
                                          std::size_t ceiling_size) {
    std::vector<std::size_t> chosen = {sizes.front(), sizes.back(), ceiling_size};
    std::sort(chosen.begin(), chosen.end());
    chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
    return chosen;
}

records::GpuMemoryConfig config_record(const std::string& mem,
                                       const std::vector<std::size_t>& sizes, int reps,
                                       std::size_t ceiling_size) {
    return {.mem = mem,
            .sizes = {sizes.begin(), sizes.end()},
            .reps = reps,
            .ceiling_size = ceiling_size,
            .ceiling_copies = kCeilingCopies};
}

records::GpuMemoryFacts memory_record(const std::string& kind, bool gpu,
                                      const std::string& description, const std::string& copy_call,
                                      const std::string& pinned_call) {
    return {.kind = kind,
            .gpu = gpu,
            .description = description,
            .copy_call = copy_call,
            .pinned_call = pinned_call};
}

records::GpuAllocation allocation_record(double first_device_memory_us,
                                         const std::vector<AllocationRow>& rows) {
    return {.first_device_memory_us = first_device_memory_us, .rows = rows};
}

std::string export_outcome(const ExportResult& exported) {
    return exported.exported ? fmt::format("fd from {} (offset {}); each fd closed", exported.call,
                                           exported.offset)
                             : fmt::format("failed: {}", exported.failure);
}

records::GpuExport export_record(const ExportResult& exported) {
    return {.size = exported.size,
            .exported = exported.exported,
            .call = exported.call,
            .offset = exported.offset,
            .failure = exported.failure,
            .outcome = export_outcome(exported),
            .median_us = exported.median_us,
            .attempts = exported.attempts};
}

records::GpuKernels kernel_record(const std::string& worker, const KernelResult& kernels) {
    const double size = static_cast<double>(kernels.size);
    return {.worker = worker,
            .size = kernels.size,
            .fill_gbps = gigabytes_per_second(size, kernels.fill_us / 1e6),
            .fill_us = kernels.fill_us,
            .verify_gbps = gigabytes_per_second(size, kernels.verify_us / 1e6),
            .verify_us = kernels.verify_us,
            .verified = true,
            .wrong_seed_caught_at = kernels.wrong_seed_caught_at};
}

records::GpuCeiling ceiling_record(std::size_t ceiling_size, const CopyPair& ceiling) {
    const double bytes = static_cast<double>(ceiling_size * kCeilingCopies);
    return {.size = ceiling_size,
            .copies = kCeilingCopies,
            .statistic = "best of reps",
            .h2d_gbps = gigabytes_per_second(bytes, ceiling.h2d_us / 1e6),
            .h2d_us = ceiling.h2d_us,
            .d2h_gbps = gigabytes_per_second(bytes, ceiling.d2h_us / 1e6),
            .d2h_us = ceiling.d2h_us};
}

records::GpuCopyRow copy_numbers(std::size_t size, const CopyPair& times,
                                 const CopyPair& ceiling_times, std::size_t ceiling_bytes) {
    const double h2d = gigabytes_per_second(static_cast<double>(size), times.h2d_us / 1e6);
    const double d2h = gigabytes_per_second(static_cast<double>(size), times.d2h_us / 1e6);
    const double h2d_ceiling =
        gigabytes_per_second(static_cast<double>(ceiling_bytes), ceiling_times.h2d_us / 1e6);
    const double d2h_ceiling =
        gigabytes_per_second(static_cast<double>(ceiling_bytes), ceiling_times.d2h_us / 1e6);
    return {.size = size,
            .h2d_gbps = h2d,
            .h2d_us = times.h2d_us,
            .h2d_of_ceiling = rounded(h2d / h2d_ceiling, 1e-5),
            .d2h_gbps = d2h,
            .d2h_us = times.d2h_us,
            .d2h_of_ceiling = rounded(d2h / d2h_ceiling, 1e-5)};
}

std::string copy_verification(std::size_t pinned_bytes, std::size_t pageable_bytes) {
    return fmt::format(
        "pattern through H2D checked on the device, back through D2H checked on the host "
        "(pinned {} B, pageable {} B)",
        pinned_bytes, pageable_bytes);
}

records::GpuCopies copies_record(const std::string& copy_call, const std::string& verification,
                                 const records::GpuCeiling& ceiling,
                                 const std::vector<records::GpuCopyRow>& pinned_rows,
                                 const records::GpuCopyRow& pageable) {
    return {.method = fmt::format("{}: one copy + synchronize per message (the staging path), "
                                  "median of reps",
                                  copy_call),
            .verified = true,
            .verification = verification,
            .ceiling = ceiling,
            .pinned = pinned_rows,
            .pageable = pageable};
}

records::GpuMemoryRecord run_record(const records::GpuMemoryConfig& config,
                                    const records::GpuMemoryFacts& memory,
                                    const records::GpuMemoryEnvironment& environment,
                                    const records::GpuAllocation& allocation,
                                    const records::GpuExport& dmabuf_export,
                                    const records::GpuKernels& kernels,
                                    const records::GpuCopies& copies) {
    return {.tool = kToolVersion,
            .units = {},
            .config = config,
            .memory = memory,
            .environment = environment,
            .allocation = allocation,
            .dmabuf_export = dmabuf_export,
            .kernels = kernels,
            .copies = copies};
}

std::string title(const records::GpuMemoryFacts& memory) {
    if (!memory.gpu)
        return fmt::format(
            "host memory, not a GPU: {} copies and CPU fill/verify (pinned buffers: {})",
            memory.copy_call, memory.pinned_call);
    return fmt::format("{}: {} copies, pinned host memory from {}", memory.description,
                       memory.copy_call, memory.pinned_call);
}

std::string markdown_cell(const std::string& text) {
    std::string cell;
    for (char c : text) cell += c == '|' ? std::string("\\|") : std::string(1, c);
    return cell;
}

std::string to_markdown(const records::GpuMemoryRecord& r) {
    const records::Environment& env = r.environment.host;
    std::string md = fmt::format("# gpu-memory-bench: {}\n\n", title(r.memory));
    md += fmt::format("{} on {} (kernel {}), {} reps per number; {}.\n\n", env.date, env.host,
                      env.kernel, r.config.reps, kUnits);

    md += "## Environment\n\n| fact | value |\n|---|---|\n";
    md += fmt::format("| memory | {} |\n", markdown_cell(r.memory.description));
    for (const auto& [key, value] : r.environment.device)
        md += fmt::format("| {} | {} |\n", key, markdown_cell(value));
    md += fmt::format("| tool | {} |\n\n", env.tool_version);

    md += fmt::format(
        "## Allocation\n\nMedian us. DeviceMemory = a new backend (device set-up, stream) + "
        "allocate + zero-fill; Backend::allocate = allocate + zero-fill on a started backend; "
        "PinnedHostMemory = the staging path's bounce buffer. The first DeviceMemory of the run "
        "took {:.1f} us (backend start-up included: driver and context on a GPU).\n\n",
        r.allocation.first_device_memory_us);
    md +=
        "| size (B) | DeviceMemory | ~DeviceMemory | Backend::allocate | Backend::release | "
        "PinnedHostMemory | ~PinnedHostMemory |\n|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const AllocationRow& row : r.allocation.rows)
        md += fmt::format("| {} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} |\n",
                          row.size, row.device_memory_us, row.device_memory_free_us,
                          row.allocate_us, row.release_us, row.pinned_us, row.pinned_free_us);

    const records::GpuExport& dmabuf = r.dmabuf_export;
    md +=
        fmt::format("\n## dma-buf export\n\n{} ({} B, median {:.2f} us over {} call(s))\n",
                    markdown_cell(dmabuf.outcome), dmabuf.size, dmabuf.median_us, dmabuf.attempts);

    const records::GpuKernels& kernels = r.kernels;
    md += fmt::format(
        "\n## Fill / verify ({}, {} B, median)\n\n| step | GB/s | us |\n|---|---:|---:|\n",
        kernels.worker, kernels.size);
    md += fmt::format("| fill_pattern + synchronize | {:.2f} | {:.1f} |\n", kernels.fill_gbps,
                      kernels.fill_us);
    md += fmt::format("| find_mismatch (verified) | {:.2f} | {:.1f} |\n", kernels.verify_gbps,
                      kernels.verify_us);

    const records::GpuCopies& copies = r.copies;
    const records::GpuCeiling& ceiling = copies.ceiling;
    md += fmt::format(
        "\n## Staging copies\n\nPinned host memory, one copy + synchronize per message (the "
        "staging path), median. Ceiling: {} queued copies of {} B, one synchronize, best of "
        "reps: H2D {:.2f} GB/s, D2H {:.2f} GB/s. Copies verified: {}.\n\n",
        ceiling.copies, ceiling.size, ceiling.h2d_gbps, ceiling.d2h_gbps, copies.verification);
    md +=
        "| size (B) | H2D GB/s | H2D of ceiling | D2H GB/s | D2H of ceiling |\n"
        "|---:|---:|---:|---:|---:|\n";
    for (const records::GpuCopyRow& row : copies.pinned)
        md += fmt::format("| {} | {:.2f} | {} | {:.2f} | {} |\n", row.size, row.h2d_gbps,
                          percent(row.h2d_of_ceiling), row.d2h_gbps, percent(row.d2h_of_ceiling));
    const records::GpuCopyRow& pageable = copies.pageable;
    md += fmt::format(
        "\nFor contrast, pageable memory (std::vector, not the staging path), {} B: H2D {:.2f} "
        "GB/s ({} of ceiling), D2H {:.2f} GB/s ({}).\n",
        pageable.size, pageable.h2d_gbps, percent(pageable.h2d_of_ceiling), pageable.d2h_gbps,
        percent(pageable.d2h_of_ceiling));
    return md;
}

}  // namespace rdmalab::bench::gpu_memory
