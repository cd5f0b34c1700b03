// gpu-memory-bench: measures GPU memory the way the RDMA paths use it — allocation, dma-buf export,
// the fill/verify kernels, and the staging copies against the card's own copy ceiling — and
// records the numbers with the environment (JSON, Markdown). Run `gpu-memory-bench --help`.
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
using bench::Record;

constexpr const char* kToolVersion = "gpu-memory-bench 0.1";
constexpr std::size_t kMaxSize = std::size_t{1} << 30;  // --sizes and --ceiling-size: 1 GiB
// The ceiling queues this many copies back to back before one synchronize, so the time of one
// launch and one wait is spread over them and only the copy engine's speed is left.
constexpr int kCeilingCopies = 4;
constexpr std::uint64_t kKernelSeed = 0x6b;  // the fill/verify measurement
constexpr std::uint64_t kCopySeed = 0x63;    // the copy verification
constexpr const char* kUnits =
    "GB/s = 10^9 bytes/s; times in microseconds (us); sizes in bytes (B)";

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

// Times are kept to the nanosecond (the clock's resolution), speeds and ratios to 4 decimals:
// the digits past those are noise, and a results file is read by people.
double rounded(double value, double unit) {
    return std::round(value / unit) * unit;
}
double microseconds(double seconds) {
    return rounded(seconds * 1e6, 1e-3);
}
double gigabytes_per_second(double bytes, double seconds) {
    return rounded(bytes / seconds / 1e9, 1e-4);
}

// --- The measurements ----------------------------------------------------------------------

struct AllocationRow {
    std::size_t size = 0;
    double device_memory_us = 0;  // DeviceMemory(spec, size): its own backend, then allocate
    double device_memory_free_us = 0;
    double allocate_us = 0;  // Backend::allocate alone: allocation + zero-fill
    double release_us = 0;
    double pinned_us = 0;  // PinnedHostMemory: what the staging path's bounce buffer costs
    double pinned_free_us = 0;
};

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

struct ExportResult {
    std::size_t size = 0;
    bool exported = false;
    std::string call;  // the export call that gave the fd
    std::uint64_t offset = 0;
    std::string failure;   // why there is no dma-buf: recorded, it is a fact of this machine
    double median_us = 0;  // of the export call alone (closing the fd is not counted)
    int attempts = 0;
};

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

struct KernelResult {
    std::size_t size = 0;
    double fill_us = 0, verify_us = 0;
    std::size_t wrong_seed_caught_at = 0;
};

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

struct CopyPair {
    double h2d_us = 0, d2h_us = 0;
};

// --- Output --------------------------------------------------------------------------------

std::string percent(double fraction) {
    return fmt::format("{:.1f}%", fraction * 100);
}

std::string title(const Record& memory) {
    if (!memory["gpu"].get<bool>())
        return fmt::format(
            "host memory, not a GPU: {} copies and CPU fill/verify (pinned buffers: {})",
            memory["copy_call"].get<std::string>(), memory["pinned_call"].get<std::string>());
    return fmt::format(
        "{}: {} copies, pinned host memory from {}", memory["description"].get<std::string>(),
        memory["copy_call"].get<std::string>(), memory["pinned_call"].get<std::string>());
}

std::string markdown_cell(const std::string& text) {
    std::string cell;
    for (char c : text) cell += c == '|' ? std::string("\\|") : std::string(1, c);
    return cell;
}

