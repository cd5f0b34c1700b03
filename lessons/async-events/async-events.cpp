// Lesson: async-events — the events a device reports outside any completion queue, read by a
// thread of their own with ibv_get_async_event and acknowledged with ibv_ack_async_event: a
// shared receive queue running low (IBV_EVENT_SRQ_LIMIT_REACHED), a QP on an SRQ that entered
// the error state (IBV_EVENT_QP_LAST_WQE_REACHED), and — while the lab takes the link down and up
// again — the port (IBV_EVENT_PORT_ERR, IBV_EVENT_PORT_ACTIVE). For each, what a program should
// do. One process: two RC QPs on one device, connected to each other.
// Run: async-events [--port-events SECONDS]   (the port part needs someone to toggle the link)
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/port_address.hpp"
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/verbs.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <poll.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace rdmalab;
using std::chrono::milliseconds;

namespace {

constexpr std::uint32_t kSrqDepth = 16;
constexpr std::uint32_t kSrqLimit = 4;  // the event fires when fewer remain posted
constexpr std::uint32_t kMessage = 64;

// What a program should do about each event it may meet.
const char* advice(ibv_event_type type) {
    switch (type) {
        case IBV_EVENT_SRQ_LIMIT_REACHED:
            return "post more receives to the SRQ, then re-arm the limit (ibv_modify_srq): it "
                   "fires once per arming";
        case IBV_EVENT_QP_LAST_WQE_REACHED:
            return "the QP will take no more receives from the SRQ: drain its CQ, then destroy "
                   "or reset it";
        case IBV_EVENT_QP_FATAL:
        case IBV_EVENT_QP_REQ_ERR:
        case IBV_EVENT_QP_ACCESS_ERR:
            return "the QP is in the error state: drain its completions (flushed), then reset or "
                   "recreate it";
        case IBV_EVENT_PORT_ERR:
            return "the link is down: QPs on it will time out; stop posting, wait for "
                   "PORT_ACTIVE";
        case IBV_EVENT_PORT_ACTIVE:
            return "the link is back: reconnect (QPs that failed stay in error)";
        case IBV_EVENT_GID_CHANGE:
            return "the GID table changed (an address came or went): re-read it before "
                   "connecting";
        case IBV_EVENT_DEVICE_FATAL:
            return "the device is gone: release every resource and reopen it";
        default:
            return "see the verbs documentation (ibv_get_async_event(3))";
    }
}

// The event reader: a thread of its own, so events are seen while the program works. The
// context's async_fd is made non-blocking and waited on with poll(), so the thread can stop.
// Every event is acknowledged: destroying the object an event names waits for that ack.
class AsyncEventReader {
  public:
    explicit AsyncEventReader(ibv_context* context) : context_(context) {
        const int flags = fcntl(context->async_fd, F_GETFL);
        check_errno(flags >= 0 && fcntl(context->async_fd, F_SETFL, flags | O_NONBLOCK) == 0,
                    "fcntl(async_fd)");
        thread_ = std::thread([this] { run(); });
    }
    ~AsyncEventReader() {
        stop_ = true;
        thread_.join();
    }
    // Waits until an event of `type` has been read (or timeout passes); true if it was.
    bool wait_for(ibv_event_type type, milliseconds timeout) {
        std::unique_lock lock(mutex_);
        return seen_.wait_for(lock, timeout, [&] {
            for (ibv_event_type t : events_)
                if (t == type) return true;
            return false;
        });
    }
    std::size_t count() {
        std::lock_guard lock(mutex_);
        return events_.size();
    }

