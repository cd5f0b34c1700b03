// The registration ladder for GPU memory, as GPU networking libraries walk it:
//   (a) dma-buf: the GPU driver exports the range as a dma-buf fd, ibv_reg_dmabuf_mr registers it;
//   (b) peer memory: plain ibv_reg_mr on the GPU address, which only a peer-memory module
//       (nvidia_peermem, amdkfd's client in MLNX_OFED) makes possible;
//   (c) staging: pinned host memory registered normally, with explicit device <-> host copies
//       around every transfer — slower, but works with any NIC, Soft-RoCE included.
// Every rung is probed and says in one line whether it can be used and, if not, why.
#include "rdmalab/gpu/memory.hpp"

#include "rdmalab/error.hpp"
#include "rdmalab/gpu/backend.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

namespace rdmalab::gpu {
namespace {

// "EOPNOTSUPP: Operation not supported"
std::string errno_text(int code) {
    const char* name = strerrorname_np(code);
    return fmt::format("{}: {}", name ? name : std::to_string(code), std::strerror(code));
}

bool exists(const std::string& path) {
    std::error_code ignored;
    return std::filesystem::exists(path, ignored);
}

// Entries of /sys/kernel/mm/memory_peers (MLNX_OFED's peer-memory clients), comma-separated.
std::string peer_clients(const std::string& sysfs) {
    std::string clients;
    std::error_code error;
    for (const auto& entry :
         std::filesystem::directory_iterator(sysfs + "/kernel/mm/memory_peers", error))
        clients += (clients.empty() ? "" : ",") + entry.path().filename().string();
    return clients;
}

}  // namespace

OwnedFd::~OwnedFd() {
    if (fd_ >= 0) close(fd_);
}

OwnedFd& OwnedFd::operator=(OwnedFd&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) close(fd_);
        fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
}

Probe probe_dmabuf_provider(ibv_pd* pd) {
    const std::string provider = provider_name(pd->context);
    // #region dmabuf-probe
    // A registration that must fail: fd -1 is no dma-buf. How it fails says whether the provider
    // implements ibv_reg_dmabuf_mr at all — without needing a GPU.
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    errno = 0;
    ibv_mr* mr = ibv_reg_dmabuf_mr(pd, 0, page, 0, -1, IBV_ACCESS_LOCAL_WRITE);
    const int code = errno;
    // #endregion dmabuf-probe
    if (mr != nullptr) {
        MemoryRegion unexpected{mr};
        return {true, fmt::format("dma-buf: provider {} implements ibv_reg_dmabuf_mr", provider)};
    }
    if (code == EOPNOTSUPP || code == ENOSYS || code == EPROTONOSUPPORT)
        return {false, fmt::format("dma-buf: unsupported by provider {} (ibv_reg_dmabuf_mr: {})",
                                   provider, errno_text(code))};
    return {true, fmt::format("dma-buf: provider {} implements ibv_reg_dmabuf_mr (refused a probe "
                              "with no dma-buf: {})",
                              provider, errno_text(code))};
}

Probe probe_peer_memory(MemoryKind kind, const std::string& sysfs_root) {
    const std::string sysfs = sysfs_root.empty() ? "/sys" : sysfs_root;
    const std::string clients = peer_clients(sysfs);
    auto has_client = [&](std::string_view prefix) {
        for (std::size_t start = 0; start < clients.size();) {
            std::size_t end = clients.find(',', start);
            if (end == std::string::npos) end = clients.size();
            if (std::string_view(clients).substr(start, end - start).starts_with(prefix))
                return true;
            start = end + 1;
        }
        return false;
    };
    std::string found;
    if (kind != MemoryKind::kRocm) {
        for (const char* module : {"nvidia_peermem", "nv_peer_mem"})
            if (found.empty() && exists(sysfs + "/module/" + module))
                found = fmt::format("module {} loaded", module);
        if (found.empty() && has_client("nv"))
            found = "an NVIDIA client in /sys/kernel/mm/memory_peers (" + clients + ")";
    }
    if (kind != MemoryKind::kCuda && found.empty() && has_client("amdkfd"))
        found = "amdkfd's client in /sys/kernel/mm/memory_peers";
    if (!found.empty()) return {true, "peer memory: " + found};

    std::string looked;
    if (kind != MemoryKind::kRocm) looked = "no nvidia_peermem or nv_peer_mem module";
    if (kind != MemoryKind::kCuda)
        looked += std::string(looked.empty() ? "" : ", ") + "no amdkfd peer client";
    looked +=
        clients.empty() ? ", no /sys/kernel/mm/memory_peers" : ", memory_peers has only " + clients;
    return {false,
            fmt::format("peer memory: absent ({}): ibv_reg_mr cannot pin GPU memory here", looked)};
}

