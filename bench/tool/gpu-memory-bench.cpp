// gpu-memory-bench: measures GPU memory the way the RDMA paths use it — allocation, dma-buf export,
// the fill/verify kernels, and the staging copies against the card's own copy ceiling — and
// records the numbers with the environment (JSON, Markdown). Run `gpu-memory-bench --help`.
#include "rdmalab/bench/gpu_memory_record.hpp"
#include "rdmalab/bench/records.hpp"
#include "rdmalab/bench/sweep.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/gpu/backend.hpp"
#include "rdmalab/gpu/memory.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/percentile.hpp"

#include <fmt/core.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace {

using namespace rdmalab;
using namespace rdmalab::bench::gpu_memory;

constexpr std::size_t kMaxSize = std::size_t{1} << 30;  // --sizes and --ceiling-size: 1 GiB
constexpr std::uint64_t kKernelSeed = 0x6b;             // the fill/verify measurement
constexpr std::uint64_t kCopySeed = 0x63;               // the copy verification

struct Options {
    gpu::MemorySpec memory;
    std::vector<std::size_t> sizes = {4 << 10, 16 << 10, 64 << 10, 256 << 10,
                                      1 << 20, 4 << 20,  16 << 20, 64 << 20};
    int reps = 20;
    std::size_t ceiling_size = std::size_t{256} << 20;
    std::string json_path;
    std::string markdown_path;
};

// --- Timing --------------------------------------------------------------------------------

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// Runs work once untimed — first touch of pages, lazy loading of kernels, a GPU clocking up —
// then reps times, each timed on its own: the times in seconds.
std::vector<double> time_reps(int reps, const std::function<void()>& work) {
    work();
    std::vector<double> times;
    times.reserve(static_cast<std::size_t>(reps));
    for (int rep = 0; rep < reps; ++rep) {
        const auto start = Clock::now();
        work();
        times.push_back(seconds_since(start));
    }
    return times;
}

double best(const std::vector<double>& values) {
    return *std::min_element(values.begin(), values.end());
}

// --- The measurements ----------------------------------------------------------------------

// Medians over reps of each step, for one size. backend is one already started, so its
// allocate is timed without the start-up a new DeviceMemory pays.
AllocationRow measure_allocation(const gpu::MemorySpec& spec, gpu::Backend& backend,
                                 std::size_t size, int reps) {
    std::vector<double> construct, destroy, allocate, release, pin, unpin;
    for (int rep = -1; rep < reps; ++rep) {  // rep -1 warms up and is not kept
        auto start = Clock::now();
        std::optional<gpu::DeviceMemory> memory;
        memory.emplace(spec, size);
        const double constructed = seconds_since(start);
        start = Clock::now();
        memory.reset();
        const double destroyed = seconds_since(start);
        start = Clock::now();
        void* pointer = backend.allocate(size);
        const double allocated = seconds_since(start);
        start = Clock::now();
        backend.release(pointer);
        const double released = seconds_since(start);
        start = Clock::now();
        auto pinned = std::make_unique<gpu::PinnedHostMemory>(backend, size);
        const double pinned_seconds = seconds_since(start);
        start = Clock::now();
        pinned.reset();
        const double unpinned_seconds = seconds_since(start);
        if (rep < 0) continue;
        construct.push_back(constructed);
        destroy.push_back(destroyed);
        allocate.push_back(allocated);
        release.push_back(released);
        pin.push_back(pinned_seconds);
        unpin.push_back(unpinned_seconds);
    }
    return {size,
            microseconds(median(construct)),
            microseconds(median(destroy)),
            microseconds(median(allocate)),
            microseconds(median(release)),
            microseconds(median(pin)),
            microseconds(median(unpin))};
}

ExportResult measure_export(gpu::DeviceMemory& memory, int reps) {
    ExportResult result;
    result.size = memory.size();
    std::vector<double> times;
    for (int rep = 0; rep < reps; ++rep) {
        const auto start = Clock::now();
        gpu::DmaBufExport exported = memory.backend().export_dmabuf(memory.data(), memory.size());
        times.push_back(seconds_since(start));
        ++result.attempts;
        if (!exported.failure.empty()) {
            // The same call on the same memory that worked a moment ago: the driver is failing.
            if (result.exported)
                fail(fmt::format("dma-buf export worked {} times, then failed: {}", rep,
                                 exported.failure));
            result.failure = exported.failure;
            break;  // it will fail the same way each time
        }
        check_errno(close(exported.fd) == 0, "close(dma-buf fd)");
        result.exported = true;
        result.call = exported.call;
        result.offset = exported.offset;
    }
    result.median_us = microseconds(median(times));
    return result;
}

