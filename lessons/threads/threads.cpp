// Lesson: threads — several threads driving RDMA WRITEs, arranged three ways, message rates
// measured for 1, 2 and 4 threads: one QP shared by every thread (posting under the
// application's lock, then under the provider's alone), one QP per thread with one shared CQ
// drained by a single poller thread, and one QP and one CQ per thread, each thread polling its
// own. Every thread writes its own slice of the target, verified at the end. What the verbs
// guarantee: each call is thread-safe (the provider locks the queue); the order of WRs that
// different threads post to one QP is whatever order their calls took the lock.
// Run: threads [-n WRITES_PER_THREAD] [--max-threads N]   (one process, two sides of loopback QPs)
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/port_address.hpp"
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/verbs.hpp"
#include "rdmalab/verbs_names.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace rdmalab;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::uint32_t kMessage = 64;
constexpr std::uint32_t kWindow = 32;  // WRITEs a thread keeps in flight
constexpr std::uint32_t kMaxThreads = 8;

enum class Layout {
    kSharedQpAppLock,
    kSharedQpProviderLock,
    kQpPerThreadSharedCq,
    kQpAndCqPerThread
};

const char* layout_name(Layout layout) {
    switch (layout) {
        case Layout::kSharedQpAppLock:
            return "one QP, application lock";
        case Layout::kSharedQpProviderLock:
            return "one QP, provider lock only";
        case Layout::kQpPerThreadSharedCq:
            return "QP per thread, one CQ + poller";
        case Layout::kQpAndCqPerThread:
            return "QP and CQ per thread";
    }
    return "";
}

struct Options {
    std::string device;
    std::uint32_t writes = 1000;  // per thread
    std::uint32_t max_threads = 4;
    double timeout_s = 30;
};

// The objects of one run: `queues` initiator QPs (each with a loopback target QP), `cqs` CQs.
struct Rig {
    std::vector<CompletionQueue> cqs;
    std::vector<QueuePair> initiators, targets;
};

class Run {
  public:
    Run(ibv_context* context, ibv_pd* pd, const PortAddress& local, Layout layout,
        std::uint32_t threads, const Options& options, std::byte* target, ibv_mr* target_mr,
        std::byte* source, ibv_mr* source_mr)
        : layout_(layout),
          threads_(threads),
          options_(options),
          target_(target),
          target_mr_(target_mr),
          source_(source),
          source_mr_(source_mr) {
        const bool shared_qp =
            layout == Layout::kSharedQpAppLock || layout == Layout::kSharedQpProviderLock;
        const std::uint32_t qps = shared_qp ? 1 : threads;
        const std::uint32_t cqs = layout == Layout::kQpAndCqPerThread ? threads : 1;
        const std::uint32_t depth = kWindow * (shared_qp ? threads : 1);
        for (std::uint32_t c = 0; c < cqs; ++c)
            rig_.cqs.emplace_back(check_ptr(
                ibv_create_cq(context, static_cast<int>(kWindow * threads), nullptr, nullptr, 0),
                "ibv_create_cq"));
        // The targets only receive WRITEs: their own small CQ, never polled (nothing completes).
        target_cq_.reset(
            check_ptr(ibv_create_cq(context, 1, nullptr, nullptr, 0), "ibv_create_cq"));
        for (std::uint32_t q = 0; q < qps; ++q) {
            ibv_qp_init_attr init{};
            init.send_cq = init.recv_cq = rig_.cqs[q % cqs].get();
            init.qp_type = IBV_QPT_RC;
            init.cap.max_send_wr = depth;
            init.cap.max_send_sge = 1;
            init.cap.max_recv_wr = 1;
            init.cap.max_recv_sge = 1;
            rig_.initiators.emplace_back(check_ptr(ibv_create_qp(pd, &init), "ibv_create_qp"));
            init.send_cq = init.recv_cq = target_cq_.get();
            init.cap.max_send_wr = 1;
            rig_.targets.emplace_back(check_ptr(ibv_create_qp(pd, &init), "ibv_create_qp"));
            connect_loopback(rig_.initiators.back().get(), 0, rig_.targets.back().get(),
                             IBV_ACCESS_REMOTE_WRITE, local);
        }
    }

