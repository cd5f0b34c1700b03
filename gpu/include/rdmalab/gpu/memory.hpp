// GPU memory for RDMA: N bytes of one memory kind (host, CUDA device N, ROCm device N), the GPU
// work the lessons and the benchmark do on it (fill, verify, copies), and its registration with
// the NIC through the ladder the field uses — dma-buf, then peer memory, then host staging —
// each rung probed and the one taken said in one line. Read src/registration.cpp once: it is
// the registration lesson.
#pragma once

#include "rdmalab/verbs.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rdmalab::gpu {

enum class MemoryKind { kHost, kCuda, kRocm };

// What --mem names: "host", "cuda", "cuda:1", "rocm", "rocm:0".
struct MemorySpec {
    MemoryKind kind = MemoryKind::kHost;
    int device = 0;
    bool operator==(const MemorySpec&) const = default;
};

// nullopt for anything else ("gpu", "cuda:", "cuda:-1", "host:1", "cuda:x").
std::optional<MemorySpec> parse_memory_spec(std::string_view text);
std::string to_string(const MemorySpec& spec);  // "host", "cuda:0", "rocm:1"
const char* kind_name(MemoryKind kind);         // "host", "cuda", "rocm"

// Whether this build has the backend for a kind (host: always), and the list for messages.
bool backend_built(MemoryKind kind);
std::string built_backends();  // "host, cuda, rocm"

// Which rung to use. kAuto walks the ladder; the others take that rung or fail with its reason.
enum class PathRequest { kAuto, kDmaBuf, kPeerMemory, kStaging };
// The rung taken. kHost: host memory registered as it is (no GPU involved).
enum class Path { kHost, kDmaBuf, kPeerMemory, kStaging };

std::optional<PathRequest> parse_path_request(
    std::string_view text);        // auto, dma-buf, peer, staging
const char* path_name(Path path);  // "host", "dma-buf", "peer memory", "staging"
const char* path_request_name(PathRequest request);

class Backend;  // one per allocation: the device, its stream, its calls (src/backend.hpp)

// N bytes of a memory kind, zero-filled. Throws Error with one line when the kind cannot be had:
// "--mem cuda: no CUDA driver (libcuda.so.1 not found)", "--mem rocm:1: hipGetDeviceCount: …".
// GPU work runs in order on the allocation's own stream.
class DeviceMemory {
  public:
    DeviceMemory(MemorySpec spec, std::size_t size);
    ~DeviceMemory();
    DeviceMemory(DeviceMemory&&) noexcept;
    DeviceMemory& operator=(DeviceMemory&&) noexcept;

    void* data() const { return data_; }  // the device (or host) address
    std::size_t size() const { return size_; }
    MemorySpec spec() const { return spec_; }
    std::string description() const;  // "CUDA device 0 (NVIDIA H100 80GB HBM3)"
    // Who does the GPU-side work (fill, verify) on it: "a GPU kernel", or "the CPU", which stands
    // in for one on host memory.
    const char* worker() const;

    // A kernel writes the rdmalab pattern (pattern.hpp) into bytes [0, count). Queued on the
    // stream: call synchronize() (or let RegisteredMemory::before_nic_reads do it) before a
    // NIC reads the bytes.
    void fill_pattern(std::uint64_t seed, std::size_t count);
    // A kernel checks bytes [0, count) hold the pattern and [count, size) are still zero; runs
    // after everything queued before it and waits for the answer: the first wrong byte or nullopt.
    std::optional<std::size_t> find_mismatch(std::uint64_t seed, std::size_t count);
    // The same check on the window [offset, offset + length) alone: the pattern in its first
    // count bytes, zeros after; the answer counts from offset.
    std::optional<std::size_t> find_mismatch(std::uint64_t seed, std::size_t count,
                                             std::size_t offset, std::size_t length);
    // Blocking copies between this memory and the host, at offset.
    void copy_from_host(std::span<const std::byte> source, std::size_t offset = 0);
    void copy_to_host(std::span<std::byte> destination, std::size_t offset = 0);
    void synchronize();

    Backend& backend() const { return *backend_; }

  private:
    void release() noexcept;
    MemorySpec spec_;
    std::size_t size_ = 0;
    std::unique_ptr<Backend> backend_;
    void* data_ = nullptr;
};

