// The host backend: ordinary page-aligned memory, memcpy for the staging copies and the CPU for
// fill and verify. It makes every path that does not need a GPU — host memory, and the staging
// path's RDMA half — run anywhere, the Soft-RoCE lab included.
#include "backend.hpp"

#include "device_pattern.hpp"
#include "rdmalab/error.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

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

class HostBackend final : public Backend {
  public:
    MemoryKind kind() const override { return MemoryKind::kHost; }
    std::string description() const override { return "host memory"; }
    const char* copy_call() const override { return "memcpy"; }
    const char* pinned_call() const override { return "aligned_alloc; ibv_reg_mr pins it"; }

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

std::unique_ptr<Backend> make_host_backend() {
    return std::make_unique<HostBackend>();
}

}  // namespace rdmalab::gpu