// The Markdown report, from the record alone, so it says exactly what the JSON file says.
std::string to_markdown(const Record& r) {
    const Record& env = r["environment"];
    std::string md = fmt::format("# gpu-memory-bench: {}\n\n", title(r["memory"]));
    md += fmt::format("{} on {} (kernel {}), {} reps per number; {}.\n\n",
                      env["date"].get<std::string>(), env["host"].get<std::string>(),
                      env["kernel"].get<std::string>(), r["config"]["reps"].get<int>(), kUnits);

    md += "## Environment\n\n| fact | value |\n|---|---|\n";
    md += fmt::format("| memory | {} |\n",
                      markdown_cell(r["memory"]["description"].get<std::string>()));
    for (const auto& [key, value] : env["device"].items())
        md += fmt::format("| {} | {} |\n", key, markdown_cell(value.get<std::string>()));
    md += fmt::format("| tool | {} |\n\n", env["tool_version"].get<std::string>());

    const Record& alloc = r["allocation"];
    md += fmt::format(
        "## Allocation\n\nMedian us. DeviceMemory = a new backend (device set-up, stream) + "
        "allocate + zero-fill; Backend::allocate = allocate + zero-fill on a started backend; "
        "PinnedHostMemory = the staging path's bounce buffer. The first DeviceMemory of the run "
        "took {:.1f} us (backend start-up included: driver and context on a GPU).\n\n",
        alloc["first_device_memory_us"].get<double>());
    md +=
        "| size (B) | DeviceMemory | ~DeviceMemory | Backend::allocate | Backend::release | "
        "PinnedHostMemory | ~PinnedHostMemory |\n|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const Record& row : alloc["rows"])
        md += fmt::format("| {} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} |\n",
                          row["size"].get<std::size_t>(), row["device_memory_us"].get<double>(),
                          row["device_memory_free_us"].get<double>(),
                          row["allocate_us"].get<double>(), row["release_us"].get<double>(),
                          row["pinned_us"].get<double>(), row["pinned_free_us"].get<double>());

    const Record& dmabuf = r["dmabuf_export"];
    md += fmt::format("\n## dma-buf export\n\n{} ({} B, median {:.2f} us over {} call(s))\n",
                      markdown_cell(dmabuf["outcome"].get<std::string>()),
                      dmabuf["size"].get<std::size_t>(), dmabuf["median_us"].get<double>(),
                      dmabuf["attempts"].get<int>());

    const Record& kernels = r["kernels"];
    md += fmt::format(
        "\n## Fill / verify ({}, {} B, median)\n\n| step | GB/s | us |\n|---|---:|---:|\n",
        kernels["worker"].get<std::string>(), kernels["size"].get<std::size_t>());
    md += fmt::format("| fill_pattern + synchronize | {:.2f} | {:.1f} |\n",
                      kernels["fill_gbps"].get<double>(), kernels["fill_us"].get<double>());
    md += fmt::format("| find_mismatch (verified) | {:.2f} | {:.1f} |\n",
                      kernels["verify_gbps"].get<double>(), kernels["verify_us"].get<double>());

    const Record& copies = r["copies"];
    const Record& ceiling = copies["ceiling"];
    md += fmt::format(
        "\n## Staging copies\n\nPinned host memory, one copy + synchronize per message (the "
        "staging path), median. Ceiling: {} queued copies of {} B, one synchronize, best of "
        "reps: H2D {:.2f} GB/s, D2H {:.2f} GB/s. Copies verified: {}.\n\n",
        ceiling["copies"].get<int>(), ceiling["size"].get<std::size_t>(),
        ceiling["h2d_gbps"].get<double>(), ceiling["d2h_gbps"].get<double>(),
        copies["verification"].get<std::string>());
    md +=
        "| size (B) | H2D GB/s | H2D of ceiling | D2H GB/s | D2H of ceiling |\n"
        "|---:|---:|---:|---:|---:|\n";
    for (const Record& row : copies["pinned"])
        md += fmt::format(
            "| {} | {:.2f} | {} | {:.2f} | {} |\n", row["size"].get<std::size_t>(),
            row["h2d_gbps"].get<double>(), percent(row["h2d_of_ceiling"].get<double>()),
            row["d2h_gbps"].get<double>(), percent(row["d2h_of_ceiling"].get<double>()));
    const Record& pageable = copies["pageable"];
    md += fmt::format(
        "\nFor contrast, pageable memory (std::vector, not the staging path), {} B: H2D {:.2f} "
        "GB/s ({} of ceiling), D2H {:.2f} GB/s ({}).\n",
        pageable["size"].get<std::size_t>(), pageable["h2d_gbps"].get<double>(),
        percent(pageable["h2d_of_ceiling"].get<double>()), pageable["d2h_gbps"].get<double>(),
        percent(pageable["d2h_of_ceiling"].get<double>()));
    return md;
}

// --- The run -------------------------------------------------------------------------------

