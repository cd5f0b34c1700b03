// Lesson: completion-events — busy polling vs. sleeping on a completion channel, measured as the
// OpenFabrics slides do: ping-pong round-trip time and CPU time of both sides, in four modes.
// (Solicited events, the CQ's other way of arming, are the next lesson: solicited-events.)
// Run: completion-events server | completion-events client ADDR [-n ITERS] [--mode MODE] [-s SIZE]
#include "completion_events_messages.hpp"
#include "rdmalab/connection.hpp"
#include "rdmalab/cpu_time.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/private_data.hpp"
#include "rdmalab/receive_slots.hpp"
#include "rdmalab/round_trip_costs.hpp"
#include "rdmalab/verbs.hpp"
#include "rdmalab/verbs_names.hpp"

#include <fmt/core.h>
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

using namespace rdmalab;
using namespace rdmalab::completion_events;  // the messages: completion_events_messages.hpp
using Clock = std::chrono::steady_clock;

namespace {

struct PingPongOptions : ConnectionOptions {
    std::uint32_t iterations = 500;
    std::string mode = "all";
};

// The messages (kind, four words, a ping's sequence) and the four modes a start message names
// are in completion_events_messages.hpp.
constexpr std::size_t kReceiveSlots = 8;  // at most 2 messages are ever in flight each way
constexpr unsigned kAckBatch = 64;        // completion events acknowledged per ibv_ack_cq_events

// Delivers the completions of one CQ, one at a time, in either of the two ways of waiting.
class CompletionWaiter {
  public:
    CompletionWaiter(ibv_cq* cq, ibv_comp_channel* channel, std::chrono::milliseconds timeout)
        : cq_(cq), channel_(channel), timeout_(timeout) {}
    CompletionWaiter(const CompletionWaiter&) = delete;
    CompletionWaiter& operator=(const CompletionWaiter&) = delete;
    // ibv_destroy_cq blocks until every event it delivered has been acknowledged (it cannot
    // free the CQ while someone may still hold an event that names it), so this waiter — declared
    // after the connection that owns the CQ — acknowledges the rest before the CQ goes.
    ~CompletionWaiter() { acknowledge_events(); }

    void use_events(bool on) { use_events_ = on; }
    unsigned long empty_polls() const { return empty_polls_; }
    unsigned long events() const { return events_; }
    void reset_counters() { empty_polls_ = events_ = 0; }

    ibv_wc next(std::string_view what) {
        return use_events_ ? sleep_for_completion(what) : busy_poll(what);
    }

  private:
    // #region busy-poll
    // Busy polling: ibv_poll_cq cannot block, so ask again and again. Fastest response, and it
    // keeps one core at 100% however long the wait — most calls find nothing.
    // (Reading the clock is a system call in the lab's guest: the deadline is set lazily.)
    ibv_wc busy_poll(std::string_view what) {
        std::optional<Clock::time_point> deadline;
        for (unsigned long polls = 1;; ++polls) {
            if (auto wc = poll_once(what)) return *wc;
            ++empty_polls_;
            if (polls % 4096 == 0) {
                if (!deadline)
                    deadline = Clock::now() + timeout_;
                else if (Clock::now() > *deadline)
                    timed_out(what);
            }
        }
    }
    // #endregion busy-poll

    // Wait-for-notify, in the order the slides give it.
    ibv_wc sleep_for_completion(std::string_view what) {
        std::optional<Clock::time_point> deadline;
        // #region wait-for-notify
        for (;;) {
            // 1. A completion may already be waiting: take it without any system call.
            if (auto wc = poll_once(what)) return *wc;
            // 2. Arm the CQ: the next completion added to it raises one event on the channel.
            check_ibv(ibv_req_notify_cq(cq_, 0), "ibv_req_notify_cq");
            // 3. Poll again. A completion that arrived between 1 and 2 raised no event (the CQ
            //    was not armed yet): sleeping now could sleep until the timeout.
            if (auto wc = poll_once(what)) return *wc;
            // 4. Sleep until the channel's file descriptor is readable, within the timeout.
            auto left = timeout_;
            if (!deadline)
                deadline = Clock::now() + timeout_;
            else
                left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now());
            pollfd ready{.fd = channel_->fd, .events = POLLIN, .revents = 0};
            int rc = poll(&ready, 1, static_cast<int>(std::max<long>(left.count(), 0)));
            check_errno(rc >= 0, "poll on the completion channel");
            if (rc == 0) timed_out(what);
            // 5. Take the event. It says which CQ has news, not what the news is: back to 1.
            ibv_cq* event_cq = nullptr;
            void* cq_context = nullptr;
            check_errno(ibv_get_cq_event(channel_, &event_cq, &cq_context) == 0,
                        "ibv_get_cq_event");
            if (event_cq != cq_) fail("ibv_get_cq_event returned an event for another CQ");
            ++events_;
            // 6. Every event must be acknowledged; acking takes a lock, so do it in batches.
            if (++unacked_ == kAckBatch) acknowledge_events();
        }
        // #endregion wait-for-notify
    }

