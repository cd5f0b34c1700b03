// The HIP (ROCm) backend: hipMalloc, hipHostMalloc, hipMemcpyAsync and the kernels of
// hip_kernels.hip on one stream. dma-buf export is looked up at run time, because Debian's
// ROCm 5.2 has neither call: hipMemGetHandleForAddressRange (newer HIP runtimes) first, then
// hsa_amd_portable_export_dmabuf (ROCr, ROCm 5.6 and later); the binary built against 5.2 uses
// them where the installed runtime has them, and says so where it does not.
#include "rdmalab/gpu/backend.hpp"

#include "kernels.hpp"
#include "rdmalab/error.hpp"
#include "stream_backend.hpp"

#include <dlfcn.h>
#include <fmt/core.h>
#include <hip/hip_runtime_api.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

namespace rdmalab::gpu {
namespace {

// "call failed: hipErrorX (what it means)"; ROCm 5.2's hipGetErrorString often repeats the name.
std::string hip_error_text(hipError_t rc) {
    const std::string name = hipGetErrorName(rc);
    std::string text = hipGetErrorString(rc);
    if (rc == hipErrorNoDevice) text = "no ROCm-capable device is detected";
    return text == name ? name : fmt::format("{} ({})", name, text);
}

// The HIP runtime's calls, as StreamBackend (stream_backend.hpp) makes them.
struct HipRuntime {
    using Error = hipError_t;
    using Stream = hipStream_t;
    static constexpr const char* kPrefix = "hip";
    static constexpr const char* kDevice = "ROCm";
    static constexpr const char* kPinnedCall = "hipHostMalloc";
    static constexpr const char* kPinnedFreeCall = "hipHostFree";
    static constexpr const char* kCopyCall = "hipMemcpyAsync";
    static constexpr const char* kRuntimeLinkage = "";
    static std::string error_text(Error rc) { return hip_error_text(rc); }
    static const char* error_name(Error rc) { return hipGetErrorName(rc); }
    static Error driver_version(int* version) { return hipDriverGetVersion(version); }
    static Error runtime_version(int* version) { return hipRuntimeGetVersion(version); }
    // HIP's version numbers are 10000000 * major + 100000 * minor + patch.
    static std::string version_text(int version) {
        return fmt::format("{}.{} ({})", version / 10000000, version / 100000 % 100, version);
    }
    static Error device_count(int* count) { return hipGetDeviceCount(count); }
    static Error set_device(int device) { return hipSetDevice(device); }
    static Error pci_bus_id(char* text, int length, int device) {
        return hipDeviceGetPCIBusId(text, length, device);
    }
    static Error malloc(void** pointer, std::size_t size) { return hipMalloc(pointer, size); }
    static Error free(void* pointer) { return hipFree(pointer); }
    static Error host_alloc(void** pointer, std::size_t size) {
        return hipHostMalloc(pointer, size, hipHostMallocDefault);
    }
    static Error host_free(void* pointer) { return hipHostFree(pointer); }
    static Error memset_async(void* device, int byte, std::size_t size, Stream stream) {
        return hipMemsetAsync(device, byte, size, stream);
    }
    static Error to_device(void* device, const void* host, std::size_t size, Stream stream) {
        return hipMemcpyAsync(device, host, size, hipMemcpyHostToDevice, stream);
    }
    static Error to_host(void* host, const void* device, std::size_t size, Stream stream) {
        return hipMemcpyAsync(host, device, size, hipMemcpyDeviceToHost, stream);
    }
    static Error synchronize(Stream stream) { return hipStreamSynchronize(stream); }
    static Error create_stream(Stream* stream) {
        return hipStreamCreateWithFlags(stream, hipStreamNonBlocking);
    }
    static Error destroy_stream(Stream stream) { return hipStreamDestroy(stream); }
    static constexpr auto launch_fill = hip_launch_fill;
    static constexpr auto launch_verify = hip_launch_verify;
};

// The public signatures of the two export calls (HIP 6 and ROCr), declared here because the
// headers of ROCm 5.2 do not have them. Handle type 1 is hipMemRangeHandleTypeDmaBufFd.
using HipGetHandleFn = hipError_t (*)(void* handle, void* device_pointer, std::size_t size,
                                      int handle_type, unsigned long long flags);
using HsaExportFn = int (*)(const void* pointer, std::size_t size, int* dmabuf,
                            std::uint64_t* offset);
constexpr int kHipDmaBufHandle = 1;

class HipBackend final : public StreamBackend<HipRuntime> {
  public:
    explicit HipBackend(int device) : StreamBackend(device) {
        hipDeviceProp_t properties{};
        check(hipGetDeviceProperties(&properties, device_), "hipGetDeviceProperties");
        description_ = fmt::format("ROCm device {} ({}, {}, PCI {})", device_, properties.name,
                                   properties.gcnArchName, pci_bus_id_);
        device_facts_ = {{"device_name", properties.name},
                         {"gcn_arch", properties.gcnArchName},
                         {"pci_bus_id", pci_bus_id_},
                         {"memory_bytes", std::to_string(properties.totalGlobalMem)}};
    }

    MemoryKind kind() const override { return MemoryKind::kRocm; }

    DmaBufExport export_dmabuf(void* pointer, std::size_t size) override {
        const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
        const auto address = reinterpret_cast<std::uintptr_t>(pointer);
        if (address % page != 0)
            return export_failure(fmt::format(
                "GPU address {:#x} is not aligned to the {}-byte host page", address, page));
        const std::size_t rounded = (size + page - 1) / page * page;
        if (auto get_handle = reinterpret_cast<HipGetHandleFn>(
                dlsym(RTLD_DEFAULT, "hipMemGetHandleForAddressRange"))) {
            int fd = -1;
            if (hipError_t rc = get_handle(&fd, pointer, rounded, kHipDmaBufHandle, 0);
                rc != hipSuccess)
                return export_failure(
                    fmt::format("hipMemGetHandleForAddressRange failed: {}", hip_error_text(rc)));
            return export_success(fd, 0, "hipMemGetHandleForAddressRange");
        }
        if (auto hsa_export = reinterpret_cast<HsaExportFn>(
                dlsym(RTLD_DEFAULT, "hsa_amd_portable_export_dmabuf"))) {
            int fd = -1;
            std::uint64_t offset = 0;
            if (int status = hsa_export(pointer, rounded, &fd, &offset); status != 0)
                return export_failure(fmt::format(
                    "hsa_amd_portable_export_dmabuf failed: hsa_status {:#x} (the kernel "
                    "needs CONFIG_DMABUF_MOVE_NOTIFY and CONFIG_PCI_P2PDMA)",
                    status));
            return export_success(fd, offset, "hsa_amd_portable_export_dmabuf");
        }
        return export_failure(
            fmt::format("this ROCm (HIP {}) has neither hipMemGetHandleForAddressRange nor "
                        "hsa_amd_portable_export_dmabuf",
                        runtime_version()));
    }

    void prepare_direct_access(void*) override {}

    std::string make_nic_writes_visible() override {
        return fmt::format(
            "{}: HIP has no GPUDirect flush call; the verify kernel is queued only after the "
            "completion was seen",
            description_);
    }

  private:
    static std::string runtime_version() {
        int version = 0;
        if (hipRuntimeGetVersion(&version) != hipSuccess) return "unknown";
        return fmt::format("{}.{}", version / 10000000, version / 100000 % 100);
    }
};

}  // namespace

std::unique_ptr<Backend> make_hip_backend(int device) {
    return std::make_unique<HipBackend>(device);
}

}  // namespace rdmalab::gpu