Record copy_numbers(std::size_t size, const CopyPair& times, const CopyPair& ceiling_times,
                    std::size_t ceiling_bytes) {
    const double h2d = gigabytes_per_second(static_cast<double>(size), times.h2d_us / 1e6);
    const double d2h = gigabytes_per_second(static_cast<double>(size), times.d2h_us / 1e6);
    const double h2d_ceiling =
        gigabytes_per_second(static_cast<double>(ceiling_bytes), ceiling_times.h2d_us / 1e6);
    const double d2h_ceiling =
        gigabytes_per_second(static_cast<double>(ceiling_bytes), ceiling_times.d2h_us / 1e6);
    return Record{{"size", size},
                  {"h2d_gbps", h2d},
                  {"h2d_us", times.h2d_us},
                  {"h2d_of_ceiling", rounded(h2d / h2d_ceiling, 1e-5)},
                  {"d2h_gbps", d2h},
                  {"d2h_us", times.d2h_us},
                  {"d2h_of_ceiling", rounded(d2h / d2h_ceiling, 1e-5)}};
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

    Record memory_record{{"kind", gpu::to_string(options.memory)},
                         {"gpu", is_gpu},
                         {"description", first.description()},
                         {"copy_call", first_backend.copy_call()},
                         {"pinned_call", first_backend.pinned_call()}};
    fmt::print("gpu-memory-bench: {}\n", title(memory_record));
    fmt::print("units: {}; {} reps per number, after one warm-up\n", kUnits, reps);
    std::fflush(stdout);

    // 1. Allocation: a few sizes, the smallest and largest asked for and the ceiling's.
    std::vector<std::size_t> allocation_sizes = {options.sizes.front(), largest,
                                                 options.ceiling_size};
    std::sort(allocation_sizes.begin(), allocation_sizes.end());
    allocation_sizes.erase(std::unique(allocation_sizes.begin(), allocation_sizes.end()),
                           allocation_sizes.end());
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
    Record allocation_rows = Record::array();
    for (std::size_t size : allocation_sizes) {
        const AllocationRow row = measure_allocation(options.memory, first_backend, size, reps);
        fmt::print("  {:>12}  {:>12.1f}  {:>13.1f}  {:>17.1f}  {:>16.1f}  {:>16.1f}  {:>17.1f}\n",
                   row.size, row.device_memory_us, row.device_memory_free_us, row.allocate_us,
                   row.release_us, row.pinned_us, row.pinned_free_us);
        std::fflush(stdout);
        allocation_rows.push_back(Record{{"size", row.size},
                                         {"device_memory_us", row.device_memory_us},
                                         {"device_memory_free_us", row.device_memory_free_us},
                                         {"allocate_us", row.allocate_us},
                                         {"release_us", row.release_us},
                                         {"pinned_us", row.pinned_us},
                                         {"pinned_free_us", row.pinned_free_us}});
    }

    // One buffer serves the rest: the kernels and the copies of each size use its start, the
    // ceiling all of it. The pinned buffer comes from the same backend and goes before it.
    const std::size_t buffer_size = std::max(largest, options.ceiling_size);
    gpu::DeviceMemory memory(options.memory, buffer_size);
    gpu::Backend& backend = memory.backend();
    gpu::PinnedHostMemory pinned(backend, buffer_size);
    memory_record["buffer_size"] = buffer_size;

    // 2. dma-buf export of the whole buffer.
    const ExportResult exported = measure_export(memory, reps);
    const std::string export_outcome =
        exported.exported
            ? fmt::format("fd from {} (offset {}); each fd closed", exported.call, exported.offset)
            : fmt::format("failed: {}", exported.failure);
    fmt::print(
        "\ndma-buf export (Backend::export_dmabuf of {} B): {} — median {:.2f} us over {} "
        "call(s){}\n",
        exported.size, export_outcome, exported.median_us, exported.attempts,
        exported.exported ? "" : " (a fact of this machine, recorded; not an error)");
    std::fflush(stdout);

    // 3. Fill and verify at the largest size.
    const char* worker = is_gpu ? "GPU kernels" : "the CPU (host backend)";
    const KernelResult kernels = measure_kernels(memory, largest, reps);
    const double fill_gbps =
        gigabytes_per_second(static_cast<double>(largest), kernels.fill_us / 1e6);
    const double verify_gbps =
        gigabytes_per_second(static_cast<double>(largest), kernels.verify_us / 1e6);
    fmt::print("\nfill/verify by {}, {} B, median:\n", worker, largest);
    fmt::print("  fill_pattern + synchronize  {:>10.2f} GB/s  {:>12.1f} us\n", fill_gbps,
               kernels.fill_us);
    fmt::print(
        "  find_mismatch               {:>10.2f} GB/s  {:>12.1f} us  verified: no wrong "
        "byte (another seed's pattern was caught at byte {})\n",
        verify_gbps, kernels.verify_us, kernels.wrong_seed_caught_at);
    std::fflush(stdout);

    // 4. Copies: verified first, then timed.
    std::vector<std::byte> pageable(largest);
    verify_copies(memory, std::span(pinned.data(), buffer_size), "pinned");
    verify_copies(memory, std::span(pageable), "pageable");
    const std::string verification = fmt::format(
        "pattern through H2D checked on the device, back through D2H checked on the host "
        "(pinned {} B, pageable {} B)",
        buffer_size, largest);
    fmt::print("\ncopies verified: {}\n", verification);

    const CopyPair ceiling{
        microseconds(ceiling_seconds(backend, Direction::kHostToDevice, memory.data(),
                                     pinned.data(), options.ceiling_size, reps)),
        microseconds(ceiling_seconds(backend, Direction::kDeviceToHost, memory.data(),
                                     pinned.data(), options.ceiling_size, reps))};
    const std::size_t ceiling_bytes = options.ceiling_size * kCeilingCopies;
    const double h2d_ceiling_gbps =
        gigabytes_per_second(static_cast<double>(ceiling_bytes), ceiling.h2d_us / 1e6);
    const double d2h_ceiling_gbps =
        gigabytes_per_second(static_cast<double>(ceiling_bytes), ceiling.d2h_us / 1e6);
    fmt::print(
        "copy ceiling ({} queued copies of {} B, one synchronize, best): H2D {:.2f} GB/s, "
        "D2H {:.2f} GB/s\n",
        kCeilingCopies, options.ceiling_size, h2d_ceiling_gbps, d2h_ceiling_gbps);
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
    Record pinned_rows = Record::array();
    for (std::size_t size : options.sizes) {
        Record row =
            copy_numbers(size, both_directions(pinned.data(), size), ceiling, ceiling_bytes);
        fmt::print("  {:>12}  {:>10.2f}  {:>10}  {:>10.2f}  {:>10}\n", size,
                   row["h2d_gbps"].get<double>(), percent(row["h2d_of_ceiling"].get<double>()),
                   row["d2h_gbps"].get<double>(), percent(row["d2h_of_ceiling"].get<double>()));
        std::fflush(stdout);
        pinned_rows.push_back(std::move(row));
    }
    Record pageable_record =
        copy_numbers(largest, both_directions(pageable.data(), largest), ceiling, ceiling_bytes);
    if (!is_gpu)
        fmt::print("  (host memory: sizes that stay in the CPU's caches can beat the ceiling)\n");
    fmt::print(
        "pageable std::vector, for contrast (not the staging path), {} B: H2D {:.2f} GB/s "
        "({} of ceiling), D2H {:.2f} GB/s ({} of ceiling)\n",
        largest, pageable_record["h2d_gbps"].get<double>(),
        percent(pageable_record["h2d_of_ceiling"].get<double>()),
        pageable_record["d2h_gbps"].get<double>(),
        percent(pageable_record["d2h_of_ceiling"].get<double>()));

    // 5. The environment, read now: right after the copies the PCIe link is still trained up.
    Record environment = bench::host_environment(kToolVersion);
    Record device_facts = Record::object();
    for (const auto& [name, value] : backend.facts()) device_facts[name] = value;
    environment["device"] = device_facts;
    fmt::print("\nenvironment: host {}, kernel {}, {}, {}\n",
               environment["host"].get<std::string>(), environment["kernel"].get<std::string>(),
               environment["date"].get<std::string>(), kToolVersion);
    for (const auto& [name, value] : device_facts.items())
        fmt::print("  {}: {}\n", name, value.get<std::string>());

    Record record{
        {"tool", kToolVersion},
        {"units",
         {{"bandwidth", "GB/s = 10^9 bytes/s"},
          {"time", "microseconds"},
          {"size", "bytes"},
          {"of_ceiling",
           "fraction of the ceiling of the same direction, measured in the same run"}}},
        {"config",
         {{"mem", gpu::to_string(options.memory)},
          {"sizes", options.sizes},
          {"reps", reps},
          {"ceiling_size", options.ceiling_size},
          {"ceiling_copies", kCeilingCopies}}},
        {"memory", memory_record},
        {"environment", environment},
        {"allocation", {{"first_device_memory_us", first_us}, {"rows", allocation_rows}}},
        {"dmabuf_export",
         {{"size", exported.size},
          {"exported", exported.exported},
          {"call", exported.call},
          {"offset", exported.offset},
          {"failure", exported.failure},
          {"outcome", export_outcome},
          {"median_us", exported.median_us},
          {"attempts", exported.attempts}}},
        {"kernels",
         {{"worker", worker},
          {"size", largest},
          {"fill_gbps", fill_gbps},
          {"fill_us", kernels.fill_us},
          {"verify_gbps", verify_gbps},
          {"verify_us", kernels.verify_us},
          {"verified", true},
          {"wrong_seed_caught_at", kernels.wrong_seed_caught_at}}},
        {"copies",
         {{"method", fmt::format("{}: one copy + synchronize per message (the staging path), "
                                 "median of reps",
                                 backend.copy_call())},
          {"verified", true},
          {"verification", verification},
          {"ceiling",
           {{"size", options.ceiling_size},
            {"copies", kCeilingCopies},
            {"statistic", "best of reps"},
            {"h2d_gbps", h2d_ceiling_gbps},
            {"h2d_us", ceiling.h2d_us},
            {"d2h_gbps", d2h_ceiling_gbps},
            {"d2h_us", ceiling.d2h_us}}},
          {"pinned", pinned_rows},
          {"pageable", pageable_record}}}};

    if (!options.json_path.empty()) {
        bench::write_file(options.json_path, record.dump(2) + "\n");
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