    // Runs every thread to the end; returns the message rate (WRITEs per second, all threads).
    double measure() {
        for (auto& n : in_flight_) n = 0;
        std::vector<std::thread> workers;
        const auto start = Clock::now();
        for (std::uint32_t t = 0; t < threads_; ++t) workers.emplace_back([this, t] { work(t); });
        if (layout_ != Layout::kQpAndCqPerThread) poll_for_all();
        for (auto& w : workers) w.join();
        if (!error_.empty()) fail(error_);
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        return threads_ * static_cast<double>(options_.writes) / seconds;
    }

  private:
    // One thread: `writes` WRITEs of its own slice, never more than kWindow in flight. On a
    // shared QP the posts of all threads go to one send queue: ibv_post_send is thread-safe
    // (the provider takes the queue's lock), so the application lock is needed only to keep
    // something of the application's consistent with the post — here, nothing.
    void work(std::uint32_t thread) {
        const bool shared_qp = rig_.initiators.size() == 1;
        ibv_qp* qp = rig_.initiators[shared_qp ? 0 : thread].get();
        ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(source_ + thread * kMessage),
                    .length = kMessage,
                    .lkey = source_mr_->lkey};
        ibv_send_wr write{};
        write.sg_list = &sge;
        write.num_sge = 1;
        write.opcode = IBV_WR_RDMA_WRITE;
        write.send_flags = IBV_SEND_SIGNALED;
        write.wr.rdma.remote_addr = reinterpret_cast<std::uintptr_t>(target_ + thread * kMessage);
        write.wr.rdma.rkey = target_mr_->rkey;
        write.wr_id = thread;
        // #region post-from-threads
        const auto deadline = Clock::now() + to_milliseconds(options_.timeout_s);
        for (std::uint32_t posted = 0; posted < options_.writes && error_.empty();) {
            if (in_flight_[thread].load(std::memory_order_acquire) >= kWindow) {
                // Window full: poll our own CQ, or give the CPU to whoever will (the poller, and
                // on Soft-RoCE the kernel code that is the NIC).
                if (layout_ == Layout::kQpAndCqPerThread)
                    poll_own(thread);
                else
                    std::this_thread::yield();
                if (Clock::now() > deadline)
                    return set_error("a thread's WRITEs stopped completing");
                continue;
            }
            ibv_send_wr* bad = nullptr;
            int rc = 0;
            if (layout_ == Layout::kSharedQpAppLock) {
                std::lock_guard lock(post_mutex_);
                rc = ibv_post_send(qp, &write, &bad);
            } else {
                rc = ibv_post_send(qp, &write, &bad);
            }
            if (rc != 0) return set_error(fmt::format("ibv_post_send failed: {}", rc));
            in_flight_[thread].fetch_add(1, std::memory_order_release);
            ++posted;
        }
        // #endregion post-from-threads
        while (layout_ == Layout::kQpAndCqPerThread && in_flight_[thread].load() > 0 &&
               error_.empty()) {
            poll_own(thread);
            if (Clock::now() > deadline) return set_error("a thread's last WRITEs never completed");
        }
    }

    void poll_own(std::uint32_t thread) {
        std::array<ibv_wc, 16> wcs{};
        const int n = ibv_poll_cq(rig_.cqs[thread].get(), static_cast<int>(wcs.size()), wcs.data());
        for (int i = 0; i < n; ++i) account(wcs[static_cast<std::size_t>(i)]);
    }

    // The single poller: drains the one CQ for every thread until all WRITEs have completed.
    void poll_for_all() {
        const std::uint64_t total = std::uint64_t{threads_} * options_.writes;
        const auto deadline = Clock::now() + to_milliseconds(options_.timeout_s);
        std::array<ibv_wc, 16> wcs{};
        for (std::uint64_t done = 0; done < total && error_.empty();) {
            const int n = ibv_poll_cq(rig_.cqs[0].get(), static_cast<int>(wcs.size()), wcs.data());
            for (int i = 0; i < n; ++i) account(wcs[static_cast<std::size_t>(i)]);
            done += static_cast<std::uint64_t>(std::max(n, 0));
            if (n > 0) continue;
            if (Clock::now() > deadline) set_error("the WRITEs stopped completing");
            std::this_thread::yield();  // an empty CQ: let the posting threads run
        }
    }

    void account(const ibv_wc& wc) {
        if (wc.status != IBV_WC_SUCCESS) return set_error(failed_completion(wc));
        in_flight_[wc.wr_id].fetch_sub(1, std::memory_order_acq_rel);
    }
    void set_error(const std::string& what) {
        std::lock_guard lock(error_mutex_);
        if (error_.empty()) error_ = what;
    }

    Layout layout_;
    std::uint32_t threads_;
    const Options& options_;
    std::byte* target_;
    ibv_mr* target_mr_;
    std::byte* source_;
    ibv_mr* source_mr_;
    CompletionQueue target_cq_;
    Rig rig_;
    std::array<std::atomic<std::uint32_t>, kMaxThreads> in_flight_{};
    std::mutex post_mutex_, error_mutex_;
    std::string error_;
};

