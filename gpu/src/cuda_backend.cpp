// The CUDA backend. The runtime (cudart, linked statically) allocates, copies and launches;
// driver functions that only the driver API has — cuMemGetHandleForAddressRange (dma-buf
// export), cuDeviceGetAttribute(DMA_BUF_SUPPORTED), cuPointerSetAttribute(SYNC_MEMOPS) — are
// fetched at run time with cudaGetDriverEntryPointByVersion, so nothing links libcuda.so and
// one binary serves machines with and without an NVIDIA driver, saying which it found.
#include "rdmalab/gpu/backend.hpp"

#include "kernels.hpp"
#include "rdmalab/error.hpp"
#include "stream_backend.hpp"

#include <cuda.h>  // driver API types and enums only: its functions come from the entry points
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

namespace rdmalab::gpu {
namespace {

// The CUDA runtime's calls, as StreamBackend (stream_backend.hpp) makes them.
struct CudaRuntime {
    using Error = cudaError_t;
    using Stream = cudaStream_t;
    static constexpr const char* kPrefix = "cuda";
    static constexpr const char* kDevice = "CUDA";
    static constexpr const char* kPinnedCall = "cudaHostAlloc";
    static constexpr const char* kPinnedFreeCall = "cudaFreeHost";
    static constexpr const char* kCopyCall = "cudaMemcpyAsync";
    static constexpr const char* kRuntimeLinkage = ", cudart_static";
    static std::string error_text(Error rc) {
        return fmt::format("{} ({})", cudaGetErrorName(rc), cudaGetErrorString(rc));
    }
    static const char* error_name(Error rc) { return cudaGetErrorName(rc); }
    static Error driver_version(int* version) { return cudaDriverGetVersion(version); }
    static Error runtime_version(int* version) { return cudaRuntimeGetVersion(version); }
    // CUDA's version numbers are 1000 * major + 10 * minor: 12040 is "12.4".
    static std::string version_text(int version) {
        return fmt::format("{}.{} ({})", version / 1000, version % 1000 / 10, version);
    }
    static Error device_count(int* count) {
        // The runtime would report a missing driver as "CUDA driver version is insufficient":
        // look for the driver library first, to say what is really missing.
        if (void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL))
            dlclose(driver);
        else
            fail("no CUDA driver (libcuda.so.1 not found)");
        return cudaGetDeviceCount(count);
    }
    static Error set_device(int device) { return cudaSetDevice(device); }
    static Error pci_bus_id(char* text, int length, int device) {
        return cudaDeviceGetPCIBusId(text, length, device);
    }
    static Error malloc(void** pointer, std::size_t size) { return cudaMalloc(pointer, size); }
    static Error free(void* pointer) { return cudaFree(pointer); }
    static Error host_alloc(void** pointer, std::size_t size) {
        return cudaHostAlloc(pointer, size, cudaHostAllocDefault);
    }
    static Error host_free(void* pointer) { return cudaFreeHost(pointer); }
    static Error memset_async(void* device, int byte, std::size_t size, Stream stream) {
        return cudaMemsetAsync(device, byte, size, stream);
    }
    static Error to_device(void* device, const void* host, std::size_t size, Stream stream) {
        return cudaMemcpyAsync(device, host, size, cudaMemcpyHostToDevice, stream);
    }
    static Error to_host(void* host, const void* device, std::size_t size, Stream stream) {
        return cudaMemcpyAsync(host, device, size, cudaMemcpyDeviceToHost, stream);
    }
    static Error synchronize(Stream stream) { return cudaStreamSynchronize(stream); }
    static Error create_stream(Stream* stream) {
        return cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking);
    }
    static Error destroy_stream(Stream stream) { return cudaStreamDestroy(stream); }
    static constexpr auto launch_fill = cuda_launch_fill;
    static constexpr auto launch_verify = cuda_launch_verify;
};

