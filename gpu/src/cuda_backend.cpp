// The CUDA backend. The runtime (cudart, linked statically) allocates, copies and launches;
// driver functions that only the driver API has — cuMemGetHandleForAddressRange (dma-buf
// export), cuDeviceGetAttribute(DMA_BUF_SUPPORTED), cuPointerSetAttribute(SYNC_MEMOPS) — are
// fetched at run time with cudaGetDriverEntryPointByVersion, so nothing links libcuda.so and
// one binary serves machines with and without an NVIDIA driver, saying which it found.
#include "rdmalab/gpu/backend.hpp"

#include "kernels.hpp"
#include "rdmalab/error.hpp"

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

void check_cuda(cudaError_t rc, std::string_view call) {
    if (rc != cudaSuccess)
        fail(fmt::format("{} failed: {} ({})", call, cudaGetErrorName(rc), cudaGetErrorString(rc)));
}

void warn_cuda(cudaError_t rc, std::string_view call) noexcept {
    if (rc != cudaSuccess)
        std::fprintf(stderr, "warning: %.*s failed: %s\n", static_cast<int>(call.size()),
                     call.data(), cudaGetErrorName(rc));
}

// The driver functions used, with the ABI version asked for (the version that introduced them).
using DeviceGetFn = CUresult (*)(CUdevice*, int);
using DeviceGetAttributeFn = CUresult (*)(int*, CUdevice_attribute, CUdevice);
using MemGetHandleFn = CUresult (*)(void*, CUdeviceptr, std::size_t, CUmemRangeHandleType,
                                    unsigned long long);
using PointerSetAttributeFn = CUresult (*)(const void*, CUpointer_attribute, CUdeviceptr);
using GetErrorNameFn = CUresult (*)(CUresult, const char**);

// RAII owners for the backend's own stream and result word.
struct StreamDeleter {
    void operator()(cudaStream_t stream) const noexcept {
        warn_cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
    }
};
using Stream = std::unique_ptr<CUstream_st, StreamDeleter>;
struct DeviceFree {
    void operator()(void* pointer) const noexcept { warn_cuda(cudaFree(pointer), "cudaFree"); }
};
using DeviceWord = std::unique_ptr<unsigned long long, DeviceFree>;

// CUDA's version numbers are 1000 * major + 10 * minor: 12040 is "12.4".
std::string cuda_version_text(int version) {
    return fmt::format("{}.{} ({})", version / 1000, version % 1000 / 10, version);
}

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

class CudaBackend final : public Backend {
  public:
    explicit CudaBackend(int device) : device_(device) {
        // The runtime would report a missing driver as "CUDA driver version is insufficient":
        // look for the driver library first, to say what is really missing.
        if (void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
            dlclose(driver);
        } else {
            fail("no CUDA driver (libcuda.so.1 not found)");
        }
        int count = 0;
        check_cuda(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
        if (device_ >= count)
            fail(fmt::format("no CUDA device {} (this machine has {})", device_, count));
        check_cuda(cudaSetDevice(device_), "cudaSetDevice");
        cudaDeviceProp properties{};
        check_cuda(cudaGetDeviceProperties(&properties, device_), "cudaGetDeviceProperties");
        char bus[32] = {};
        check_cuda(cudaDeviceGetPCIBusId(bus, sizeof bus, device_), "cudaDeviceGetPCIBusId");
        description_ = fmt::format("CUDA device {} ({}, PCI {})", device_, properties.name, bus);
        pci_bus_id_ = bus;
        device_facts_ = {
            {"device_name", properties.name},
            {"pci_bus_id", bus},
            {"compute_capability", fmt::format("{}.{}", properties.major, properties.minor)},
            {"memory_bytes", std::to_string(properties.totalGlobalMem)},
            {"copy_engines", std::to_string(properties.asyncEngineCount)}};
        cudaStream_t stream = nullptr;
        check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                   "cudaStreamCreateWithFlags");
        stream_owner_.reset(stream);
        stream_ = stream;
        void* word = nullptr;
        check_cuda(cudaMalloc(&word, sizeof(unsigned long long)), "cudaMalloc(verify result)");
        first_bad_owner_.reset(static_cast<unsigned long long*>(word));
        first_bad_ = first_bad_owner_.get();

        device_get_ = driver_function<DeviceGetFn>("cuDeviceGet", 2000);
        get_attribute_ = driver_function<DeviceGetAttributeFn>("cuDeviceGetAttribute", 2000);
        get_handle_ = driver_function<MemGetHandleFn>("cuMemGetHandleForAddressRange", 11070);
        set_pointer_attribute_ =
            driver_function<PointerSetAttributeFn>("cuPointerSetAttribute", 6000);
        error_name_ = driver_function<GetErrorNameFn>("cuGetErrorName", 6000);
    }

    MemoryKind kind() const override { return MemoryKind::kCuda; }
    std::string description() const override { return description_; }
    const char* copy_call() const override { return "cudaMemcpyAsync"; }
    const char* pinned_call() const override { return "cudaHostAlloc"; }