int run(const Options& options) {
    Context context = open_device(options.device);
    const PortAddress local = choose_port_address(context.get(), 1, -1);
    ProtectionDomain pd{check_ptr(ibv_alloc_pd(context.get()), "ibv_alloc_pd")};
    // Each thread writes slice t of the target from slice t of the source.
    Buffer source(kMaxThreads * kMessage), target(kMaxThreads * kMessage);
    fill_pattern(source.bytes(), 0x7d);
    MemoryRegion source_mr{ibv_reg_mr(pd.get(), source.data(), source.size(), 0)};
    check_ptr(source_mr.get(), "ibv_reg_mr(source)");
    MemoryRegion target_mr{ibv_reg_mr(pd.get(), target.data(), target.size(),
                                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)};
    check_ptr(target_mr.get(), "ibv_reg_mr(target)");
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    fmt::print("threads: {}; {} CPUs online; {} WRITEs of {} B per thread, {} in flight each\n",
               local.description, cpus, options.writes, kMessage, kWindow);
    if (cpus < static_cast<long>(options.max_threads))
        fmt::print(
            "threads: more threads than CPUs share cores: rates past {} threads show "
            "contention, not parallelism\n",
            cpus);
    std::vector<std::uint32_t> counts;
    for (std::uint32_t t = 1; t <= options.max_threads; t *= 2) counts.push_back(t);
    std::string header = fmt::format("{:<34}", "layout (WRITEs/s)");
    for (std::uint32_t t : counts) header += fmt::format(" {:>10}", fmt::format("{} thr.", t));
    fmt::print("{}\n", header);
    for (Layout layout : {Layout::kSharedQpAppLock, Layout::kSharedQpProviderLock,
                          Layout::kQpPerThreadSharedCq, Layout::kQpAndCqPerThread}) {
        std::string row = fmt::format("{:<34}", layout_name(layout));
        for (std::uint32_t threads : counts) {
            Run run_once(context.get(), pd.get(), local, layout, threads, options, target.data(),
                         target_mr.get(), source.data(), source_mr.get());
            row += fmt::format(" {:>10.0f}", run_once.measure());
        }
        fmt::print("{}\n", row);
    }
    const std::size_t written = counts.back() * kMessage;
    if (auto bad = find_pattern_mismatch(target.bytes().first(written), 0x7d))
        fail(fmt::format("byte {} of the threads' slices is not what they wrote", *bad));
    fmt::print("threads: every thread's slice of the target verified ({} bytes)\n", written);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("threads", [&] {
        CommandLine cli{"Threads and QPs: a shared QP, a QP per thread, shared and own CQs",
                        "threads"};
        Options options;
        cli.option("-d,--device", options.device, "RDMA device (default: the first)");
        cli.option("-n,--writes", options.writes, "WRITEs per thread per measurement")
            .range(1u, 1u << 24)
            .show_default();
        cli.option("--max-threads", options.max_threads, "the most threads (1, 2, 4 or 8)")
            .check([](const std::string& text) -> std::string {
                return text == "1" || text == "2" || text == "4" || text == "8" ? ""
                                                                                : "1, 2, 4 or 8";
            })
            .show_default();
        cli.option("--timeout", options.timeout_s, "seconds a measurement may take")
            .range(0.1, 600.0)
            .show_default();
        cli.parse_or_exit(argc, argv);
        return run(options);
    });
}
