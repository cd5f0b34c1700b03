// The proxy lesson's shared memory and GPU producer (see proxy_producer.hpp): the host side.
// The kernel itself is in proxy_producer.cu; this file allocates the memory it shares with the
// CPU (cudaHostAlloc, mapped) and launches and waits for it on a stream of its own. ProxyProducer
// starts it, or the host thread of host_proxy_producer.cpp in its place.
#include "rdmalab/gpu/proxy_producer.hpp"

#include "kernels.hpp"
#include "rdmalab/error.hpp"

#ifdef RDMALAB_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#include <fmt/core.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>

namespace rdmalab::gpu {

namespace {

constexpr std::size_t kPage = 4096;

// Bytes of the shared allocation: the rings, then the samples, rounded up to whole pages.
std::size_t shared_bytes(std::size_t samples) {
    const std::size_t bytes = sizeof(ProxyRings) + samples * sizeof(ProducerSample);
    return (bytes + kPage - 1) / kPage * kPage;
}

#ifdef RDMALAB_HAVE_CUDA
void check_cuda(cudaError_t rc, std::string_view call) {
    if (rc != cudaSuccess)
        fail(fmt::format("{} failed: {} ({})", call, cudaGetErrorName(rc), cudaGetErrorString(rc)));
}
#endif

}  // namespace

void require_proxy_producer(const MemorySpec& spec) {
    switch (spec.kind) {
        case MemoryKind::kHost:
            return;
        case MemoryKind::kCuda:
#ifdef RDMALAB_HAVE_CUDA
            return;
#else
            fail(
                "--mem cuda: this build has no CUDA backend (configure with nvcc installed and "
                "RDMALAB_GPU=auto or cuda)");
#endif
        case MemoryKind::kRocm:
            fail(
                "--mem rocm: the proxy lesson has no HIP producer (its GPU producer is a CUDA "
                "kernel); use --mem host or --mem cuda");
    }
}

ProxySharedMemory::ProxySharedMemory(const MemorySpec& spec, std::size_t samples)
    : spec_(spec), sample_count_(samples) {
    require_proxy_producer(spec);
    const std::size_t bytes = shared_bytes(samples);
    if (spec.kind == MemoryKind::kHost) {
        allocation_ = std::aligned_alloc(kPage, bytes);
        if (allocation_ == nullptr) fail(fmt::format("aligned_alloc of {} bytes failed", bytes));
        device_address_ = allocation_;
    } else {
#ifdef RDMALAB_HAVE_CUDA
        check_cuda(cudaSetDevice(spec.device), "cudaSetDevice");
        // Page-locked, and mapped into the device: a kernel's loads and stores at the device
        // address travel over PCIe to this host memory; the CPU's stay in its caches, which
        // PCIe keeps coherent with the GPU's accesses.
        check_cuda(cudaHostAlloc(&allocation_, bytes, cudaHostAllocMapped),
                   "cudaHostAlloc(cudaHostAllocMapped)");
        cudaError_t rc = cudaHostGetDevicePointer(&device_address_, allocation_, 0);
        if (rc != cudaSuccess) {
            cudaFreeHost(allocation_);
            check_cuda(rc, "cudaHostGetDevicePointer");
        }
#endif
    }
    std::memset(allocation_, 0, bytes);
    rings_ = static_cast<ProxyRings*>(allocation_);
    samples_ = reinterpret_cast<ProducerSample*>(static_cast<std::byte*>(allocation_) +
                                                 sizeof(ProxyRings));
}

ProxySharedMemory::~ProxySharedMemory() {
    if (spec_.kind == MemoryKind::kHost) {
        std::free(allocation_);
        return;
    }
#ifdef RDMALAB_HAVE_CUDA
    if (cudaError_t rc = cudaFreeHost(allocation_); rc != cudaSuccess)
        std::fprintf(stderr, "warning: cudaFreeHost failed: %s\n", cudaGetErrorName(rc));
#endif
}

std::string ProxySharedMemory::description() const {
    const std::size_t bytes = shared_bytes(sample_count_);
    if (spec_.kind == MemoryKind::kHost)
        return fmt::format("{} request + {} completion slots in {} bytes of host memory",
                           kProxySlots, kProxySlots, bytes);
    return fmt::format(
        "{} request + {} completion slots in {} bytes of pinned host memory mapped into {} "
        "(cudaHostAlloc with cudaHostAllocMapped)",
        kProxySlots, kProxySlots, bytes, to_string(spec_));
}

struct GpuProxyProducer::State {
    std::string where;  // "CUDA device 0 (NVIDIA H100 …)"
    void* stream = nullptr;
    bool running = false;
};

GpuProxyProducer::GpuProxyProducer(DeviceMemory& data, ProxySharedMemory& shared,
                                   const ProducerPlan& plan)
    : state_(std::make_unique<State>()) {
    state_->where = data.description();
    if (data.spec().kind != MemoryKind::kCuda)
        fail(fmt::format("a GPU producer needs CUDA memory, not {}", to_string(data.spec())));
    if (plan.requests > shared.sample_count() || plan.requests * plan.length > data.size() ||
        plan.in_flight == 0 || plan.in_flight > kProxySlots)
        fail("the producer's plan does not fit its memory (requests, length, in flight)");
#ifdef RDMALAB_HAVE_CUDA
    check_cuda(cudaSetDevice(data.spec().device), "cudaSetDevice");
    // A stream of its own, non-blocking: the kernel runs until the last completion, and must
    // not hold up the memory's stream (the staging copy) or the legacy default stream.
    cudaStream_t stream = nullptr;
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
               "cudaStreamCreateWithFlags");
    state_->stream = stream;
    const int rc = cuda_launch_proxy_producer(
        data.data(), shared.device_address(),
        static_cast<std::byte*>(shared.device_address()) + sizeof(ProxyRings), plan, stream);
    if (rc != 0) {
        cudaStreamDestroy(stream);
        state_->stream = nullptr;
        check_cuda(static_cast<cudaError_t>(rc), "launching the producer kernel");
    }
    state_->running = true;
#else
    (void)shared;
    fail("--mem cuda: this build has no CUDA backend");
#endif
}

