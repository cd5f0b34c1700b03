// What the CUDA and HIP backends share. Their runtimes offer the same calls under their own
// names (cudaMalloc and hipMalloc, cudaMemcpyAsync and hipMemcpyAsync, …), so choosing the
// device, allocation, copies, the fill and verify kernels on one stream and the stream's
// synchronisation, and the versions a measurement records, are written once here, over Runtime:
// a struct of static functions that make one toolkit's calls (CudaRuntime in cuda_backend.cpp,
// HipRuntime in hip_backend.cpp). What differs — the device's properties, dma-buf export,
// GPUDirect flushes — stays in each backend.
//
// Runtime provides:
//   Error, Stream                 the toolkit's error code (0: success) and stream handle
//   kPrefix                       "cuda", "hip": the calls' names are kPrefix + "Malloc", …
//   kDevice                       "CUDA", "ROCm": how a device is named in messages
//   kPinnedCall, kPinnedFreeCall  the pinned host memory calls' names, which differ
//   kCopyCall                     kPrefix + "MemcpyAsync"
//   kRuntimeLinkage               said after the runtime's version (", cudart_static"), or ""
//   error_text(rc), error_name(rc)          for failures, and for warnings (the name alone)
//   driver_version(&v), runtime_version(&v), version_text(v)
//   device_count(&n), set_device(d), pci_bus_id(text, length, d)   each returns an Error, as
//                                                                   every call below does
//   malloc(&p, n), free(p), host_alloc(&p, n), host_free(p)
//   memset_async(p, byte, n, s), to_device(d, h, n, s), to_host(h, d, n, s), synchronize(s)
//   create_stream(&s) (non-blocking), destroy_stream(s)
//   launch_fill(p, count, seed, s), launch_verify(p, size, count, seed, first_bad, s)
#pragma once

#include "rdmalab/error.hpp"
#include "rdmalab/gpu/backend.hpp"

#include <fmt/core.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace rdmalab::gpu {

template <typename Runtime>
class StreamBackend : public Backend {
  protected:
    using Error = typename Runtime::Error;

  public:
    std::string description() const final { return description_; }
    const char* copy_call() const final { return Runtime::kCopyCall; }
    const char* pinned_call() const final { return Runtime::kPinnedCall; }
    // The device's own facts, the driver's and the runtime's versions, what the toolkit adds
    // (add_toolkit_facts), and the PCIe link.
    Facts facts() const final {
        Facts facts = device_facts_;
        facts.emplace_back(fmt::format("{}_driver", Runtime::kPrefix),
                           version(Runtime::driver_version, call("DriverGetVersion"), ""));
        facts.emplace_back(
            fmt::format("{}_runtime", Runtime::kPrefix),
            version(Runtime::runtime_version, call("RuntimeGetVersion"), Runtime::kRuntimeLinkage));
        add_toolkit_facts(facts);
        for (auto& link : pci_link_facts(pci_bus_id_)) facts.push_back(std::move(link));
        return facts;
    }

    void* allocate(std::size_t size) final {
        void* pointer = nullptr;
        check(Runtime::malloc(&pointer, size), fmt::format("{}({} bytes)", call("Malloc"), size));
        check(Runtime::memset_async(pointer, 0, size, stream_), call("MemsetAsync"));
        synchronize();
        return pointer;
    }
    void release(void* pointer) noexcept final { warn(Runtime::free(pointer), call("Free")); }
    void* allocate_pinned(std::size_t size) final {
        void* pointer = nullptr;
        check(Runtime::host_alloc(&pointer, size),
              fmt::format("{}({} bytes)", Runtime::kPinnedCall, size));
        return pointer;
    }
    void release_pinned(void* pointer) noexcept final {
        warn(Runtime::host_free(pointer), Runtime::kPinnedFreeCall);
    }