RegisteredMemory::RegisteredMemory(DeviceMemory& memory) : memory_(&memory) {}
RegisteredMemory::RegisteredMemory(RegisteredMemory&&) noexcept = default;
RegisteredMemory& RegisteredMemory::operator=(RegisteredMemory&&) noexcept = default;
RegisteredMemory::~RegisteredMemory() = default;

RegisteredMemory register_memory(ibv_pd* pd, DeviceMemory& memory, int access,
                                 PathRequest request) {
    RegisteredMemory registered(memory);
    registered.length_ = memory.size();
    Backend& backend = memory.backend();
    const bool host = memory.spec().kind == MemoryKind::kHost;
    if (host && (request == PathRequest::kDmaBuf || request == PathRequest::kPeerMemory))
        fail(fmt::format(
            "--path {}: host memory has no such rung (it is registered as it is, or staged)",
            path_request_name(request)));

    // The probes are cheap and are facts about this NIC and host: always run and report them.
    const Probe dmabuf = probe_dmabuf_provider(pd);
    const Probe peer = probe_peer_memory(memory.spec().kind);
    registered.report_ = {dmabuf.line, peer.line};
    auto rung_failed = [&](const std::string& line, PathRequest rung) {
        registered.report_.push_back(line);
        if (request == rung) fail(fmt::format("--path {}: {}", path_request_name(rung), line));
    };

    if (host && request == PathRequest::kAuto) {
        // #region register-host
        registered.mr_.reset(ibv_reg_mr(pd, memory.data(), memory.size(), access));
        check_ptr(registered.mr_.get(), "ibv_reg_mr(host memory)");
        // #endregion register-host
        registered.nic_address_ = reinterpret_cast<std::uintptr_t>(memory.data());
        registered.path_ = Path::kHost;
        registered.report_.push_back(fmt::format(
            "path: host memory, registered as it is with ibv_reg_mr ({} bytes)", memory.size()));
        return registered;
    }

    // (a) dma-buf.
    if (!host && (request == PathRequest::kAuto || request == PathRequest::kDmaBuf)) {
        if (!dmabuf.usable) {
            if (request == PathRequest::kDmaBuf) fail("--path dma-buf: " + dmabuf.line);
        } else if (DmaBufExport exported = backend.export_dmabuf(memory.data(), memory.size());
                   !exported.failure.empty()) {
            rung_failed("dma-buf: " + exported.failure, PathRequest::kDmaBuf);
        } else {
            // #region register-dmabuf
            // The NIC addresses the region by an iova we choose: the GPU address, so the peer
            // sees the same numbers as the GPU. (mr->addr will hold the fd offset, not this.)
            registered.dmabuf_ = OwnedFd(exported.fd);
            const std::uint64_t iova = reinterpret_cast<std::uintptr_t>(memory.data());
            errno = 0;
            ibv_mr* mr =
                ibv_reg_dmabuf_mr(pd, exported.offset, memory.size(), iova, exported.fd, access);
            // #endregion register-dmabuf
            if (mr == nullptr) {
                const int code = errno;
                registered.dmabuf_ = OwnedFd();
                rung_failed(fmt::format("dma-buf: ibv_reg_dmabuf_mr of the {} fd failed: {}",
                                        exported.call, errno_text(code)),
                            PathRequest::kDmaBuf);
            } else {
                registered.mr_.reset(mr);
                backend.prepare_direct_access(memory.data());
                registered.nic_address_ = iova;
                registered.path_ = Path::kDmaBuf;
                registered.report_.push_back(fmt::format(
                    "path: dma-buf: {} exported {} bytes of {} as fd {}, ibv_reg_dmabuf_mr "
                    "registered it "
                    "at iova {:#x} (the GPU address)",
                    exported.call, memory.size(), memory.description(), exported.fd, iova));
                return registered;
            }
        }
    }

    // (b) peer memory.
    if (!host && (request == PathRequest::kAuto || request == PathRequest::kPeerMemory)) {
        if (!peer.usable) {
            if (request == PathRequest::kPeerMemory) fail("--path peer: " + peer.line);
        } else {
            // #region register-peer
            // With a peer-memory module, ibv_reg_mr accepts a GPU address; without one the
            // kernel finds no host pages there and refuses (EFAULT).
            errno = 0;
            ibv_mr* mr = ibv_reg_mr(pd, memory.data(), memory.size(), access);
            // #endregion register-peer
            if (mr == nullptr) {
                rung_failed(fmt::format("peer memory: ibv_reg_mr on the GPU address failed: {}",
                                        errno_text(errno)),
                            PathRequest::kPeerMemory);
            } else {
                registered.mr_.reset(mr);
                backend.prepare_direct_access(memory.data());
                registered.nic_address_ = reinterpret_cast<std::uintptr_t>(memory.data());
                registered.path_ = Path::kPeerMemory;
                registered.report_.push_back(
                    fmt::format("path: peer memory: ibv_reg_mr registered {} bytes of {} at its "
                                "GPU address {:#x}",
                                memory.size(), memory.description(), registered.nic_address_));
                return registered;
            }
        }
    }

    // (c) staging: a pinned bounce buffer of the same size is what the NIC sees.
    // #region register-staging
    registered.bounce_ = std::make_unique<PinnedHostMemory>(backend, memory.size());
    registered.mr_.reset(ibv_reg_mr(pd, registered.bounce_->data(), memory.size(), access));
    check_ptr(registered.mr_.get(), "ibv_reg_mr(staging buffer)");
    // #endregion register-staging
    registered.nic_address_ = reinterpret_cast<std::uintptr_t>(registered.bounce_->data());
    registered.path_ = Path::kStaging;
    registered.report_.push_back(
        fmt::format("path: staging: {} bytes of pinned host memory ({}) registered with "
                    "ibv_reg_mr; {} moves the "
                    "data between it and {} around every transfer{}",
                    memory.size(), backend.pinned_call(), backend.copy_call(), memory.description(),
                    request == PathRequest::kStaging ? " (asked for with --path staging)" : ""));
    return registered;
}