    std::optional<ibv_wc> poll_once(std::string_view what) {
        ibv_wc wc{};
        int found = ibv_poll_cq(cq_, 1, &wc);
        if (found < 0) fail(fmt::format("ibv_poll_cq failed while waiting for {}", what));
        if (found == 0) return std::nullopt;
        if (wc.status != IBV_WC_SUCCESS) fail(fmt::format("{}: {}", what, failed_completion(wc)));
        return wc;
    }

    void acknowledge_events() {
        if (unacked_ > 0) ibv_ack_cq_events(cq_, unacked_);
        unacked_ = 0;
    }

    [[noreturn]] void timed_out(std::string_view what) const {
        fail(fmt::format("{}: no completion within {:.1f} s", what, timeout_.count() / 1000.0));
    }

    ibv_cq* cq_;
    ibv_comp_channel* channel_;
    std::chrono::milliseconds timeout_;
    bool use_events_ = true;
    unsigned unacked_ = 0;
    unsigned long empty_polls_ = 0;
    unsigned long events_ = 0;
};

// Waits until `sends` send-queue completions and (if wanted) one receive have arrived. They
// come in network order, not ours: the peer's next message can overtake the ACK of our last.
std::optional<ibv_wc> collect(CompletionWaiter& waiter, unsigned sends, bool want_receive,
                              std::string_view what) {
    std::optional<ibv_wc> receive;
    while (sends > 0 || (want_receive && !receive)) {
        ibv_wc wc = waiter.next(what);
        if (wc.opcode == IBV_WC_RECV) {
            if (!want_receive || receive)
                fail(fmt::format("{}: an unexpected message arrived", what));
            receive = wc;
        } else if (sends > 0) {
            --sends;
        } else {
            fail(fmt::format("{}: an unexpected send completion (opcode {})", what,
                             static_cast<int>(wc.opcode)));
        }
    }
    return receive;
}

// One WR on the send queue: SEND, RDMA WRITE or RDMA READ of `length` bytes at `local`.
void post(ibv_qp* qp, ibv_wr_opcode opcode, std::byte* local, std::size_t length,
          std::uint32_t lkey, bool signaled, const RemoteBuffer& remote, std::string_view what) {
    ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(local),
                .length = static_cast<std::uint32_t>(length),
                .lkey = lkey};
    ibv_send_wr wr{};
    wr.wr_id = opcode;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = opcode;
    // Unsignaled: no completion unless it fails. Its send-queue slot is freed by the next
    // signaled completion we poll.
    wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
    wr.wr.rdma.remote_addr = remote.address;
    wr.wr.rdma.rkey = remote.rkey;
    ibv_send_wr* bad = nullptr;
    if (int rc = ibv_post_send(qp, &wr, &bad))
        check_ibv(rc, fmt::format("ibv_post_send({})", what));
}

// #region create-channel
// The channel must outlive the CQ that reports to it (ibv_destroy_comp_channel refuses, EBUSY,
// while a CQ uses it), so its owner is declared before the connection that owns the CQ. It needs
// the device context, known once the connection has a device. (rdma_cm keeps the context open
// until the process exits, so destroying the channel after the connection is safe.)
void create_channel_and_queues(Connection& connection, CompletionChannel& channel) {
    connection.require_size_fits(connection.options().size);
    channel.reset(
        check_ptr(ibv_create_comp_channel(connection.context()), "ibv_create_comp_channel"));
    // The CQ reports to the channel; whether it ever raises an event is up to ibv_req_notify_cq.
    connection.create_queues({.send = 4,
                              .recv = kReceiveSlots,
                              .completions = 2 * kReceiveSlots,
                              .channel = channel.get()});
}
// #endregion create-channel

// ---------------------------------------------------------------- server

