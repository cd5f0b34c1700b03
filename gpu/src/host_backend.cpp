// The host backend: ordinary page-aligned memory, memcpy for the staging copies and the CPU for
// fill and verify. It makes every path that does not need a GPU — host memory, and the staging
// path's RDMA half — run anywhere, the Soft-RoCE lab included.
#include "rdmalab/gpu/backend.hpp"

#include "device_pattern.hpp"
#include "rdmalab/error.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>

namespace rdmalab::gpu {
namespace {

void* page_aligned(std::size_t size) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t rounded = (size + page - 1) / page * page;
    void* memory = std::aligned_alloc(page, rounded);
    if (memory == nullptr) fail(fmt::format("aligned_alloc of {} bytes failed", rounded));
    std::memset(memory, 0, rounded);
    return memory;
}

// The first line of a small text file (sysfs, procfs), or nullopt if it cannot be read.
std::optional<std::string> first_line(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line)) return std::nullopt;
    return line;
}

// "Intel(R) Xeon(R) Platinum 8480+": what "model name" says in /proc/cpuinfo (x86; absent on
// some other architectures, where the fact says so).
std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);) {
        if (!line.starts_with("model name")) continue;
        const auto colon = line.find(':');
        if (colon == std::string::npos) break;
        const auto start = line.find_first_not_of(' ', colon + 1);
        return start == std::string::npos ? std::string{} : line.substr(start);
    }
    return "unknown (/proc/cpuinfo has no model name)";
}

class HostBackend final : public Backend {
  public:
    MemoryKind kind() const override { return MemoryKind::kHost; }
    std::string description() const override { return "host memory"; }
    const char* copy_call() const override { return "memcpy"; }
    const char* pinned_call() const override { return "aligned_alloc; ibv_reg_mr pins it"; }

    Facts facts() const override {
        return {{"cpu", cpu_model()},
                {"page_size", std::to_string(sysconf(_SC_PAGESIZE))},
                {"allocation", "aligned_alloc to the page, then memset to zero"}};
    }

    void* allocate(std::size_t size) override { return page_aligned(size); }
    void release(void* pointer) noexcept override { std::free(pointer); }
    void* allocate_pinned(std::size_t size) override { return page_aligned(size); }
    void release_pinned(void* pointer) noexcept override { std::free(pointer); }

    void copy_to_device(void* device, const void* host, std::size_t size) override {
        std::memcpy(device, host, size);
    }
    void copy_to_host(void* host, const void* device, std::size_t size) override {
        std::memcpy(host, device, size);
    }
    void fill_pattern(void* device, std::size_t count, std::uint64_t seed) override {
        auto* bytes = static_cast<unsigned char*>(device);
        for (std::size_t i = 0; i < count; ++i) bytes[i] = device_pattern_byte(seed, i);
    }
    std::optional<std::size_t> find_mismatch(const void* device, std::size_t size,
                                             std::size_t count, std::uint64_t seed) override {
        const auto* bytes = static_cast<const unsigned char*>(device);
        for (std::size_t i = 0; i < size; ++i)
            if (bytes[i] != (i < count ? device_pattern_byte(seed, i) : 0)) return i;
        return std::nullopt;
    }
    void synchronize() override {}

    DmaBufExport export_dmabuf(void*, std::size_t) override {
        return export_failure(
            "host memory is not exported as a dma-buf here (use --mem cuda or rocm)");
    }
    void prepare_direct_access(void*) override {}
    std::string make_nic_writes_visible() override {
        return "host memory: the CPU sees the NIC's writes once their completion (or a later "
               "message) arrived";
    }
};

}  // namespace

Facts pci_link_facts(const std::string& bus_id, const std::string& sysfs_root) {
    // sysfs names devices in lower case; the CUDA and HIP runtimes print the bus id in upper.
    std::string id = bus_id;
    std::transform(id.begin(), id.end(), id.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const std::string directory =
        (sysfs_root.empty() ? std::string("/sys") : sysfs_root) + "/bus/pci/devices/" + id;
    Facts facts;
    for (const char* name :
         {"current_link_speed", "current_link_width", "max_link_speed", "max_link_width"})
        if (auto value = first_line(directory + "/" + name))
            facts.emplace_back(std::string("pcie_") + name, *value);
    if (facts.empty())
        facts.emplace_back(
            "pcie_link",
            fmt::format("not readable ({}/current_link_speed and the others)", directory));
    return facts;
}

std::unique_ptr<Backend> make_host_backend() {
    return std::make_unique<HostBackend>();
}

}  // namespace rdmalab::gpu
