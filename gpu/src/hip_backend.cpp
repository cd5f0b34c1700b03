// The HIP (ROCm) backend: hipMalloc, hipHostMalloc, hipMemcpyAsync and the kernels of
// hip_kernels.hip on one stream. dma-buf export is looked up at run time, because Debian's
// ROCm 5.2 has neither call: hipMemGetHandleForAddressRange (newer HIP runtimes) first, then
// hsa_amd_portable_export_dmabuf (ROCr, ROCm 5.6 and later); the binary built against 5.2 uses
// them where the installed runtime has them, and says so where it does not.
#include "rdmalab/gpu/backend.hpp"

#include "kernels.hpp"
#include "rdmalab/error.hpp"

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

void check_hip(hipError_t rc, std::string_view call) {
    if (rc != hipSuccess) fail(fmt::format("{} failed: {}", call, hip_error_text(rc)));
}

void warn_hip(hipError_t rc, std::string_view call) noexcept {
    if (rc != hipSuccess)
        std::fprintf(stderr, "warning: %.*s failed: %s\n", static_cast<int>(call.size()),
                     call.data(), hipGetErrorName(rc));
}

struct StreamDeleter {
    void operator()(hipStream_t stream) const noexcept {
        warn_hip(hipStreamDestroy(stream), "hipStreamDestroy");
    }
};
using Stream = std::unique_ptr<std::remove_pointer_t<hipStream_t>, StreamDeleter>;
struct DeviceFree {
    void operator()(void* pointer) const noexcept { warn_hip(hipFree(pointer), "hipFree"); }
};
using DeviceWord = std::unique_ptr<unsigned long long, DeviceFree>;

// The public signatures of the two export calls (HIP 6 and ROCr), declared here because the
// headers of ROCm 5.2 do not have them. Handle type 1 is hipMemRangeHandleTypeDmaBufFd.
using HipGetHandleFn = hipError_t (*)(void* handle, void* device_pointer, std::size_t size,
                                      int handle_type, unsigned long long flags);
using HsaExportFn = int (*)(const void* pointer, std::size_t size, int* dmabuf,
                            std::uint64_t* offset);
constexpr int kHipDmaBufHandle = 1;