// Page-locked host memory from the backend (cudaHostAlloc, hipHostMalloc; host: page-aligned
// memory, which ibv_reg_mr pins): the bounce buffer of the staging path.
class PinnedHostMemory {
  public:
    PinnedHostMemory(Backend& backend, std::size_t size);
    ~PinnedHostMemory();
    PinnedHostMemory(const PinnedHostMemory&) = delete;
    PinnedHostMemory& operator=(const PinnedHostMemory&) = delete;
    std::byte* data() const { return data_; }
    std::size_t size() const { return size_; }

  private:
    Backend* backend_;
    std::byte* data_ = nullptr;
    std::size_t size_ = 0;
};

// One probe of one rung: whether it can be used, and the one line that says so or why not.
struct Probe {
    bool usable = false;
    std::string line;
};

// dma-buf, the provider half: ibv_reg_dmabuf_mr with no dma-buf at all (fd -1). A provider that
// does not implement it answers EOPNOTSUPP (rxe: "dma-buf: unsupported by provider rxe …");
// one that does gets as far as the bad fd (EBADF) or the length (EINVAL).
Probe probe_dmabuf_provider(ibv_pd* pd);
// Peer memory: a kernel module that lets ibv_reg_mr pin GPU memory (nvidia_peermem,
// nv_peer_mem, or an MLNX_OFED peer-memory client under /sys/kernel/mm/memory_peers).
// sysfs_root is for tests ("" = the real /sys).
Probe probe_peer_memory(MemoryKind kind, const std::string& sysfs_root = "");

// A file descriptor closed when its owner goes (the dma-buf of a registration).
class OwnedFd {
  public:
    explicit OwnedFd(int fd = -1) : fd_(fd) {}
    ~OwnedFd();
    OwnedFd(OwnedFd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
    OwnedFd& operator=(OwnedFd&& other) noexcept;
    int get() const { return fd_; }

  private:
    int fd_;
};

// Memory registered with the NIC by one rung of the ladder. The DeviceMemory must outlive it.
class RegisteredMemory {
  public:
    RegisteredMemory(RegisteredMemory&&) noexcept;
    RegisteredMemory& operator=(RegisteredMemory&&) noexcept;
    ~RegisteredMemory();

    ibv_mr* mr() const { return mr_.get(); }
    std::uint32_t lkey() const { return mr_->lkey; }
    std::uint32_t rkey() const { return mr_->rkey; }
    // The address work requests use: sge.addr locally, remote_addr for the peer. The GPU
    // address (dma-buf: the iova chosen at registration — mr->addr holds the fd offset there),
    // the bounce buffer's (staging), or the host buffer's.
    std::uint64_t nic_address() const { return nic_address_; }
    std::size_t length() const { return length_; }
    Path path() const { return path_; }
    // The probe lines, then "path: …": what a program prints.
    const std::vector<std::string>& report() const { return report_; }

    // Before the NIC reads bytes [offset, offset + count) (a local WRITE/SEND source, or a
    // buffer the peer will RDMA READ): staging copies device → bounce; every path waits for the
    // GPU work queued so far, so the NIC never reads what a kernel has not finished writing.
    void before_nic_reads(std::size_t count, std::size_t offset = 0);
    // After the NIC wrote bytes [offset, offset + count) and its completion was seen: staging
    // queues the bounce → device copy on the stream (a kernel queued after it sees the data); a
    // direct GPU path flushes GPUDirect RDMA writes where the device needs it. Returns the one
    // line that says how the data became visible to the next kernel.
    std::string after_nic_writes(std::size_t count, std::size_t offset = 0);

  private:
    friend RegisteredMemory register_memory(ibv_pd*, DeviceMemory&, int, PathRequest);
    explicit RegisteredMemory(DeviceMemory& memory);

    DeviceMemory* memory_;
    std::unique_ptr<PinnedHostMemory> bounce_;  // staging only
    OwnedFd dmabuf_;                            // dma-buf only; closed after the MR is released
    MemoryRegion mr_;
    std::uint64_t nic_address_ = 0;
    std::size_t length_ = 0;
    Path path_ = Path::kHost;
    std::vector<std::string> report_;
};

// Registers memory.size() bytes with access (least privilege: what the operation needs) by the
// rung requested; kAuto walks dma-buf → peer memory → staging and takes the first that works.
// A requested rung that fails, or a request that makes no sense (dma-buf of host memory),
// throws Error naming the rung and the reason.
RegisteredMemory register_memory(ibv_pd* pd, DeviceMemory& memory, int access,
                                 PathRequest request = PathRequest::kAuto);

}  // namespace rdmalab::gpu