int run_server(const PingPongOptions& options) {
    CompletionChannel channel;  // before the connection: see create_channel_and_queues
    auto connection = Connection::wait_for_client(options);
    create_channel_and_queues(connection, channel);

    // The client RDMA WRITEs its ping here and RDMA READs it back: remote write and read, and
    // LOCAL_WRITE because remote write requires it.
    Buffer target(options.size);
    MemoryRegion target_mr{check_ptr(
        ibv_reg_mr(connection.pd(), target.data(), target.size(),
                   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ),
        "ibv_reg_mr(target)")};
    ReceiveSlots receives(connection.pd(), connection.qp(), options.size, kReceiveSlots);
    Buffer reply(options.size);  // pongs and reports; only our NIC reads it
    MemoryRegion reply_mr{
        check_ptr(ibv_reg_mr(connection.pd(), reply.data(), reply.size(), 0), "ibv_reg_mr(reply)")};

    connection.accept(
        encode_remote_buffer({.address = reinterpret_cast<std::uintptr_t>(target.data()),
                              .rkey = target_mr->rkey,
                              .length = static_cast<std::uint32_t>(target.size()),
                              .use = BufferUse::kWriteTarget}));
    fmt::print("server: connected over {}\n", connection.path_description());

    CompletionWaiter waiter(connection.cq(), channel.get(), options.timeout());
    unsigned pending_sends = 0;  // our last SEND, whose completion may still be on its way
    unsigned modes_served = 0;
    std::uint64_t round_trips = 0;
    for (;;) {
        // Between modes nothing is urgent: sleep.
        waiter.use_events(true);
        ibv_wc wc = *collect(waiter, pending_sends, true, "the client's next request");
        pending_sends = 0;
        const Header request = read_header(receives.message(wc));
        receives.post(wc.wr_id);
        if (request.kind == Kind::kBye) break;
        if (request.kind != Kind::kStart)
            fail(fmt::format("expected a start message, got kind {}",
                             static_cast<unsigned>(request.kind)));
        // Validate what the client asks for before acting on it.
        const auto [mode, iterations, size] = read_start(request, options.size);

        const auto cpu_before = cpu_time();
        if (uses_send_recv(mode)) {
            waiter.use_events(mode == Mode::kSendRecvEvents);
            for (std::uint32_t sequence = 0; sequence < iterations; ++sequence) {
                ibv_wc ping = *collect(waiter, pending_sends, true, "a ping");
                require_ping(receives.message(ping), size, Kind::kPing, sequence);
                receives.post(ping.wr_id);  // the slides' agent: re-post before answering
                write_ping(reply.bytes().first(size), Kind::kPong, sequence);
                post(connection.qp(), IBV_WR_SEND, reply.data(), size, reply_mr->lkey, true, {},
                     "SEND pong");
                pending_sends = 1;
            }
        } else {
            // The passive side of WRITE/READ: the client's NIC reads and writes our memory, our
            // CPU does nothing until the "finished" message, and sleeping costs nothing.
            ibv_wc finished =
                *collect(waiter, pending_sends, true, "the client's finished message");
            pending_sends = 0;
            const Header header = read_header(receives.message(finished));
            receives.post(finished.wr_id);
            if (header.kind != Kind::kFinished || header.a != request.a || header.b != iterations)
                fail(fmt::format("expected a finished message for {} iterations of mode {}",
                                 iterations, request.a));
            // The last ping the client wrote must be in our buffer, whole.
            if (!ping_matches(target.bytes().first(size), Kind::kPing, iterations - 1))
                fail(fmt::format(
                    "{}: the buffer does not hold ping {} after the client's last RDMA WRITE",
                    mode_name(mode), iterations - 1));
        }
        const CpuTime used = cpu_time() - cpu_before;
        // Tell the client what this side's CPU spent: it prints both sides in one table.
        write_header(reply.bytes(), {Kind::kReport, request.a, iterations,
                                     static_cast<std::uint32_t>(used.user.count()),
                                     static_cast<std::uint32_t>(used.system.count())});
        post(connection.qp(), IBV_WR_SEND, reply.data(), kHeaderSize, reply_mr->lkey, true, {},
             "SEND report");
        ++pending_sends;
        fmt::print(
            "server: {}: {} pings verified; this side used {} µs of CPU in user space, {} µs in "
            "the kernel\n",
            mode_name(mode), iterations, used.user.count(), used.system.count());
        ++modes_served;
        round_trips += iterations;
    }
    connection.wait_for_disconnect();
    fmt::print(
        "server: verified every ping of {} mode{} ({} round trips) and reported its CPU time for "
        "each\n",
        modes_served, modes_served == 1 ? "" : "s", round_trips);
    return 0;
}

// ---------------------------------------------------------------- client

struct ClientSide {
    Connection& connection;
    CompletionWaiter& waiter;
    ReceiveSlots& receives;
    Buffer& ping;
    MemoryRegion& ping_mr;
    Buffer& pong;  // RDMA READ lands here
    MemoryRegion& pong_mr;
    RemoteBuffer remote;
};