class HipBackend final : public Backend {
  public:
    explicit HipBackend(int device) : device_(device) {
        int count = 0;
        check_hip(hipGetDeviceCount(&count), "hipGetDeviceCount");
        if (device_ >= count)
            fail(fmt::format("no ROCm device {} (this machine has {})", device_, count));
        check_hip(hipSetDevice(device_), "hipSetDevice");
        hipDeviceProp_t properties{};
        check_hip(hipGetDeviceProperties(&properties, device_), "hipGetDeviceProperties");
        char bus[32] = {};
        check_hip(hipDeviceGetPCIBusId(bus, sizeof bus, device_), "hipDeviceGetPCIBusId");
        description_ = fmt::format("ROCm device {} ({}, {}, PCI {})", device_, properties.name,
                                   properties.gcnArchName, bus);
        pci_bus_id_ = bus;
        device_facts_ = {{"device_name", properties.name},
                         {"gcn_arch", properties.gcnArchName},
                         {"pci_bus_id", bus},
                         {"memory_bytes", std::to_string(properties.totalGlobalMem)}};
        hipStream_t stream = nullptr;
        check_hip(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking),
                  "hipStreamCreateWithFlags");
        stream_owner_.reset(stream);
        stream_ = stream;
        void* word = nullptr;
        check_hip(hipMalloc(&word, sizeof(unsigned long long)), "hipMalloc(verify result)");
        first_bad_owner_.reset(static_cast<unsigned long long*>(word));
        first_bad_ = first_bad_owner_.get();
    }

    MemoryKind kind() const override { return MemoryKind::kRocm; }
    std::string description() const override { return description_; }
    const char* copy_call() const override { return "hipMemcpyAsync"; }
    const char* pinned_call() const override { return "hipHostMalloc"; }

    Facts facts() const override {
        Facts facts = device_facts_;
        int driver = 0;
        const hipError_t driver_rc = hipDriverGetVersion(&driver);
        facts.emplace_back("hip_driver",
                           version_fact(driver_rc == hipSuccess, hip_version_text(driver),
                                        "hipDriverGetVersion", hip_error_text(driver_rc)));
        int runtime = 0;
        const hipError_t runtime_rc = hipRuntimeGetVersion(&runtime);
        facts.emplace_back("hip_runtime",
                           version_fact(runtime_rc == hipSuccess, hip_version_text(runtime),
                                        "hipRuntimeGetVersion", hip_error_text(runtime_rc)));
        for (auto& link : pci_link_facts(pci_bus_id_)) facts.push_back(std::move(link));
        return facts;
    }

    void* allocate(std::size_t size) override {
        void* pointer = nullptr;
        check_hip(hipMalloc(&pointer, size), fmt::format("hipMalloc({} bytes)", size));
        check_hip(hipMemsetAsync(pointer, 0, size, stream_), "hipMemsetAsync");
        check_hip(hipStreamSynchronize(stream_), "hipStreamSynchronize");
        return pointer;
    }
    void release(void* pointer) noexcept override { warn_hip(hipFree(pointer), "hipFree"); }
    void* allocate_pinned(std::size_t size) override {
        void* pointer = nullptr;
        check_hip(hipHostMalloc(&pointer, size, hipHostMallocDefault),
                  fmt::format("hipHostMalloc({} bytes)", size));
        return pointer;
    }
    void release_pinned(void* pointer) noexcept override {
        warn_hip(hipHostFree(pointer), "hipHostFree");
    }

    void copy_to_device(void* device, const void* host, std::size_t size) override {
        check_hip(hipMemcpyAsync(device, host, size, hipMemcpyHostToDevice, stream_),
                  "hipMemcpyAsync(host to device)");
    }
    void copy_to_host(void* host, const void* device, std::size_t size) override {
        check_hip(hipMemcpyAsync(host, device, size, hipMemcpyDeviceToHost, stream_),
                  "hipMemcpyAsync(device to host)");
    }
    void fill_pattern(void* device, std::size_t count, std::uint64_t seed) override {
        check_hip(static_cast<hipError_t>(hip_launch_fill(device, count, seed, stream_)),
                  "fill kernel launch");
    }
    std::optional<std::size_t> find_mismatch(const void* device, std::size_t size,
                                             std::size_t count, std::uint64_t seed) override {
        check_hip(hipMemsetAsync(first_bad_, 0xff, sizeof *first_bad_, stream_),
                  "hipMemsetAsync(verify result)");
        check_hip(static_cast<hipError_t>(
                      hip_launch_verify(device, size, count, seed, first_bad_, stream_)),
                  "verify kernel launch");
        unsigned long long first_bad = 0;
        check_hip(hipMemcpyAsync(&first_bad, first_bad_, sizeof first_bad, hipMemcpyDeviceToHost,
                                 stream_),
                  "hipMemcpyAsync(verify result)");
        synchronize();
        if (first_bad == ~0ull) return std::nullopt;
        return static_cast<std::size_t>(first_bad);
    }
    void synchronize() override {
        check_hip(hipStreamSynchronize(stream_), "hipStreamSynchronize");
    }

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
    // HIP's version numbers are 10000000 * major + 100000 * minor + patch.
    static std::string hip_version_text(int version) {
        return fmt::format("{}.{} ({})", version / 10000000, version / 100000 % 100, version);
    }
    static std::string runtime_version() {
        int version = 0;
        if (hipRuntimeGetVersion(&version) != hipSuccess) return "unknown";
        return fmt::format("{}.{}", version / 10000000, version / 100000 % 100);
    }

    int device_;
    std::string description_;
    std::string pci_bus_id_;  // "0000:03:00.0"
    Facts device_facts_;      // what does not change while the program runs: name, bus id, …
    Stream stream_owner_;
    DeviceWord first_bad_owner_;
    hipStream_t stream_ = nullptr;
    unsigned long long* first_bad_ = nullptr;
};

}  // namespace

std::unique_ptr<Backend> make_hip_backend(int device) {
    return std::make_unique<HipBackend>(device);
}

}  // namespace rdmalab::gpu