// Fill and verify over [0, size): both must work, or no speed is reported at all.
KernelResult measure_kernels(gpu::DeviceMemory& memory, std::size_t size, int reps) {
    KernelResult result;
    result.size = size;
    // A verify that passes anything would report a speed too: it must catch the wrong seed.
    memory.fill_pattern(kKernelSeed, size);
    memory.synchronize();
    const auto caught = memory.find_mismatch(kKernelSeed + 1, size, 0, size);
    if (!caught)
        fail(
            fmt::format("verify: find_mismatch found no wrong byte in {} bytes checked against "
                        "another seed's pattern",
                        size));
    result.wrong_seed_caught_at = *caught;
    result.fill_us = microseconds(median(time_reps(reps, [&] {
        memory.fill_pattern(kKernelSeed, size);
        memory.synchronize();
    })));
    result.verify_us = microseconds(median(time_reps(reps, [&] {
        if (auto wrong = memory.find_mismatch(kKernelSeed, size, 0, size))
            fail(fmt::format("verify: byte {} of {} is wrong after fill_pattern", *wrong, size));
    })));
    return result;
}

enum class Direction { kHostToDevice, kDeviceToHost };

void queue_copy(gpu::Backend& backend, Direction direction, void* device, std::byte* host,
                std::size_t size) {
    if (direction == Direction::kHostToDevice)
        backend.copy_to_device(device, host, size);
    else
        backend.copy_to_host(host, device, size);
}

// The staging path's copy: one copy, then wait for it, per message (before_nic_reads and, with
// the kernel's wait after it, after_nic_writes in gpu/src/registration.cpp). Median, in s.
double per_message_seconds(gpu::Backend& backend, Direction direction, void* device,
                           std::byte* host, std::size_t size, int reps) {
    return median(time_reps(reps, [&] {
        queue_copy(backend, direction, device, host, size);
        backend.synchronize();
    }));
}

// What the copy engine can do: kCeilingCopies copies queued back to back (copy_to_device and
// copy_to_host are queued on the backend's stream; only synchronize waits). Best of reps, in s.
double ceiling_seconds(gpu::Backend& backend, Direction direction, void* device, std::byte* host,
                       std::size_t size, int reps) {
    return best(time_reps(reps, [&] {
        for (int copy = 0; copy < kCeilingCopies; ++copy)
            queue_copy(backend, direction, device, host, size);
        backend.synchronize();
    }));
}

// The pattern through H2D, checked where it landed, then back through D2H into the zeroed
// host buffer, checked there: a copy that moved nothing (or the wrong bytes) cannot report a
// speed.
void verify_copies(gpu::DeviceMemory& memory, std::span<std::byte> host, const char* what) {
    gpu::Backend& backend = memory.backend();
    fill_pattern(host, kCopySeed);
    backend.copy_to_device(memory.data(), host.data(), host.size());
    backend.synchronize();
    if (auto wrong = memory.find_mismatch(kCopySeed, host.size(), 0, host.size()))
        fail(fmt::format("{} host-to-device copy of {} bytes: byte {} is wrong on the device", what,
                         host.size(), *wrong));
    std::memset(host.data(), 0, host.size());
    backend.copy_to_host(host.data(), memory.data(), host.size());
    backend.synchronize();
    if (auto wrong = find_pattern_mismatch(host, kCopySeed))
        fail(fmt::format("{} device-to-host copy of {} bytes: byte {} is wrong on the host", what,
                         host.size(), *wrong));
}

// --- The run --------------------------------------------------------------------------------

