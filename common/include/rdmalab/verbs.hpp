// One owning type per verbs object: each releases its object when it goes out of scope, so
// declaring them in creation order unwinds them in reverse order on every path.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace rdmalab {

void report_release_failure(std::string_view call, int rc);

// Calls Release (ibv_dealloc_pd, ibv_dereg_mr…) and reports, but cannot throw, a failure:
// a failed release (EBUSY) means something still uses the object — a teardown-order bug.
template <auto Release, const char* Name>
struct Releaser {
    template <typename T>
    void operator()(T* object) const noexcept {
        if (int rc = Release(object)) report_release_failure(Name, rc);
    }
};

inline constexpr char kCloseDevice[] = "ibv_close_device";
inline constexpr char kDeallocPd[] = "ibv_dealloc_pd";
inline constexpr char kDeregMr[] = "ibv_dereg_mr";
inline constexpr char kDestroyCq[] = "ibv_destroy_cq";
inline constexpr char kDestroyCompChannel[] = "ibv_destroy_comp_channel";
inline constexpr char kDestroyQp[] = "ibv_destroy_qp";
inline constexpr char kDestroyAh[] = "ibv_destroy_ah";
inline constexpr char kDestroySrq[] = "ibv_destroy_srq";
inline constexpr char kDeallocMw[] = "ibv_dealloc_mw";

using Context = std::unique_ptr<ibv_context, Releaser<ibv_close_device, kCloseDevice>>;
using ProtectionDomain = std::unique_ptr<ibv_pd, Releaser<ibv_dealloc_pd, kDeallocPd>>;
using MemoryRegion = std::unique_ptr<ibv_mr, Releaser<ibv_dereg_mr, kDeregMr>>;
using CompletionQueue = std::unique_ptr<ibv_cq, Releaser<ibv_destroy_cq, kDestroyCq>>;
using CompletionChannel =
    std::unique_ptr<ibv_comp_channel, Releaser<ibv_destroy_comp_channel, kDestroyCompChannel>>;
using QueuePair = std::unique_ptr<ibv_qp, Releaser<ibv_destroy_qp, kDestroyQp>>;
using AddressHandle = std::unique_ptr<ibv_ah, Releaser<ibv_destroy_ah, kDestroyAh>>;
using SharedReceiveQueue = std::unique_ptr<ibv_srq, Releaser<ibv_destroy_srq, kDestroySrq>>;
// A bound window holds on to its MR and QP: release it before them (declare it after them).
using MemoryWindow = std::unique_ptr<ibv_mw, Releaser<ibv_dealloc_mw, kDeallocMw>>;

struct DeviceListDeleter {
    void operator()(ibv_device** list) const noexcept { ibv_free_device_list(list); }
};
using DeviceList = std::unique_ptr<ibv_device*[], DeviceListDeleter>;

// The devices ibv_get_device_list returns, as a span; throws if the call itself fails.
struct Devices {
    DeviceList list;
    std::span<ibv_device*> all;
};
Devices get_devices();

// Throws "no RDMA device named 'x' (available: a, b)" unless name is empty or exists.
void require_device_exists(const std::string& name);

// Page-aligned memory for registration, zero-filled.
class Buffer {
  public:
    explicit Buffer(std::size_t size);
    std::byte* data() { return memory_.get(); }
    const std::byte* data() const { return memory_.get(); }
    std::size_t size() const { return size_; }
    std::span<std::byte> bytes() { return {data(), size_}; }
    std::span<const std::byte> bytes() const { return {data(), size_}; }

  private:
    struct Free {
        void operator()(std::byte* p) const noexcept;
    };
    std::unique_ptr<std::byte, Free> memory_;
    std::size_t size_;
};

// Bytes of an ibv_mtu enum value (IBV_MTU_1024 → 1024); 0 for a value no port reports.
int mtu_bytes(ibv_mtu mtu);
// The ibv_mtu of a byte count (1024 → IBV_MTU_1024); none unless it is 256, 512, 1024, 2048 or
// 4096 (a count from a peer or a command line is checked with it).
std::optional<ibv_mtu> mtu_from_bytes(std::uint32_t bytes);

// "fe80::1234:…" or "::ffff:198.51.100.1" for a GID.
std::string format_gid(const ibv_gid& gid);

// An IPv4-mapped GID (::ffff:a.b.c.d) is how RoCE carries an IPv4 address in a GID.
bool is_ipv4_mapped(const ibv_gid& gid);

// "IB", "RoCE v1" or "RoCE v2" for ibv_gid_entry::gid_type.
const char* gid_type_name(std::uint32_t gid_type);

}  // namespace rdmalab

#include <chrono>

namespace rdmalab {

// Polls cq until one work completion arrives or timeout passes (then throws). A completion
// with an error status throws too, naming `what` and ibv_wc_status_str. Busy-polls first,
// then backs off to short sleeps so a long wait does not burn a core.
ibv_wc wait_for_completion(ibv_cq* cq, std::chrono::milliseconds timeout, std::string_view what);

// The provider behind a device, for messages and records: the kernel driver of a hardware device
// ("mlx5_core", from sysfs), "rxe" or "siw" for the software ones, else the device's name.
std::string provider_name(ibv_context* context);

// The next work completion, whatever its status (for lessons that provoke errors on purpose);
// throws only if none arrives within timeout.
ibv_wc wait_for_any_completion(ibv_cq* cq, std::chrono::milliseconds timeout,
                               std::string_view what);

}  // namespace rdmalab