    void copy_to_device(void* device, const void* host, std::size_t size) final {
        check(Runtime::to_device(device, host, size, stream_),
              fmt::format("{}(host to device)", Runtime::kCopyCall));
    }
    void copy_to_host(void* host, const void* device, std::size_t size) final {
        check(Runtime::to_host(host, device, size, stream_),
              fmt::format("{}(device to host)", Runtime::kCopyCall));
    }
    void fill_pattern(void* device, std::size_t count, std::uint64_t seed) final {
        check(static_cast<Error>(Runtime::launch_fill(device, count, seed, stream_)),
              "fill kernel launch");
    }
    std::optional<std::size_t> find_mismatch(const void* device, std::size_t size,
                                             std::size_t count, std::uint64_t seed) final {
        // All ones is "no wrong byte"; the kernel lowers it with an atomic minimum.
        check(Runtime::memset_async(first_bad_, 0xff, sizeof *first_bad_, stream_),
              call("MemsetAsync(verify result)"));
        check(static_cast<Error>(
                  Runtime::launch_verify(device, size, count, seed, first_bad_, stream_)),
              "verify kernel launch");
        unsigned long long first_bad = 0;
        check(Runtime::to_host(&first_bad, first_bad_, sizeof first_bad, stream_),
              fmt::format("{}(verify result)", Runtime::kCopyCall));
        synchronize();
        if (first_bad == ~0ull) return std::nullopt;
        return static_cast<std::size_t>(first_bad);
    }
    void synchronize() final { check(Runtime::synchronize(stream_), call("StreamSynchronize")); }

  protected:
    // Makes device the current one and reads its PCI bus id, then creates the backend's stream
    // and the verify kernel's result word on it.
    explicit StreamBackend(int device) : device_(device) {
        int count = 0;
        check(Runtime::device_count(&count), call("GetDeviceCount"));
        if (device_ >= count)
            fail(fmt::format("no {} device {} (this machine has {})", Runtime::kDevice, device_,
                             count));
        check(Runtime::set_device(device_), call("SetDevice"));
        char bus[32] = {};
        check(Runtime::pci_bus_id(bus, sizeof bus, device_), call("DeviceGetPCIBusId"));
        pci_bus_id_ = bus;
        typename Runtime::Stream stream = nullptr;
        check(Runtime::create_stream(&stream), call("StreamCreateWithFlags"));
        stream_owner_.reset(stream);
        stream_ = stream;
        void* word = nullptr;
        check(Runtime::malloc(&word, sizeof(unsigned long long)), call("Malloc(verify result)"));
        first_bad_owner_.reset(static_cast<unsigned long long*>(word));
        first_bad_ = first_bad_owner_.get();
    }

    // Facts only this toolkit has (CUDA: the kernel module), added after the versions.
    virtual void add_toolkit_facts(Facts&) const {}

    // "CALL failed: ERROR", thrown; or, where nothing may throw (releases), printed.
    static void check(Error rc, std::string_view what) {
        if (rc != Error{}) fail(fmt::format("{} failed: {}", what, Runtime::error_text(rc)));
    }
    static void warn(Error rc, std::string_view what) noexcept {
        if (rc != Error{})
            std::fprintf(stderr, "warning: %.*s failed: %s\n", static_cast<int>(what.size()),
                         what.data(), Runtime::error_name(rc));
    }
    // A call's name: call("Malloc") is "cudaMalloc" or "hipMalloc".
    static std::string call(std::string_view suffix) {
        return fmt::format("{}{}", Runtime::kPrefix, suffix);
    }

    int device_;
    std::string pci_bus_id_;  // "0000:3B:00.0"
    // Set by the backend's constructor.
    std::string description_;  // "CUDA device 0 (NVIDIA H100 …, PCI 0000:3B:00.0)"
    Facts device_facts_;       // what does not change while the program runs: name, bus id, …

  private:
    static std::string version(Error (*query)(int*), const std::string& call_name,
                               std::string_view linkage) {
        int version = 0;
        const Error rc = query(&version);
        return version_fact(rc == Error{}, Runtime::version_text(version) + std::string(linkage),
                            call_name, Runtime::error_name(rc));
    }

    struct StreamDestroy {
        void operator()(typename Runtime::Stream stream) const noexcept {
            warn(Runtime::destroy_stream(stream), call("StreamDestroy"));
        }
    };
    struct DeviceFree {
        void operator()(void* pointer) const noexcept {
            warn(Runtime::free(pointer), call("Free"));
        }
    };

    std::unique_ptr<std::remove_pointer_t<typename Runtime::Stream>, StreamDestroy> stream_owner_;
    std::unique_ptr<unsigned long long, DeviceFree> first_bad_owner_;
    typename Runtime::Stream stream_ = nullptr;  // stream_owner_'s stream
    unsigned long long* first_bad_ =
        nullptr;  // first_bad_owner_'s word: the verify kernel's answer
};

}  // namespace rdmalab::gpu