// 1. Allocation: a few sizes, the smallest and largest asked for and the ceiling's; the table
// printed as it is measured.
records::GpuAllocation allocation_section(const Options& options, gpu::Backend& backend,
                                          double first_us) {
    fmt::print(
        "\nallocation (us, median; the first DeviceMemory of the run, backend start-up "
        "included: {:.1f} us)\n",
        first_us);
    fmt::print(
        "  DeviceMemory = new backend + allocate + zero-fill; Backend::allocate = "
        "allocate + zero-fill on a started backend; PinnedHostMemory = a bounce buffer\n");
    fmt::print("  {:>12}  {:>12}  {:>13}  {:>17}  {:>16}  {:>16}  {:>17}\n", "size B",
               "DeviceMemory", "~DeviceMemory", "Backend::allocate", "Backend::release",
               "PinnedHostMemory", "~PinnedHostMemory");
    std::vector<AllocationRow> rows;
    for (std::size_t size : allocation_sizes(options.sizes, options.ceiling_size)) {
        const AllocationRow row = measure_allocation(options.memory, backend, size, options.reps);
        fmt::print("  {:>12}  {:>12.1f}  {:>13.1f}  {:>17.1f}  {:>16.1f}  {:>16.1f}  {:>17.1f}\n",
                   row.size, row.device_memory_us, row.device_memory_free_us, row.allocate_us,
                   row.release_us, row.pinned_us, row.pinned_free_us);
        std::fflush(stdout);
        rows.push_back(row);
    }
    return allocation_record(first_us, rows);
}

// 2. dma-buf export of the whole buffer.
records::GpuExport export_section(gpu::DeviceMemory& memory, int reps) {
    const ExportResult exported = measure_export(memory, reps);
    fmt::print(
        "\ndma-buf export (Backend::export_dmabuf of {} B): {} — median {:.2f} us over {} "
        "call(s){}\n",
        exported.size, export_outcome(exported), exported.median_us, exported.attempts,
        exported.exported ? "" : " (a fact of this machine, recorded; not an error)");
    std::fflush(stdout);
    return export_record(exported);
}

// 3. Fill and verify at the largest size.
records::GpuKernels kernel_section(gpu::DeviceMemory& memory, std::size_t largest, int reps,
                                   bool is_gpu) {
    const char* worker = is_gpu ? "GPU kernels" : "the CPU (host backend)";
    const KernelResult kernels = measure_kernels(memory, largest, reps);
    const records::GpuKernels record = kernel_record(worker, kernels);
    fmt::print("\nfill/verify by {}, {} B, median:\n", worker, largest);
    fmt::print("  fill_pattern + synchronize  {:>10.2f} GB/s  {:>12.1f} us\n", record.fill_gbps,
               kernels.fill_us);
    fmt::print(
        "  find_mismatch               {:>10.2f} GB/s  {:>12.1f} us  verified: no wrong "
        "byte (another seed's pattern was caught at byte {})\n",
        record.verify_gbps, kernels.verify_us, kernels.wrong_seed_caught_at);
    std::fflush(stdout);
    return record;
}

// The copy engine's ceiling, each direction, from the pinned buffer.
CopyPair measure_ceiling(gpu::DeviceMemory& memory, std::byte* pinned, std::size_t size, int reps) {
    gpu::Backend& backend = memory.backend();
    return CopyPair{microseconds(ceiling_seconds(backend, Direction::kHostToDevice, memory.data(),
                                                 pinned, size, reps)),
                    microseconds(ceiling_seconds(backend, Direction::kDeviceToHost, memory.data(),
                                                 pinned, size, reps))};
}

