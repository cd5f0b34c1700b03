// Memory kinds and allocations: see memory.hpp. Picks the backend for a kind and turns "this
// kind cannot be had here" into one line that names the kind.
#include "rdmalab/gpu/memory.hpp"

#include "rdmalab/error.hpp"
#include "rdmalab/gpu/backend.hpp"

#include <fmt/core.h>

#include <charconv>
#include <utility>

namespace rdmalab::gpu {

std::optional<MemorySpec> parse_memory_spec(std::string_view text) {
    const auto colon = text.find(':');
    const std::string_view name = text.substr(0, colon);
    MemorySpec spec;
    if (name == "host")
        spec.kind = MemoryKind::kHost;
    else if (name == "cuda")
        spec.kind = MemoryKind::kCuda;
    else if (name == "rocm")
        spec.kind = MemoryKind::kRocm;
    else
        return std::nullopt;
    if (colon == std::string_view::npos) return spec;
    if (spec.kind == MemoryKind::kHost) return std::nullopt;  // host has no device number
    const std::string_view number = text.substr(colon + 1);
    if (number.empty() || number.size() > 4) return std::nullopt;
    auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), spec.device);
    if (error != std::errc{} || end != number.data() + number.size() || spec.device < 0)
        return std::nullopt;
    return spec;
}

const char* kind_name(MemoryKind kind) {
    switch (kind) {
        case MemoryKind::kHost:
            return "host";
        case MemoryKind::kCuda:
            return "cuda";
        case MemoryKind::kRocm:
            return "rocm";
    }
    return "?";
}

std::string to_string(const MemorySpec& spec) {
    if (spec.kind == MemoryKind::kHost) return "host";
    return fmt::format("{}:{}", kind_name(spec.kind), spec.device);
}

bool backend_built(MemoryKind kind) {
    switch (kind) {
        case MemoryKind::kHost:
            return true;
#ifdef RDMALAB_HAVE_CUDA
        case MemoryKind::kCuda:
            return true;
#endif
#ifdef RDMALAB_HAVE_HIP
        case MemoryKind::kRocm:
            return true;
#endif
        default:
            return false;
    }
}

std::string built_backends() {
    std::string list = "host";
    if (backend_built(MemoryKind::kCuda)) list += ", cuda";
    if (backend_built(MemoryKind::kRocm)) list += ", rocm";
    return list;
}

std::optional<PathRequest> parse_path_request(std::string_view text) {
    if (text == "auto") return PathRequest::kAuto;
    if (text == "dma-buf" || text == "dmabuf") return PathRequest::kDmaBuf;
    if (text == "peer") return PathRequest::kPeerMemory;
    if (text == "staging") return PathRequest::kStaging;
    return std::nullopt;
}

const char* path_name(Path path) {
    switch (path) {
        case Path::kHost:
            return "host";
        case Path::kDmaBuf:
            return "dma-buf";
        case Path::kPeerMemory:
            return "peer memory";
        case Path::kStaging:
            return "staging";
    }
    return "?";
}

const char* path_request_name(PathRequest request) {
    switch (request) {
        case PathRequest::kAuto:
            return "auto";
        case PathRequest::kDmaBuf:
            return "dma-buf";
        case PathRequest::kPeerMemory:
            return "peer";
        case PathRequest::kStaging:
            return "staging";
    }
    return "?";
}

namespace {

std::unique_ptr<Backend> make_backend(const MemorySpec& spec) {
    switch (spec.kind) {
        case MemoryKind::kHost:
            return make_host_backend();
        case MemoryKind::kCuda:
#ifdef RDMALAB_HAVE_CUDA
            return make_cuda_backend(spec.device);
#else
            fail(
                "this build has no CUDA backend (configure with nvcc installed and "
                "RDMALAB_GPU=auto or cuda)");
#endif
        case MemoryKind::kRocm:
#ifdef RDMALAB_HAVE_HIP
            return make_hip_backend(spec.device);
#else
            fail(
                "this build has no HIP backend (configure with hipcc and libamdhip64-dev installed "
                "and RDMALAB_GPU=auto or hip)");
#endif
    }
    fail("unknown memory kind");
}

}  // namespace