GpuProxyProducer::~GpuProxyProducer() {
#ifdef RDMALAB_HAVE_CUDA
    if (state_->running) {
        try {
            wait(std::chrono::seconds(30));  // the kernel's own waits time out before that
        } catch (const Error& e) {
            std::fprintf(stderr, "warning: %s\n", e.what());
        }
    }
    if (state_->stream) cudaStreamDestroy(static_cast<cudaStream_t>(state_->stream));
#endif
}

void GpuProxyProducer::wait(std::chrono::milliseconds limit) {
#ifdef RDMALAB_HAVE_CUDA
    if (!state_->running) return;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
        // Polled, not cudaStreamSynchronize: that would wait for ever on a kernel that hangs.
        cudaError_t rc = cudaStreamQuery(static_cast<cudaStream_t>(state_->stream));
        if (rc == cudaSuccess) break;
        if (rc != cudaErrorNotReady) {
            state_->running = false;
            check_cuda(rc, "the producer kernel");
        }
        if (std::chrono::steady_clock::now() > deadline)
            fail(fmt::format("the producer kernel did not finish within {:.1f} s",
                             limit.count() / 1000.0));
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    state_->running = false;
#else
    (void)limit;
#endif
}

std::string GpuProxyProducer::description() const {
    return fmt::format("a CUDA kernel (1 block of {} threads) on {}", kProxyProducerThreads,
                       state_->where);
}

const char* producer_outcome(std::uint32_t state) {
    switch (state) {
        case kProducerRunning:
            return "still running";
        case kProducerDone:
            return "saw every completion";
        case kProducerNoRoom:
            return "timed out waiting for a free slot";
        case kProducerNoCompletion:
            return "timed out waiting for a completion";
        case kProducerBadCompletion:
            return "read a completion out of order or failed";
        case kProducerProxyStopped:
            return "stopped because the proxy stopped";
    }
    return "ended in an unknown state";
}

ProxyProducer::ProxyProducer(DeviceMemory& data, ProxySharedMemory& shared,
                             const ProducerPlan& plan) {
    if (data.spec().kind == MemoryKind::kHost) {
        description_ = "a host thread (standing in for a GPU kernel)";
        thread_ = std::jthread(host_producer, static_cast<std::byte*>(data.data()),
                               std::ref(shared.rings()), shared.samples(), plan);
    } else {
        kernel_.emplace(data, shared, plan);
        description_ = kernel_->description();
    }
}

void ProxyProducer::wait(std::chrono::milliseconds limit) {
    if (kernel_) kernel_->wait(limit);
    if (thread_.joinable()) thread_.join();  // it ends by itself: all its waits are bounded
}

}  // namespace rdmalab::gpu