// 4. Copies: verified first, then timed: the ceiling, the staging copies of each size from
// pinned memory, and pageable memory for contrast.
records::GpuCopies copy_section(const Options& options, gpu::DeviceMemory& memory,
                                std::span<std::byte> pinned, bool is_gpu) {
    gpu::Backend& backend = memory.backend();
    const std::size_t largest = options.sizes.back();
    const int reps = options.reps;
    std::vector<std::byte> pageable(largest);
    verify_copies(memory, pinned, "pinned");
    verify_copies(memory, std::span(pageable), "pageable");
    const std::string verification = copy_verification(pinned.size(), largest);
    fmt::print("\ncopies verified: {}\n", verification);

    const CopyPair ceiling = measure_ceiling(memory, pinned.data(), options.ceiling_size, reps);
    const std::size_t ceiling_bytes = options.ceiling_size * kCeilingCopies;
    const records::GpuCeiling ceiling_numbers = ceiling_record(options.ceiling_size, ceiling);
    fmt::print(
        "copy ceiling ({} queued copies of {} B, one synchronize, best): H2D {:.2f} GB/s, "
        "D2H {:.2f} GB/s\n",
        kCeilingCopies, options.ceiling_size, ceiling_numbers.h2d_gbps, ceiling_numbers.d2h_gbps);
    fmt::print(
        "staging copies ({}, pinned host memory, one copy + synchronize per message, "
        "median; ratio to the ceiling of the same direction):\n",
        backend.copy_call());
    fmt::print("  {:>12}  {:>10}  {:>10}  {:>10}  {:>10}\n", "size B", "H2D GB/s", "of ceiling",
               "D2H GB/s", "of ceiling");
    // Both directions of one message size, from one host buffer, in microseconds.
    auto both_directions = [&](std::byte* host, std::size_t size) {
        return CopyPair{microseconds(per_message_seconds(backend, Direction::kHostToDevice,
                                                         memory.data(), host, size, reps)),
                        microseconds(per_message_seconds(backend, Direction::kDeviceToHost,
                                                         memory.data(), host, size, reps))};
    };
    std::vector<records::GpuCopyRow> pinned_rows;
    for (std::size_t size : options.sizes) {
        records::GpuCopyRow row =
            copy_numbers(size, both_directions(pinned.data(), size), ceiling, ceiling_bytes);
        fmt::print("  {:>12}  {:>10.2f}  {:>10}  {:>10.2f}  {:>10}\n", size, row.h2d_gbps,
                   percent(row.h2d_of_ceiling), row.d2h_gbps, percent(row.d2h_of_ceiling));
        std::fflush(stdout);
        pinned_rows.push_back(std::move(row));
    }
    const records::GpuCopyRow pageable_record =
        copy_numbers(largest, both_directions(pageable.data(), largest), ceiling, ceiling_bytes);
    if (!is_gpu)
        fmt::print("  (host memory: sizes that stay in the CPU's caches can beat the ceiling)\n");
    fmt::print(
        "pageable std::vector, for contrast (not the staging path), {} B: H2D {:.2f} GB/s "
        "({} of ceiling), D2H {:.2f} GB/s ({} of ceiling)\n",
        largest, pageable_record.h2d_gbps, percent(pageable_record.h2d_of_ceiling),
        pageable_record.d2h_gbps, percent(pageable_record.d2h_of_ceiling));
    return copies_record(backend.copy_call(), verification, ceiling_numbers, pinned_rows,
                         pageable_record);
}

// 5. The environment, read now: right after the copies the PCIe link is still trained up.
records::GpuMemoryEnvironment environment_section(gpu::Backend& backend) {
    records::GpuMemoryEnvironment environment{.host = records::host_environment(kToolVersion),
                                              .device = backend.facts()};
    const records::Environment& host = environment.host;
    fmt::print("\nenvironment: host {}, kernel {}, {}, {}\n", host.host, host.kernel, host.date,
               kToolVersion);
    for (const auto& [name, value] : environment.device) fmt::print("  {}: {}\n", name, value);
    return environment;
}

int run(const Options& options) {
    const std::size_t largest = options.sizes.back();
    const int reps = options.reps;

    // The first allocation starts the backend (driver, context): timed apart, and the place a
    // machine without the GPU asked for says so, before anything is printed.
    auto start = Clock::now();
    gpu::DeviceMemory first(options.memory, options.sizes.front());
    const double first_us = microseconds(seconds_since(start));
    gpu::Backend& first_backend = first.backend();
    const bool is_gpu = options.memory.kind != gpu::MemoryKind::kHost;
    records::GpuMemoryFacts memory_facts =
        memory_record(gpu::to_string(options.memory), is_gpu, first.description(),
                      first_backend.copy_call(), first_backend.pinned_call());
    fmt::print("gpu-memory-bench: {}\n", title(memory_facts));
    fmt::print("units: {}; {} reps per number, after one warm-up\n", kUnits, reps);
    std::fflush(stdout);

    const records::GpuAllocation allocation = allocation_section(options, first_backend, first_us);
    // One buffer serves the rest: the kernels and the copies of each size use its start, the
    // ceiling all of it. The pinned buffer comes from the same backend and goes before it.
    const std::size_t buffer_size = std::max(largest, options.ceiling_size);
    gpu::DeviceMemory memory(options.memory, buffer_size);
    gpu::PinnedHostMemory pinned(memory.backend(), buffer_size);
    memory_facts.buffer_size = buffer_size;
    const records::GpuExport dmabuf = export_section(memory, reps);
    const records::GpuKernels kernels = kernel_section(memory, largest, reps, is_gpu);
    const records::GpuCopies copies =
        copy_section(options, memory, std::span(pinned.data(), buffer_size), is_gpu);
    const records::GpuMemoryEnvironment environment = environment_section(memory.backend());

    const records::GpuMemoryRecord record = run_record(
        config_record(gpu::to_string(options.memory), options.sizes, reps, options.ceiling_size),
        memory_facts, environment, allocation, dmabuf, kernels, copies);
    if (!options.json_path.empty()) {
        bench::write_file(options.json_path, records::to_json(record).dump(2) + "\n");
        fmt::print("\nwrote {}\n", options.json_path);
    }
    if (!options.markdown_path.empty()) {
        bench::write_file(options.markdown_path, to_markdown(record));
        fmt::print("wrote {}\n", options.markdown_path);
    }
    return 0;
}