  private:
    // #region event-thread
    void run() {
        while (!stop_) {
            pollfd ready{.fd = context_->async_fd, .events = POLLIN, .revents = 0};
            if (poll(&ready, 1, 50) <= 0) continue;
            ibv_async_event event{};
            if (ibv_get_async_event(context_, &event) != 0) continue;  // EAGAIN: raced
            fmt::print("async-events: event {} ({}) — {}\n", ibv_event_type_str(event.event_type),
                       describe_element(event), advice(event.event_type));
            std::fflush(stdout);
            ibv_ack_async_event(&event);
            std::lock_guard lock(mutex_);
            events_.push_back(event.event_type);
            seen_.notify_all();
        }
    }
    // #endregion event-thread
    static std::string describe_element(const ibv_async_event& event) {
        switch (event.event_type) {
            case IBV_EVENT_SRQ_LIMIT_REACHED:
            case IBV_EVENT_SRQ_ERR:
                return "on an SRQ";
            case IBV_EVENT_PORT_ERR:
            case IBV_EVENT_PORT_ACTIVE:
            case IBV_EVENT_GID_CHANGE:
            case IBV_EVENT_LID_CHANGE:
            case IBV_EVENT_PKEY_CHANGE:
            case IBV_EVENT_SM_CHANGE:
            case IBV_EVENT_CLIENT_REREGISTER:
                return fmt::format("port {}", event.element.port_num);
            case IBV_EVENT_CQ_ERR:
                return "on a CQ";
            case IBV_EVENT_DEVICE_FATAL:
                return "the device";
            default:
                return fmt::format("QP {:#x}", event.element.qp->qp_num);
        }
    }