    Facts facts() const override {
        Facts facts = device_facts_;
        int driver = 0;
        const cudaError_t driver_rc = cudaDriverGetVersion(&driver);
        facts.emplace_back("cuda_driver",
                           version_fact(driver_rc == cudaSuccess, cuda_version_text(driver),
                                        "cudaDriverGetVersion", cudaGetErrorName(driver_rc)));
        int runtime = 0;
        const cudaError_t runtime_rc = cudaRuntimeGetVersion(&runtime);
        facts.emplace_back(
            "cuda_runtime",
            version_fact(runtime_rc == cudaSuccess, cuda_version_text(runtime) + ", cudart_static",
                         "cudaRuntimeGetVersion", cudaGetErrorName(runtime_rc)));
        facts.emplace_back("nvidia_kernel_module", nvidia_kernel_module());
        for (auto& link : pci_link_facts(pci_bus_id_)) facts.push_back(std::move(link));
        return facts;
    }

    void* allocate(std::size_t size) override {
        void* pointer = nullptr;
        check_cuda(cudaMalloc(&pointer, size), fmt::format("cudaMalloc({} bytes)", size));
        check_cuda(cudaMemsetAsync(pointer, 0, size, stream_), "cudaMemsetAsync");
        check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
        return pointer;
    }
    void release(void* pointer) noexcept override { warn_cuda(cudaFree(pointer), "cudaFree"); }
    void* allocate_pinned(std::size_t size) override {
        void* pointer = nullptr;
        check_cuda(cudaHostAlloc(&pointer, size, cudaHostAllocDefault),
                   fmt::format("cudaHostAlloc({} bytes)", size));
        return pointer;
    }
    void release_pinned(void* pointer) noexcept override {
        warn_cuda(cudaFreeHost(pointer), "cudaFreeHost");
    }

    void copy_to_device(void* device, const void* host, std::size_t size) override {
        check_cuda(cudaMemcpyAsync(device, host, size, cudaMemcpyHostToDevice, stream_),
                   "cudaMemcpyAsync(host to device)");
    }
    void copy_to_host(void* host, const void* device, std::size_t size) override {
        check_cuda(cudaMemcpyAsync(host, device, size, cudaMemcpyDeviceToHost, stream_),
                   "cudaMemcpyAsync(device to host)");
    }
    void fill_pattern(void* device, std::size_t count, std::uint64_t seed) override {
        check_cuda(static_cast<cudaError_t>(cuda_launch_fill(device, count, seed, stream_)),
                   "fill kernel launch");
    }
    std::optional<std::size_t> find_mismatch(const void* device, std::size_t size,
                                             std::size_t count, std::uint64_t seed) override {
        // All ones is "no wrong byte"; the kernel lowers it with atomicMin.
        check_cuda(cudaMemsetAsync(first_bad_, 0xff, sizeof *first_bad_, stream_),
                   "cudaMemsetAsync(verify result)");
        check_cuda(static_cast<cudaError_t>(
                       cuda_launch_verify(device, size, count, seed, first_bad_, stream_)),
                   "verify kernel launch");
        unsigned long long first_bad = 0;
        check_cuda(cudaMemcpyAsync(&first_bad, first_bad_, sizeof first_bad, cudaMemcpyDeviceToHost,
                                   stream_),
                   "cudaMemcpyAsync(verify result)");
        synchronize();
        if (first_bad == ~0ull) return std::nullopt;
        return static_cast<std::size_t>(first_bad);
    }
    void synchronize() override {
        check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
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
        check_cuda(cudaSetDevice(device_), "cudaSetDevice");
        int ordering = 0;
        check_cuda(
            cudaDeviceGetAttribute(&ordering, cudaDevAttrGPUDirectRDMAWritesOrdering, device_),
            "cudaDeviceGetAttribute(GPUDirectRDMAWritesOrdering)");
        if (ordering >= cudaGPUDirectRDMAWritesOrderingOwner)
            return fmt::format(
                "{} orders GPUDirect RDMA writes for its own kernels (WritesOrdering {}): "
                "no flush needed, the kernel queued after the completion sees them",
                description_,
                ordering >= cudaGPUDirectRDMAWritesOrderingAllDevices ? "all devices" : "owner");
        int options = 0;
        check_cuda(
            cudaDeviceGetAttribute(&options, cudaDevAttrGPUDirectRDMAFlushWritesOptions, device_),
            "cudaDeviceGetAttribute(GPUDirectRDMAFlushWritesOptions)");
        if (!(options & cudaFlushGPUDirectRDMAWritesOptionHost))
            return fmt::format(
                "{} neither orders GPUDirect RDMA writes nor offers a flush: the kernel is queued "
                "only after the completion was seen",
                description_);
        // The runtime's name for cuFlushGPUDirectRDMAWrites: returns once the NIC's writes
        // are visible to this device's context, before the verify kernel is launched.
        check_cuda(
            cudaDeviceFlushGPUDirectRDMAWrites(cudaFlushGPUDirectRDMAWritesTargetCurrentDevice,
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

    int device_;
    std::string description_;
    std::string pci_bus_id_;  // "0000:3B:00.0"
    Facts device_facts_;      // what does not change while the program runs: name, bus id, …
    Stream stream_owner_;
    DeviceWord first_bad_owner_;
    cudaStream_t stream_ = nullptr;  // stream_owner_'s stream
    unsigned long long* first_bad_ =
        nullptr;  // first_bad_owner_'s word: the verify kernel's answer
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