DeviceMemory::DeviceMemory(MemorySpec spec, std::size_t size) : spec_(spec), size_(size) {
    try {
        backend_ = make_backend(spec);
    } catch (const Error& e) {
        // "--mem cuda: no CUDA driver (libcuda.so.1 not found)": what was asked, what is missing.
        fail(fmt::format("--mem {}: {}",
                         spec.kind == MemoryKind::kHost ? "host" : kind_name(spec.kind), e.what()));
    }
    // GPU allocations are rounded up to 2 MiB, the size dma-buf export and GPUDirect RDMA
    // handle best (whole GPU pages, page-aligned start); only size bytes are ever registered.
    constexpr std::size_t kGpuPage = std::size_t{2} << 20;
    const std::size_t allocated =
        spec.kind == MemoryKind::kHost ? size : (size + kGpuPage - 1) / kGpuPage * kGpuPage;
    data_ = backend_->allocate(allocated);
}

DeviceMemory::~DeviceMemory() {
    release();
}

void DeviceMemory::release() noexcept {
    if (backend_ && data_) backend_->release(data_);
    data_ = nullptr;
}

DeviceMemory::DeviceMemory(DeviceMemory&& other) noexcept
    : spec_(other.spec_),
      size_(other.size_),
      backend_(std::move(other.backend_)),
      data_(std::exchange(other.data_, nullptr)) {}

DeviceMemory& DeviceMemory::operator=(DeviceMemory&& other) noexcept {
    if (this != &other) {
        release();
        spec_ = other.spec_;
        size_ = other.size_;
        backend_ = std::move(other.backend_);
        data_ = std::exchange(other.data_, nullptr);
    }
    return *this;
}

std::string DeviceMemory::description() const {
    return backend_->description();
}

const char* DeviceMemory::worker() const {
    return spec_.kind == MemoryKind::kHost ? "the CPU" : "a GPU kernel";
}

void DeviceMemory::fill_pattern(std::uint64_t seed, std::size_t count) {
    if (count > size_) fail(fmt::format("cannot fill {} bytes of a {}-byte buffer", count, size_));
    backend_->fill_pattern(data_, count, seed);
}

std::optional<std::size_t> DeviceMemory::find_mismatch(std::uint64_t seed, std::size_t count) {
    if (count > size_)
        fail(fmt::format("cannot verify {} bytes of a {}-byte buffer", count, size_));
    return backend_->find_mismatch(data_, size_, count, seed);
}

std::optional<std::size_t> DeviceMemory::find_mismatch(std::uint64_t seed, std::size_t count,
                                                       std::size_t offset, std::size_t length) {
    if (offset > size_ || length > size_ - offset || count > length)
        fail(fmt::format("cannot verify {} of bytes [{}, {}) of a {}-byte buffer", count, offset,
                         offset + length, size_));
    return backend_->find_mismatch(static_cast<std::byte*>(data_) + offset, length, count, seed);
}

void DeviceMemory::copy_from_host(std::span<const std::byte> source, std::size_t offset) {
    if (offset > size_ || source.size() > size_ - offset)
        fail("copy_from_host: past the end of the buffer");
    backend_->copy_to_device(static_cast<std::byte*>(data_) + offset, source.data(), source.size());
    backend_->synchronize();
}

void DeviceMemory::copy_to_host(std::span<std::byte> destination, std::size_t offset) {
    if (offset > size_ || destination.size() > size_ - offset)
        fail("copy_to_host: past the end of the buffer");
    backend_->copy_to_host(destination.data(), static_cast<const std::byte*>(data_) + offset,
                           destination.size());
    backend_->synchronize();
}

void DeviceMemory::synchronize() {
    backend_->synchronize();
}

PinnedHostMemory::PinnedHostMemory(Backend& backend, std::size_t size)
    : backend_(&backend),
      data_(static_cast<std::byte*>(backend.allocate_pinned(size))),
      size_(size) {}

PinnedHostMemory::~PinnedHostMemory() {
    if (data_) backend_->release_pinned(data_);
}

}  // namespace rdmalab::gpu
