// Owning types and small verbs utilities: see verbs.hpp.
#include "rdmalab/verbs.hpp"

#include "rdmalab/error.hpp"
#include "rdmalab/trace.hpp"
#include "rdmalab/verbs_names.hpp"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>

namespace rdmalab {

void report_release_failure(std::string_view call, int rc) {
    fmt::print(stderr, "warning: {} failed: {}\n", call, std::strerror(rc < 0 ? errno : rc));
}

Devices get_devices() {
    int count = 0;
    DeviceList list{ibv_get_device_list(&count)};
    check_errno(list != nullptr, "ibv_get_device_list");
    std::span<ibv_device*> all{list.get(), static_cast<std::size_t>(count)};
    return {std::move(list), all};
}

void require_device_exists(const std::string& name) {
    if (name.empty()) return;
    auto devices = get_devices();
    std::string available;
    for (ibv_device* device : devices.all) {
        if (name == ibv_get_device_name(device)) return;
        available += (available.empty() ? "" : ", ") + std::string(ibv_get_device_name(device));
    }
    fail(fmt::format("no RDMA device named '{}' (available: {})", name,
                     available.empty() ? "none" : available));
}

Buffer::Buffer(std::size_t size) : size_(size) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t rounded = (size + page - 1) / page * page;
    void* memory = std::aligned_alloc(page, rounded);
    if (memory == nullptr) fail(fmt::format("cannot allocate a buffer of {} bytes", size));
    std::memset(memory, 0, rounded);
    memory_.reset(static_cast<std::byte*>(memory));
}

void Buffer::Free::operator()(std::byte* p) const noexcept {
    std::free(p);
}

int mtu_bytes(ibv_mtu mtu) {
    switch (mtu) {
        case IBV_MTU_256:
            return 256;
        case IBV_MTU_512:
            return 512;
        case IBV_MTU_1024:
            return 1024;
        case IBV_MTU_2048:
            return 2048;
        case IBV_MTU_4096:
            return 4096;
    }
    return 0;
}

std::optional<ibv_mtu> mtu_from_bytes(std::uint32_t bytes) {
    for (const ibv_mtu mtu : {IBV_MTU_256, IBV_MTU_512, IBV_MTU_1024, IBV_MTU_2048, IBV_MTU_4096})
        if (static_cast<std::uint32_t>(mtu_bytes(mtu)) == bytes) return mtu;
    return std::nullopt;
}

std::string format_gid(const ibv_gid& gid) {
    char text[INET6_ADDRSTRLEN] = {};
    inet_ntop(AF_INET6, gid.raw, text, sizeof text);
    return text;
}

bool is_ipv4_mapped(const ibv_gid& gid) {
    static constexpr std::uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return std::memcmp(gid.raw, kPrefix, sizeof kPrefix) == 0;
}

const char* gid_type_name(std::uint32_t gid_type) {
    switch (gid_type) {
        case IBV_GID_TYPE_IB:
            return "IB";
        case IBV_GID_TYPE_ROCE_V1:
            return "RoCE v1";
        case IBV_GID_TYPE_ROCE_V2:
            return "RoCE v2";
    }
    return "unknown GID type";
}

}  // namespace rdmalab

#include <thread>

namespace rdmalab {

std::string provider_name(ibv_context* context) {
    // A hardware device's kernel driver: /sys/class/infiniband/mlx5_0/device/driver -> mlx5_core.
    std::error_code error;
    auto driver = std::filesystem::read_symlink(
        std::string(context->device->ibdev_path) + "/device/driver", error);
    if (!error) return driver.filename().string();
    // Software devices have no PCI device; their vendor ids name them.
    ibv_device_attr attributes{};
    if (ibv_query_device(context, &attributes) == 0) {
        if (attributes.vendor_id == 0xffffff) return "rxe";  // Soft-RoCE
        if (attributes.vendor_id == 0x626d74) return "siw";  // Soft-iWARP
    }
    return ibv_get_device_name(context->device);
}

ibv_wc wait_for_any_completion(ibv_cq* cq, std::chrono::milliseconds timeout,
                               std::string_view what) {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + timeout;
    for (unsigned long polls = 0;; ++polls) {
        ibv_wc wc{};
        int found = ibv_poll_cq(cq, 1, &wc);
        if (found < 0) fail(fmt::format("ibv_poll_cq failed while waiting for {}", what));
        if (found == 1) {
            trace::completion(wc);
            return wc;
        }
        if (polls % 1024 == 0 && Clock::now() > deadline)
            fail(fmt::format("{}: no completion within {:.1f} s", what, timeout.count() / 1000.0));
        if (polls > 100'000) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
}

ibv_wc wait_for_completion(ibv_cq* cq, std::chrono::milliseconds timeout, std::string_view what) {
    ibv_wc wc = wait_for_any_completion(cq, timeout, what);
    if (wc.status != IBV_WC_SUCCESS) fail(fmt::format("{}: {}", what, failed_completion(wc)));
    return wc;
}

}  // namespace rdmalab