    ibv_context* context_;
    std::atomic<bool> stop_{false};
    std::mutex mutex_;
    std::condition_variable seen_;
    std::vector<ibv_event_type> events_;
    std::thread thread_;
};

struct Options {
    std::string device;
    double port_events_s = 0;  // 0: skip the port part
    double timeout_s = 5;
};

int run(const Options& options) {
    Context context = open_device(options.device);
    const PortAddress local = choose_port_address(context.get(), 1, -1);
    ProtectionDomain pd{check_ptr(ibv_alloc_pd(context.get()), "ibv_alloc_pd")};
    CompletionQueue cq{
        check_ptr(ibv_create_cq(context.get(), 64, nullptr, nullptr, 0), "ibv_create_cq")};
    AsyncEventReader events(context.get());
    const milliseconds timeout = to_milliseconds(options.timeout_s);

    // #region srq-limit
    // The SRQ: 16 receives posted, and the limit armed at 4 — when fewer than 4 remain, the
    // device says so once, through the async event queue (not the CQ).
    ibv_srq_init_attr srq_init{};
    srq_init.attr.max_wr = kSrqDepth;
    srq_init.attr.max_sge = 1;
    SharedReceiveQueue srq{check_ptr(ibv_create_srq(pd.get(), &srq_init), "ibv_create_srq")};
    Buffer landing(kSrqDepth * kMessage);
    MemoryRegion landing_mr{
        ibv_reg_mr(pd.get(), landing.data(), landing.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(landing_mr.get(), "ibv_reg_mr(landing)");
    for (std::uint32_t i = 0; i < kSrqDepth; ++i) {
        ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(landing.data() + i * kMessage),
                    .length = kMessage,
                    .lkey = landing_mr->lkey};
        ibv_recv_wr receive{.wr_id = i, .next = nullptr, .sg_list = &sge, .num_sge = 1};
        ibv_recv_wr* bad = nullptr;
        check_ibv(ibv_post_srq_recv(srq.get(), &receive, &bad), "ibv_post_srq_recv");
    }
    ibv_srq_attr limit{};
    limit.srq_limit = kSrqLimit;
    check_ibv(ibv_modify_srq(srq.get(), &limit, IBV_SRQ_LIMIT), "ibv_modify_srq(IBV_SRQ_LIMIT)");
    // #endregion srq-limit

    // Two RC QPs connected to each other: `sender` SENDs, `receiver` takes receives from the SRQ.
    ibv_qp_init_attr init{};
    init.send_cq = init.recv_cq = cq.get();
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = kSrqDepth;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_wr = 1;
    init.cap.max_recv_sge = 1;
    QueuePair sender{check_ptr(ibv_create_qp(pd.get(), &init), "ibv_create_qp(sender)")};
    init.srq = srq.get();
    QueuePair receiver{check_ptr(ibv_create_qp(pd.get(), &init), "ibv_create_qp(receiver)")};
    connect_loopback(sender.get(), 0, receiver.get(), 0, local);
    fmt::print(
        "async-events: {} — QP {:#x} sends to QP {:#x}, whose receives come from an SRQ "
        "of {} with its limit armed at {}\n",
        local.description, sender->qp_num, receiver->qp_num, kSrqDepth, kSrqLimit);

    // 1. Consume receives until fewer than the limit remain: 13 SENDs leave 3 posted.
    Buffer message(kMessage);
    MemoryRegion message_mr{ibv_reg_mr(pd.get(), message.data(), message.size(), 0)};
    check_ptr(message_mr.get(), "ibv_reg_mr(message)");
    const std::uint32_t sends = kSrqDepth - kSrqLimit + 1;
    for (std::uint32_t i = 0; i < sends; ++i) {
        ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(message.data()),
                    .length = kMessage,
                    .lkey = message_mr->lkey};
        ibv_send_wr send{};
        send.wr_id = 100 + i;
        send.sg_list = &sge;
        send.num_sge = 1;
        send.opcode = IBV_WR_SEND;
        send.send_flags = IBV_SEND_SIGNALED;
        ibv_send_wr* bad = nullptr;
        check_ibv(ibv_post_send(sender.get(), &send, &bad), "ibv_post_send");
    }
    for (std::uint32_t i = 0; i < 2 * sends; ++i)  // each SEND: a send and a receive completion
        wait_for_completion(cq.get(), timeout, "the SENDs into the SRQ");
    if (!events.wait_for(IBV_EVENT_SRQ_LIMIT_REACHED, timeout))
        fail(
            fmt::format("{} receives left of {} and no IBV_EVENT_SRQ_LIMIT_REACHED within {:.0f} s",
                        kSrqDepth - sends, kSrqDepth, options.timeout_s));
    fmt::print(
        "async-events: {} SENDs left {} receives posted: the limit event came through the "
        "event thread\n",
        sends, kSrqDepth - sends);

    // #region qp-error
    // 2. The receiving QP moved to ERROR by hand (as a fatal error would): a QP on an SRQ then
    // reports that its last receive WQE has been processed, so its owner knows when it is safe
    // to destroy it.
    ibv_qp_attr to_error{};
    to_error.qp_state = IBV_QPS_ERR;
    check_ibv(ibv_modify_qp(receiver.get(), &to_error, IBV_QP_STATE), "ibv_modify_qp(ERR)");
    // #endregion qp-error
    // Hardware answers within milliseconds: a second is plenty to say it did not come.
    if (events.wait_for(IBV_EVENT_QP_LAST_WQE_REACHED, std::min(timeout, milliseconds{1000})))
        fmt::print(
            "async-events: the QP in ERROR on the SRQ reported IBV_EVENT_QP_LAST_WQE_REACHED\n");
    else
        fmt::print(
            "async-events: {} sent no IBV_EVENT_QP_LAST_WQE_REACHED for a QP on an SRQ moved "
            "to ERROR (the spec asks for it; this provider does not send it)\n",
            ibv_get_device_name(context->device));

    // 3. The port, while the lab takes the link down and brings it back.
    if (options.port_events_s > 0) {
        fmt::print("async-events: waiting up to {:.0f} s for the port to go down and come back\n",
                   options.port_events_s);
        std::fflush(stdout);
        const milliseconds window = to_milliseconds(options.port_events_s);
        const bool down = events.wait_for(IBV_EVENT_PORT_ERR, window);
        const bool up = down && events.wait_for(IBV_EVENT_PORT_ACTIVE, window);
        if (!down || !up)
            fail(fmt::format("no {} within {:.0f} s",
                             down ? "IBV_EVENT_PORT_ACTIVE" : "IBV_EVENT_PORT_ERR",
                             options.port_events_s));
        fmt::print("async-events: the port went down and came back, both seen as events\n");
    }
    fmt::print("async-events: {} events read and acknowledged\n", events.count());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("async-events", [&] {
        CommandLine cli{"Asynchronous events: SRQ limit, a QP in error, the port", "async-events"};
        Options options;
        cli.option("-d,--device", options.device, "RDMA device (default: the first)");
        cli.option("--port-events", options.port_events_s,
                   "also wait this long for the port to go down and up (someone must toggle it)")
            .range(0.0, 600.0);
        cli.option("--timeout", options.timeout_s, "seconds any other wait may take")
            .range(0.1, 600.0)
            .show_default();
        cli.parse_or_exit(argc, argv);
        return run(options);
    });
}
