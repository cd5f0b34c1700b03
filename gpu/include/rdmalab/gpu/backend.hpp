// The interface each memory kind implements (host, CUDA, HIP): allocation, pinned host memory,
// copies and kernels on one stream, dma-buf export, and making NIC writes visible. Programs that
// move data use DeviceMemory and RegisteredMemory (memory.hpp); gpu-memory-bench measures the
// backend itself.
#pragma once

#include "rdmalab/gpu/memory.hpp"

#include <fmt/core.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rdmalab::gpu {

// A dma-buf file descriptor for a device range, or the reason there is none.
struct DmaBufExport {
    int fd = -1;
    std::uint64_t offset = 0;  // where the range starts inside the dma-buf
    std::string call;          // the export call used: "cuMemGetHandleForAddressRange", …
    std::string failure;       // empty on success: "cuMemGetHandleForAddressRange: CUDA_ERROR_…"
};

inline DmaBufExport export_failure(std::string why) {
    DmaBufExport result;
    result.failure = std::move(why);
    return result;
}
inline DmaBufExport export_success(int fd, std::uint64_t offset, std::string call) {
    DmaBufExport result;
    result.fd = fd;
    result.offset = offset;
    result.call = std::move(call);
    return result;
}

// Named facts about a device and its software, for results files: ("cuda_driver", "12.4"), ….
using Facts = std::vector<std::pair<std::string, std::string>>;

class Backend {
  public:
    virtual ~Backend() = default;
    virtual MemoryKind kind() const = 0;
    virtual std::string description() const = 0;  // "CUDA device 0 (NVIDIA H100 …)"
    virtual const char* copy_call() const = 0;    // "cudaMemcpyAsync", "hipMemcpyAsync", "memcpy"
    virtual const char* pinned_call()
        const = 0;  // "cudaHostAlloc", "hipHostMalloc", "aligned_alloc"

    // What a measurement must record beside its numbers: device name, driver and runtime
    // versions, PCI bus id and PCIe link. Read when called, not at construction: an idle GPU
    // trains its link down to save power, so call it right after the work that was measured.
    virtual Facts facts() const = 0;

    virtual void* allocate(std::size_t size) = 0;  // zero-filled
    virtual void release(void* pointer) noexcept = 0;
    virtual void* allocate_pinned(std::size_t size) = 0;
    virtual void release_pinned(void* pointer) noexcept = 0;

    // Queued on the backend's stream, in order.
    virtual void copy_to_device(void* device, const void* host, std::size_t size) = 0;
    virtual void copy_to_host(void* host, const void* device, std::size_t size) = 0;
    virtual void fill_pattern(void* device, std::size_t count, std::uint64_t seed) = 0;
    // Queues the check after everything else and waits for it.
    virtual std::optional<std::size_t> find_mismatch(const void* device, std::size_t size,
                                                     std::size_t count, std::uint64_t seed) = 0;
    virtual void synchronize() = 0;

    // dma-buf: device attribute check and export of [pointer, pointer + size).
    virtual DmaBufExport export_dmabuf(void* pointer, std::size_t size) = 0;
    // Called once a direct (dma-buf, peer) registration of pointer exists: e.g. CUDA's
    // SYNC_MEMOPS, so synchronous copies on the range are ordered with the NIC's accesses.
    virtual void prepare_direct_access(void* pointer) = 0;
    // After the NIC wrote GPU memory directly: flush where the device needs it; one line.
    virtual std::string make_nic_writes_visible() = 0;
};

// The PCIe link of the device at bus_id ("0000:3b:00.0", any case) from
// /sys/bus/pci/devices/<id>/{current,max}_link_{speed,width}: the files that can be read, or one
// fact saying why none could. sysfs_root is for tests ("" = the real /sys). Defined in
// host_backend.cpp, the one backend every build has.
Facts pci_link_facts(const std::string& bus_id, const std::string& sysfs_root = "");
// A version fact: the version when its query worked, else "unknown (CALL failed: ERROR)".
inline std::string version_fact(bool query_worked, const std::string& version,
                                std::string_view call, std::string_view error) {
    return query_worked ? version : fmt::format("unknown ({} failed: {})", call, error);
}

std::unique_ptr<Backend> make_host_backend();
#ifdef RDMALAB_HAVE_CUDA
std::unique_ptr<Backend> make_cuda_backend(int device);  // throws Error: "no CUDA driver (…)"
#endif
#ifdef RDMALAB_HAVE_HIP
std::unique_ptr<Backend> make_hip_backend(int device);
#endif

}  // namespace rdmalab::gpu