// A file the run writes at its end: its folder must exist now, so a typo is not found only after
// the measurements. An empty answer means the path is fine (CLI11's validator convention).
std::string missing_folder(const std::string& path) {
    const std::filesystem::path folder = std::filesystem::path(path).parent_path();
    std::error_code error;
    if (folder.empty() || std::filesystem::is_directory(folder, error)) return {};
    return "'" + path + "': there is no folder " + folder.string();
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("gpu-memory-bench", [&] {
        CLI::App app{
            "gpu-memory-bench: GPU memory as the RDMA paths use it: allocation, dma-buf "
            "export, fill/verify\nkernels and the staging copies (pinned H2D and D2H) "
            "against the copy ceiling measured in the\nsame run, with the environment. "
            "GB/s = 10^9 bytes/s.",
            "gpu-memory-bench"};
        Options options;
        app.add_option_function<std::string>(
               "--mem",
               [&options](const std::string& text) {
                   auto spec = gpu::parse_memory_spec(text);
                   if (!spec)
                       throw CLI::ValidationError(
                           "--mem",
                           "'" + text + "' is not a memory kind (host, cuda[:N], rocm[:N])");
                   options.memory = *spec;
               },
               "memory to measure: host, cuda[:N] or rocm[:N] (this build: " +
                   gpu::built_backends() + ")")
            ->default_str("host");
        app.add_option_function<std::string>(
               "--sizes",
               [&options](const std::string& text) {
                   auto parsed = bench::parse_values(text, 1, kMaxSize);
                   if (auto* why = std::get_if<std::string>(&parsed))
                       throw CLI::ValidationError("--sizes", *why);
                   auto& values = std::get<std::vector<std::uint64_t>>(parsed);
                   std::sort(values.begin(), values.end());
                   values.erase(std::unique(values.begin(), values.end()), values.end());
                   options.sizes.assign(values.begin(), values.end());
               },
               "copy sizes in bytes, 1 B to 1 GiB: a list (4096,64K) or a power-of-two range "
               "(4K..64M); fill/verify and pageable copies use the largest")
            ->default_str("4K,16K,64K,256K,1M,4M,16M,64M");
        app.add_option("--reps", options.reps, "timed repetitions of each number")
            ->check(CLI::Range(1, 10000))
            ->capture_default_str();
        app.add_option_function<std::string>(
               "--ceiling-size",
               [&options](const std::string& text) {
                   auto size = parse_size(text);
                   if (!size || *size > kMaxSize)
                       throw CLI::ValidationError("--ceiling-size",
                                                  "'" + text + "' is not a size from 1 B to 1 GiB");
                   options.ceiling_size = *size;
               },
               "bytes per copy of the ceiling measurement (4 copies queued back to back)")
            ->default_str("256M");
        app.add_option("--json", options.json_path, "write the results and environment to FILE")
            ->check(missing_folder);
        app.add_option("--markdown", options.markdown_path,
                       "write the same results as a Markdown report to FILE")
            ->check(missing_folder);
        parse_or_exit(app, argc, argv);
        return run(options);
    });
}