// One mode's round trips, verified; its row of the table (round_trip_costs.hpp).
RoundTripRow run_mode(ClientSide& side, Mode mode, std::uint32_t iterations, std::size_t size) {
    ibv_qp* qp = side.connection.qp();
    // Tell the server what comes, and wait until it has it.
    write_header(side.ping.bytes(), {Kind::kStart, static_cast<std::uint32_t>(mode), iterations,
                                     static_cast<std::uint32_t>(size), 0});
    post(qp, IBV_WR_SEND, side.ping.data(), kHeaderSize, side.ping_mr->lkey, true, {},
         "SEND start");
    side.waiter.use_events(true);
    collect(side.waiter, 1, false, "the start message");

    // The slides measure busy polling on SEND/RECV only; every other row waits for notify.
    side.waiter.use_events(mode != Mode::kSendRecvBusy);
    side.waiter.reset_counters();
    std::vector<double> samples_ns;
    samples_ns.reserve(iterations);
    const auto cpu_before = cpu_time();
    auto previous_end = Clock::now();  // one clock read per round trip: each is a system call here
    for (std::uint32_t sequence = 0; sequence < iterations; ++sequence) {
        write_ping(side.ping.bytes().first(size), Kind::kPing, sequence);
        if (uses_send_recv(mode)) {
            // SEND the ping; wait for both its send completion and the pong.
            post(qp, IBV_WR_SEND, side.ping.data(), size, side.ping_mr->lkey, true, {},
                 "SEND ping");
            ibv_wc wc = *collect(side.waiter, 1, true, "a pong");
            require_ping(side.receives.message(wc), size, Kind::kPong, sequence);
            side.receives.post(wc.wr_id);
        } else {
            if (mode == Mode::kWriteReadSignaled) {
                // WRITE the ping into the server's buffer and wait for it to complete...
                post(qp, IBV_WR_RDMA_WRITE, side.ping.data(), size, side.ping_mr->lkey, true,
                     side.remote, "RDMA_WRITE");
                collect(side.waiter, 1, false, "an RDMA WRITE");
            } else {
                // ...or do not: RC executes a READ after the WRITE before it, so the READ's
                // completion says the WRITE is done too (a failed WRITE still completes, with an
                // error status). One completion, and one wait, fewer per round trip.
                post(qp, IBV_WR_RDMA_WRITE, side.ping.data(), size, side.ping_mr->lkey, false,
                     side.remote, "RDMA_WRITE unsignaled");
            }
            // ...then READ it back: the pong is what the server's memory now holds.
            post(qp, IBV_WR_RDMA_READ, side.pong.data(), size, side.pong_mr->lkey, true,
                 side.remote, "RDMA_READ");
            collect(side.waiter, 1, false, "an RDMA READ");
            if (!ping_matches(side.pong.bytes().first(size), Kind::kPing, sequence))
                fail(fmt::format(
                    "round trip {}: the RDMA READ did not return the ping just written", sequence));
        }
        const auto end = Clock::now();
        samples_ns.push_back(
            static_cast<double>(std::chrono::nanoseconds(end - previous_end).count()));
        previous_end = end;
    }
    const CpuTime used = cpu_time() - cpu_before;
    const unsigned long empty_polls = side.waiter.empty_polls();
    const unsigned long events = side.waiter.events();

    // The server cannot tell when one-sided traffic ends: say so, with a count it can check.
    unsigned sends = 0;
    if (!uses_send_recv(mode)) {
        write_header(side.ping.bytes(),
                     {Kind::kFinished, static_cast<std::uint32_t>(mode), iterations, 0, 0});
        post(qp, IBV_WR_SEND, side.ping.data(), kHeaderSize, side.ping_mr->lkey, true, {},
             "SEND finished");
        sends = 1;
    }
    side.waiter.use_events(true);
    ibv_wc wc = *collect(side.waiter, sends, true, "the server's CPU report");
    const Header report = read_header(side.receives.message(wc));
    side.receives.post(wc.wr_id);
    if (report.kind != Kind::kReport || report.a != static_cast<std::uint32_t>(mode) ||
        report.b != iterations)
        fail(fmt::format("expected the server's report on {} iterations of {}", iterations,
                         mode_name(mode)));

    if (mode == Mode::kSendRecvBusy)
        fmt::print(
            "client: {}: {} round trips, every pong verified; {:.0f} empty ibv_poll_cq calls per "
            "round trip\n",
            mode_name(mode), iterations, static_cast<double>(empty_polls) / iterations);
    else
        fmt::print(
            "client: {}: {} round trips, every {} verified; slept on the channel {} times ({:.1f} "
            "per round trip)\n",
            mode_name(mode), iterations, uses_send_recv(mode) ? "pong" : "read-back", events,
            static_cast<double>(events) / iterations);

    const CpuTime server{std::chrono::microseconds(report.c), std::chrono::microseconds(report.d)};
    return {mode_name(mode), round_trip_costs(samples_ns, used, server, iterations)};
}