namespace {
void check_range(std::size_t count, std::size_t offset, std::size_t length, const char* what) {
    if (offset > length || count > length - offset)
        fail(fmt::format("the NIC cannot {} bytes [{}, {}) of a {}-byte registration", what, offset,
                         offset + count, length));
}
}  // namespace

void RegisteredMemory::before_nic_reads(std::size_t count, std::size_t offset) {
    check_range(count, offset, length_, "read");
    if (path_ == Path::kStaging)
        memory_->backend().copy_to_host(bounce_->data() + offset,
                                        static_cast<std::byte*>(memory_->data()) + offset, count);
    // Whatever wrote the bytes (a kernel, a copy) must be finished before a work request is
    // posted: the NIC reads memory, not the GPU's queue.
    memory_->synchronize();
}

std::string RegisteredMemory::after_nic_writes(std::size_t count, std::size_t offset) {
    check_range(count, offset, length_, "have written");
    Backend& backend = memory_->backend();
    switch (path_) {
        case Path::kStaging:
            backend.copy_to_device(static_cast<std::byte*>(memory_->data()) + offset,
                                   bounce_->data() + offset, count);
            if (backend.kind() == MemoryKind::kHost)
                return fmt::format(
                    "staging: {} copied {} bytes from the bounce buffer into host memory",
                    backend.copy_call(), count);
            return fmt::format(
                "staging: {} of {} bytes from the bounce buffer into {} is queued on the stream "
                "ahead of "
                "the verify kernel: stream order makes the kernel see them, the CPU does not wait",
                backend.copy_call(), count, backend.description());
        case Path::kHost:
        case Path::kDmaBuf:
        case Path::kPeerMemory:
            return backend.make_nic_writes_visible();
    }
    return {};
}

}  // namespace rdmalab::gpu