// The driver functions used, with the ABI version asked for (the version that introduced them).
using DeviceGetFn = CUresult (*)(CUdevice*, int);
using DeviceGetAttributeFn = CUresult (*)(int*, CUdevice_attribute, CUdevice);
using MemGetHandleFn = CUresult (*)(void*, CUdeviceptr, std::size_t, CUmemRangeHandleType,
                                    unsigned long long);
using PointerSetAttributeFn = CUresult (*)(const void*, CUpointer_attribute, CUdeviceptr);
using GetErrorNameFn = CUresult (*)(CUresult, const char**);

// The kernel module's own line ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64
// 550.54.15 …"), with its runs of blanks squeezed: it says whether the open modules, which
// dma-buf export needs, are loaded.
std::string nvidia_kernel_module() {
    std::ifstream in("/proc/driver/nvidia/version");
    std::string line;
    if (!in || !std::getline(in, line)) return "unknown (/proc/driver/nvidia/version not readable)";
    std::istringstream words(line);
    std::string squeezed;
    for (std::string word; words >> word;) squeezed += (squeezed.empty() ? "" : " ") + word;
    return squeezed;
}

template <typename Function>
Function driver_function(const char* symbol, unsigned version) {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found{};
    cudaError_t rc =
        cudaGetDriverEntryPointByVersion(symbol, &function, version, cudaEnableDefault, &found);
    if (rc != cudaSuccess || found != cudaDriverEntryPointSuccess) return nullptr;
    return reinterpret_cast<Function>(function);
}

class CudaBackend final : public StreamBackend<CudaRuntime> {
  public:
    explicit CudaBackend(int device) : StreamBackend(device) {
        cudaDeviceProp properties{};
        check(cudaGetDeviceProperties(&properties, device_), "cudaGetDeviceProperties");
        description_ =
            fmt::format("CUDA device {} ({}, PCI {})", device_, properties.name, pci_bus_id_);
        device_facts_ = {
            {"device_name", properties.name},
            {"pci_bus_id", pci_bus_id_},
            {"compute_capability", fmt::format("{}.{}", properties.major, properties.minor)},
            {"memory_bytes", std::to_string(properties.totalGlobalMem)},
            {"copy_engines", std::to_string(properties.asyncEngineCount)}};

        device_get_ = driver_function<DeviceGetFn>("cuDeviceGet", 2000);
        get_attribute_ = driver_function<DeviceGetAttributeFn>("cuDeviceGetAttribute", 2000);
        get_handle_ = driver_function<MemGetHandleFn>("cuMemGetHandleForAddressRange", 11070);
        set_pointer_attribute_ =
            driver_function<PointerSetAttributeFn>("cuPointerSetAttribute", 6000);
        error_name_ = driver_function<GetErrorNameFn>("cuGetErrorName", 6000);
    }

    MemoryKind kind() const override { return MemoryKind::kCuda; }

    void add_toolkit_facts(Facts& facts) const override {
        facts.emplace_back("nvidia_kernel_module", nvidia_kernel_module());
    }