int run_client(const PingPongOptions& options) {
    CompletionChannel channel;  // before the connection: see create_channel_and_queues
    auto connection = Connection::resolve(options);
    create_channel_and_queues(connection, channel);

    // The ping is only read by our NIC (SEND, RDMA WRITE): no access flags. The RDMA READ's
    // result is written by our NIC: LOCAL_WRITE.
    Buffer ping(options.size);
    MemoryRegion ping_mr{
        check_ptr(ibv_reg_mr(connection.pd(), ping.data(), ping.size(), 0), "ibv_reg_mr(ping)")};
    Buffer pong(options.size);
    MemoryRegion pong_mr{
        check_ptr(ibv_reg_mr(connection.pd(), pong.data(), pong.size(), IBV_ACCESS_LOCAL_WRITE),
                  "ibv_reg_mr(pong)")};
    ReceiveSlots receives(connection.pd(), connection.qp(), options.size, kReceiveSlots);

    RemoteBuffer remote =
        decode_remote_buffer_or_throw(connection.connect(), BufferUse::kWriteTarget, options.size);
    const std::string device = ibv_get_device_name(connection.context()->device);
    fmt::print("client: connected over {}\n", connection.path_description());

    CompletionWaiter waiter(connection.cq(), channel.get(), options.timeout());
    ClientSide side{connection, waiter, receives, ping, ping_mr, pong, pong_mr, remote};
    std::vector<RoundTripRow> results;
    for (const auto& entry : kModes)
        if (options.mode == "all" || options.mode == entry.name)
            results.push_back(run_mode(side, entry.mode, options.iterations, options.size));

    write_header(ping.bytes(), {Kind::kBye, 0, 0, 0, 0});
    post(connection.qp(), IBV_WR_SEND, ping.data(), kHeaderSize, ping_mr->lkey, true, {},
         "SEND bye");
    collect(waiter, 1, false, "the bye message");
    connection.disconnect();

    fmt::print("\nclient: {} ping-pongs of {} bytes per mode, measured on {}\n", options.iterations,
               options.size, device);
    fmt::print("{}", format_round_trip_table(results));
    fmt::print(
        "client: CPU columns are µs per round trip (getrusage): user + system, then the user-space "
        "part\n");
    if (device.starts_with("rxe"))
        fmt::print(
            "client: {} is Soft-RoCE: RDMA done by kernel code, here in an emulated machine. "
            "Compare rows with each other only. Its \"NIC\" runs on the CPU of whoever rings the "
            "doorbell (ibv_post_send), so that work is system time in every mode (an RDMA READ is "
            "often complete before the call returns: no sleep needed), and in this emulated guest "
            "even waking a sleeping process costs system time. The user column shows the cost of "
            "the waiting itself\n",
            device);

    const auto* busy = find_round_trip_row(results, mode_name(Mode::kSendRecvBusy));
    const auto* events = find_round_trip_row(results, mode_name(Mode::kSendRecvEvents));
    if (busy && events)
        fmt::print("client: sleeping on the completion channel instead of spinning took {}\n",
                   format_cpu_change(*busy, *events));
    fmt::print(
        "client: verified {} round trips in {} mode{}: every ping and pong carried its sequence "
        "number\n",
        static_cast<std::uint64_t>(options.iterations) * results.size(), results.size(),
        results.size() == 1 ? "" : "s");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("completion-events", [&] {
        CommandLine cli{"Busy polling vs. completion events: ping-pong latency and CPU time",
                        "completion-events"};
        PingPongOptions options;
        options.size = 64;  // a small ping: the time is in the waiting, not the bytes
        cli.add_connection_options(options);
        cli.existing("--size").size_at_least(
            kHeaderSize, fmt::format("every message carries a {}-byte header", kHeaderSize));
        cli.option("-n,--iters", options.iterations, "round trips per mode")
            .range(1U, kMaxIterations)
            .show_default();
        std::vector<std::string> choices{"all"};
        for (const auto& entry : kModes) choices.emplace_back(entry.name);
        cli.option("--mode", options.mode, "which way of waiting to measure (client)")
            .choices(choices)
            .show_default();
        cli.parse_or_exit(argc, argv);
        return options.server ? run_server(options) : run_client(options);
    });
}
