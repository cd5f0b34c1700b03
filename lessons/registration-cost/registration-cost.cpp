// Lesson: registration-cost — what ibv_reg_mr costs, measured: against region size, on pages
// never touched (registration faults them in and pins them) and on pages already resident, then
// what a registration cache saves when the same buffer is sent again and again (the reason every
// framework keeps one), what fork() does to registered memory, and whether the device does
// on-demand paging (asked, then tried). One process, no peer.
// Run: registration-cost [--max-size SIZE] [--repeat N]   (in the lab: Soft-RoCE under emulation:
// compare the rows with each other, never with hardware)
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/percentile.hpp"
#include "rdmalab/port_address.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

using namespace rdmalab;
using Clock = std::chrono::steady_clock;

namespace {

constexpr unsigned kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

double microseconds_since(Clock::time_point start) {
    return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// Anonymous memory straight from the kernel: no page exists until something touches it.
struct Mapping {
    explicit Mapping(std::size_t bytes) : size(bytes) {
        void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        check_errno(p != MAP_FAILED, "mmap");
        data = static_cast<std::byte*>(p);
    }
    // 4 KiB pages only, whatever the kernel's transparent-huge-page default.
    void small_pages_only() {
        check_errno(madvise(data, size, MADV_NOHUGEPAGE) == 0, "madvise(MADV_NOHUGEPAGE)");
    }
    ~Mapping() { munmap(data, size); }
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    std::byte* data = nullptr;
    std::size_t size = 0;
};

struct Timed {
    double reg_us = 0;
    double dereg_us = 0;
};

// #region time-registration
// One registration and its release, timed. ibv_reg_mr pins every page of the range (faulting in
// any that do not exist yet) and hands the NIC their translation; ibv_dereg_mr unpins them.
Timed time_registration(ibv_pd* pd, std::byte* data, std::size_t size) {
    const auto start = Clock::now();
    MemoryRegion mr{ibv_reg_mr(pd, data, size, kAccess)};
    check_ptr(mr.get(), "ibv_reg_mr");
    const double reg_us = microseconds_since(start);
    const auto release = Clock::now();
    mr.reset();  // ibv_dereg_mr
    return {reg_us, microseconds_since(release)};
}
// #endregion time-registration

// The median of `repeat` timings of fn() (each returns one Timed), as every program here takes it.
template <typename Fn>
Timed median_of(int repeat, Fn fn) {
    std::vector<double> reg, dereg;
    for (int i = 0; i < repeat; ++i) {
        const Timed t = fn();
        reg.push_back(t.reg_us);
        dereg.push_back(t.dereg_us);
    }
    return {median(std::move(reg)), median(std::move(dereg))};
}

// #region mr-cache
// The smallest useful registration cache: registrations kept by (address, length, access), so
// sending the same buffer again costs a lookup. Real caches (UCX's rcache, NCCL's) also watch for
// the memory being freed or remapped (munmap hooks, userfaultfd) and evict: a cached MR of freed
// memory would point the NIC at pages that now belong to something else.
class RegistrationCache {
  public:
    explicit RegistrationCache(ibv_pd* pd) : pd_(pd) {}
    ibv_mr* get(std::byte* data, std::size_t size, unsigned access) {
        const Key key{reinterpret_cast<std::uintptr_t>(data), size, access};
        if (auto found = cache_.find(key); found != cache_.end()) {
            ++hits_;
            return found->second.get();
        }
        MemoryRegion mr{ibv_reg_mr(pd_, data, size, static_cast<int>(access))};
        check_ptr(mr.get(), "ibv_reg_mr");
        return cache_.emplace(key, std::move(mr)).first->second.get();
    }
    std::size_t hits() const { return hits_; }

  private:
    using Key = std::tuple<std::uintptr_t, std::size_t, unsigned>;
    ibv_pd* pd_;
    std::map<Key, MemoryRegion> cache_;
    std::size_t hits_ = 0;
};
// #endregion mr-cache

struct Options {
    std::size_t max_size = 64u << 20;
    int repeat = 5;
    std::string device;
};

int run(const Options& options) {
    Context context = open_device(options.device);
    ProtectionDomain pd{check_ptr(ibv_alloc_pd(context.get()), "ibv_alloc_pd")};
    ibv_device_attr device{};
    check_ibv(ibv_query_device(context.get(), &device), "ibv_query_device");
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    fmt::print("registration-cost: {}, max_mr_size {:#x}, page size {} B\n",
               ibv_get_device_name(context->device), device.max_mr_size, page);
    fmt::print("registration-cost: each time the median of {} runs, in µs\n", options.repeat);

    // 1. Size, untouched pages against resident ones (4 KiB pages).
    fmt::print("{:>10} {:>6} {:>14} {:>13} {:>9} {:>15}\n", "size", "pages", "reg untouched",
               "reg resident", "dereg", "untouched/res.");
    double last_ratio = 0;
    for (std::size_t size = 4096; size <= options.max_size; size *= 16) {
        const Timed untouched = median_of(options.repeat, [&] {
            Mapping fresh(size);  // a new mapping each time: its pages do not exist yet
            fresh.small_pages_only();
            return time_registration(pd.get(), fresh.data, size);
        });
        Mapping resident(size);
        resident.small_pages_only();
        std::memset(resident.data, 1, size);  // every page faulted in by the CPU first
        const Timed warm = median_of(
            options.repeat, [&] { return time_registration(pd.get(), resident.data, size); });
        last_ratio = untouched.reg_us / warm.reg_us;
        fmt::print("{:>10} {:>6} {:>14.1f} {:>13.1f} {:>9.1f} {:>15.2f}\n", size, size / page,
                   untouched.reg_us, warm.reg_us, warm.dereg_us, last_ratio);
    }
    fmt::print(
        "registration-cost: untouched pages cost {:.2f}× resident ones at the largest size\n",
        last_ratio);

    // Huge pages: the same size resident in 4 KiB pages (MADV_NOHUGEPAGE) and in 2 MiB
    // transparent huge pages (MADV_HUGEPAGE, from a 2 MiB boundary), where the kernel has them.
    constexpr std::size_t kHuge = 2u << 20;
    const std::size_t huge_size =
        std::max(kHuge, std::min(options.max_size, std::size_t{16} << 20) / kHuge * kHuge);
    Mapping small_pages(huge_size);
    small_pages.small_pages_only();
    std::memset(small_pages.data, 1, huge_size);
    const Timed small = median_of(
        options.repeat, [&] { return time_registration(pd.get(), small_pages.data, huge_size); });
    Mapping huge_pages(huge_size + kHuge);  // room to start at a 2 MiB boundary
    auto* aligned = reinterpret_cast<std::byte*>(
        (reinterpret_cast<std::uintptr_t>(huge_pages.data) + kHuge - 1) & ~(kHuge - 1));
    if (madvise(aligned, huge_size, MADV_HUGEPAGE) != 0) {
        fmt::print("registration-cost: no transparent huge pages here (madvise: {})\n",
                   std::strerror(errno));
    } else {
        std::memset(aligned, 1, huge_size);
        const Timed huge = median_of(
            options.repeat, [&] { return time_registration(pd.get(), aligned, huge_size); });
        fmt::print(
            "registration-cost: {} MiB resident: {:.1f} µs in 4 KiB pages, {:.1f} µs "
            "in huge pages\n",
            huge_size >> 20, small.reg_us, huge.reg_us);
        fmt::print("registration-cost: huge pages registered {:.2f}× faster\n",
                   small.reg_us / huge.reg_us);
    }

    // 2. The same buffer "sent" 100 times: a registration per send, or one from the cache.
    constexpr int kSends = 100;
    const std::size_t size = std::min<std::size_t>(options.max_size, 1u << 20);
    Mapping buffer(size);
    std::memset(buffer.data, 2, size);
    auto start = Clock::now();
    for (int i = 0; i < kSends; ++i) {
        MemoryRegion mr{ibv_reg_mr(pd.get(), buffer.data, size, kAccess)};
        check_ptr(mr.get(), "ibv_reg_mr");
    }
    const double uncached_us = microseconds_since(start);
    RegistrationCache cache(pd.get());
    start = Clock::now();
    for (int i = 0; i < kSends; ++i) cache.get(buffer.data, size, kAccess);
    const double cached_us = microseconds_since(start);
    if (cache.hits() != kSends - 1) fail("the cache missed a buffer it had registered");
    fmt::print("registration-cost: {} sends of one {} B buffer, registered for each: {:.0f} µs\n",
               kSends, size, uncached_us);
    fmt::print("registration-cost: the same through the cache ({} hits): {:.0f} µs, {:.0f}× less\n",
               cache.hits(), cached_us, uncached_us / std::max(cached_us, 0.001));

    // 3. fork() with registered memory.
    // #region fork
    // Since Linux 5.13 and rdma-core 35 the kernel keeps a pinned page with the parent when a
    // child is forked (the child gets a copy), so ibv_fork_init and MADV_DONTFORK are no longer
    // needed; ibv_is_fork_initialized says which world this is.
    const ibv_fork_status fork_status = ibv_is_fork_initialized();
    fmt::print("registration-cost: ibv_is_fork_initialized: {}\n",
               fork_status == IBV_FORK_UNNEEDED  ? "IBV_FORK_UNNEEDED (no ibv_fork_init needed)"
               : fork_status == IBV_FORK_ENABLED ? "IBV_FORK_ENABLED"
                                                 : "IBV_FORK_DISABLED (call ibv_fork_init first)");
    Mapping shared(page);
    std::memset(shared.data, 'P', page);
    MemoryRegion pinned{ibv_reg_mr(pd.get(), shared.data, page, kAccess)};
    check_ptr(pinned.get(), "ibv_reg_mr(before fork)");
    const pid_t child = fork();
    check_errno(child >= 0, "fork");
    if (child == 0) {  // the child: it sees the parent's bytes, and writes only its own copy
        const bool saw = shared.data[0] == std::byte{'P'};
        std::memset(shared.data, 'C', page);
        _exit(saw ? 0 : 3);
    }
    int status = 0;
    check_errno(waitpid(child, &status, 0) == child, "waitpid");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail("the forked child did not see the parent's registered bytes");
    if (shared.data[0] != std::byte{'P'})
        fail("the child's write reached the parent's registered page");
    fmt::print("registration-cost: after fork the child read the page and wrote its own copy\n");
    fmt::print("registration-cost: the parent's page, pinned by lkey {:#x}, is unchanged\n",
               pinned->lkey);
    // #endregion fork

    // 4. On-demand paging: asked, then tried.
    // #region odp
    // ODP is reported in the extended attributes: IBV_ODP_SUPPORT in odp_caps.general_caps, and
    // per transport which operations may touch an ODP MR. An MR with IBV_ACCESS_ON_DEMAND pins
    // nothing when registered: the NIC faults pages in as it touches them. Asked, then tried,
    // because the answer is the device's (and its kernel's) to give.
    ibv_device_attr_ex extended{};
    check_ibv(ibv_query_device_ex(context.get(), nullptr, &extended), "ibv_query_device_ex");
    const ibv_odp_caps& odp = extended.odp_caps;
    fmt::print(
        "registration-cost: odp_caps general_caps {:#x} (IBV_ODP_SUPPORT {}), rc {:#x}, ud {:#x}\n",
        odp.general_caps, odp.general_caps & IBV_ODP_SUPPORT ? "set" : "clear",
        odp.per_transport_caps.rc_odp_caps, odp.per_transport_caps.ud_odp_caps);
    Mapping untouched(16 * page);
    errno = 0;
    MemoryRegion on_demand{ibv_reg_mr(pd.get(), untouched.data, untouched.size,
                                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND)};
    if (on_demand)
        fmt::print(
            "registration-cost: ibv_reg_mr with ON_DEMAND: registered {} B of untouched pages, "
            "lkey {:#x}\n",
            untouched.size, on_demand->lkey);
    else
        fmt::print("registration-cost: ibv_reg_mr with ON_DEMAND: refused, {} ({})\n",
                   strerrorname_np(errno), std::strerror(errno));
    // #endregion odp
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("registration-cost", [&] {
        CommandLine cli{"What ibv_reg_mr costs: size, page faults, a cache, fork",
                        "registration-cost"};
        Options options;
        std::string max_size = "64M";
        cli.option("--max-size", max_size, "largest region registered (4K, then ×16 up to it)")
            .check([](const std::string& text) -> std::string {
                const auto bytes = parse_size(text);
                if (!bytes || *bytes < 4096 || *bytes > (std::size_t{1} << 30))
                    return "a size from 4K to 1G, such as 64M";
                return "";
            })
            .show_default();
        cli.option("--repeat", options.repeat, "runs per measurement (the median is shown)")
            .range(1, 101)
            .show_default();
        cli.option("-d,--device", options.device, "RDMA device (default: the first)");
        cli.parse_or_exit(argc, argv);
        options.max_size = *parse_size(max_size);
        return run(options);
    });
}