    DmaBufExport export_dmabuf(void* pointer, std::size_t size) override {
        if (!device_get_ || !get_attribute_ || !get_handle_)
            return export_failure(
                "this CUDA driver has no cuMemGetHandleForAddressRange (needs CUDA 11.7 or later)");
        CUdevice device{};
        if (CUresult rc = device_get_(&device, device_); rc != CUDA_SUCCESS)
            return export_failure(fmt::format("cuDeviceGet failed: {}", driver_error(rc)));
        int supported = 0;
        if (CUresult rc = get_attribute_(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, device);
            rc != CUDA_SUCCESS)
            return export_failure(fmt::format("cuDeviceGetAttribute(DMA_BUF_SUPPORTED) failed: {}",
                                              driver_error(rc)));
        if (!supported)
            return export_failure(fmt::format(
                "{} reports CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 0 (dma-buf needs the "
                "NVIDIA open kernel modules and Linux 5.12 or later)",
                description_));
        // The range must start and end on host page boundaries.
        const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
        const auto address = reinterpret_cast<std::uintptr_t>(pointer);
        if (address % page != 0)
            return export_failure(fmt::format(
                "GPU address {:#x} is not aligned to the {}-byte host page", address, page));
        const std::size_t rounded = (size + page - 1) / page * page;
        int fd = -1;
        if (CUresult rc = get_handle_(&fd, static_cast<CUdeviceptr>(address), rounded,
                                      CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
            rc != CUDA_SUCCESS)
            return export_failure(
                fmt::format("cuMemGetHandleForAddressRange failed: {}", driver_error(rc)));
        return export_success(fd, 0, "cuMemGetHandleForAddressRange");
    }

    void prepare_direct_access(void* pointer) override {
        // GPUDirect RDMA's rule: with SYNC_MEMOPS set, synchronous CUDA copies on this range
        // complete before they return, so they cannot race the NIC.
        if (!set_pointer_attribute_) fail("this CUDA driver has no cuPointerSetAttribute");
        unsigned int on = 1;
        if (CUresult rc = set_pointer_attribute_(
                &on, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS,
                static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(pointer)));
            rc != CUDA_SUCCESS)
            fail(fmt::format("cuPointerSetAttribute(SYNC_MEMOPS) failed: {}", driver_error(rc)));
    }

    std::string make_nic_writes_visible() override {
        check(cudaSetDevice(device_), "cudaSetDevice");
        int ordering = 0;
        check(cudaDeviceGetAttribute(&ordering, cudaDevAttrGPUDirectRDMAWritesOrdering, device_),
              "cudaDeviceGetAttribute(GPUDirectRDMAWritesOrdering)");
        if (ordering >= cudaGPUDirectRDMAWritesOrderingOwner)
            return fmt::format(
                "{} orders GPUDirect RDMA writes for its own kernels (WritesOrdering {}): "
                "no flush needed, the kernel queued after the completion sees them",
                description_,
                ordering >= cudaGPUDirectRDMAWritesOrderingAllDevices ? "all devices" : "owner");
        int options = 0;
        check(cudaDeviceGetAttribute(&options, cudaDevAttrGPUDirectRDMAFlushWritesOptions, device_),
              "cudaDeviceGetAttribute(GPUDirectRDMAFlushWritesOptions)");
        if (!(options & cudaFlushGPUDirectRDMAWritesOptionHost))
            return fmt::format(
                "{} neither orders GPUDirect RDMA writes nor offers a flush: the kernel is queued "
                "only after the completion was seen",
                description_);
        // The runtime's name for cuFlushGPUDirectRDMAWrites: returns once the NIC's writes
        // are visible to this device's context, before the verify kernel is launched.
        check(cudaDeviceFlushGPUDirectRDMAWrites(cudaFlushGPUDirectRDMAWritesTargetCurrentDevice,
                                                 cudaFlushGPUDirectRDMAWritesToOwner),
              "cudaDeviceFlushGPUDirectRDMAWrites");
        return "cudaDeviceFlushGPUDirectRDMAWrites (cuFlushGPUDirectRDMAWrites) made the NIC's "
               "writes visible "
               "before the verify kernel";
    }

  private:
    std::string driver_error(CUresult rc) const {
        const char* name = nullptr;
        if (error_name_ && error_name_(rc, &name) == CUDA_SUCCESS && name) return name;
        return fmt::format("CUresult {}", static_cast<int>(rc));
    }

    DeviceGetFn device_get_ = nullptr;
    DeviceGetAttributeFn get_attribute_ = nullptr;
    MemGetHandleFn get_handle_ = nullptr;
    PointerSetAttributeFn set_pointer_attribute_ = nullptr;
    GetErrorNameFn error_name_ = nullptr;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(int device) {
    return std::make_unique<CudaBackend>(device);
}

}  // namespace rdmalab::gpu
