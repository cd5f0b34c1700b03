// Lesson: solicited-events — a CQ armed for solicited completions only (ibv_req_notify_cq(cq, 1))
// raises an event for a SEND its sender flagged IBV_SEND_SOLICITED, and for no plain one. The
// server sleeps in epoll_wait on the completion channel's fd and counts what wakes it while the
// client sends five notes in three steps: 2 plain; a plain then a solicited; a solicited.
// Run: solicited-events server | solicited-events client ADDR
#include "rdmalab/codec.hpp"
#include "rdmalab/connection.hpp"
#include "rdmalab/control_word.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/receive_slots.hpp"
#include "rdmalab/verbs.hpp"
#include "rdmalab/verbs_names.hpp"

#include <fmt/core.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <span>
#include <string_view>

using namespace rdmalab;
using Clock = std::chrono::steady_clock;

namespace {

// The plan both sides follow. Step s starts with the server's go-ahead s (a 4-byte SEND); the
// client then sends that step's notes: each a 4-byte SEND carrying its number, 1 to 5.
struct Step {
    std::uint32_t first, last;  // the notes it sends
    std::uint32_t solicited;    // the note sent with IBV_SEND_SOLICITED, 0 for none
};
constexpr std::array<Step, 3> kSteps{{{1, 2, 0}, {3, 4, 4}, {5, 5, 5}}};
constexpr std::uint32_t kNotes = 5;
constexpr std::uint32_t kNoteSize = 4;

// #region create-channel
// The CQ reports to a completion channel, whose fd the server puts in an epoll set. The channel
// must outlive the CQ (ibv_destroy_comp_channel refuses, EBUSY, while a CQ uses it): its owner
// is declared before the connection that owns the CQ.
void create_channel_and_queues(Connection& connection, CompletionChannel& channel) {
    channel.reset(
        check_ptr(ibv_create_comp_channel(connection.context()), "ibv_create_comp_channel"));
    connection.create_queues(
        {.send = 4, .recv = kNotes, .completions = 2 * kNotes, .channel = channel.get()});
}
// #endregion create-channel

// ---------------------------------------------------------------- server

// What the server takes off its CQ: its own go-aheads' send completions, and the client's notes,
// which must come in order and only as far as the go-aheads so far allow. The client sends
// nothing else, so nothing the server polls can be a message it does not expect.
struct ServerCq {
    ibv_cq* cq;
    ReceiveSlots& notes;
    std::uint32_t notes_taken = 0, notes_allowed = 0;
    unsigned sends_done = 0;

    // Polls until the CQ is empty.
    void drain() {
        ibv_wc wc{};
        int found;
        while ((found = ibv_poll_cq(cq, 1, &wc)) > 0) {
            if (wc.status != IBV_WC_SUCCESS) fail(failed_completion(wc));
            if (wc.opcode != IBV_WC_RECV) {
                ++sends_done;
                continue;
            }
            const std::uint32_t number = load_be32(notes.message(wc));  // throws unless 4 bytes
            if (number != notes_taken + 1 || number > notes_allowed)
                fail(fmt::format("expected note {} (of at most {}), got note {}", notes_taken + 1,
                                 notes_allowed, number));
            ++notes_taken;
        }
        check_errno(found == 0, "ibv_poll_cq");
    }
};

int run_server(const ConnectionOptions& options) {
    CompletionChannel channel;  // before the connection: see create_channel_and_queues
    auto connection = Connection::wait_for_client(options);
    create_channel_and_queues(connection, channel);
    ibv_cq* cq = connection.cq();
    // A receive for every note, posted before accepting (slot n-1 gets note n: RC keeps order).
    ReceiveSlots notes(connection.pd(), connection.qp(), kNoteSize, kNotes);
    ControlWord go_ahead(connection.pd(), ControlWord::Direction::kSend);
    connection.accept();
    fmt::print("server: connected over {}\n", connection.path_description());
    ServerCq server{.cq = cq, .notes = notes};

    // #region epoll-set
    // The channel's fd in an epoll set: how an event loop that also watches sockets, timers and
    // other channels sleeps on completions.
    int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    check_errno(epoll_fd >= 0, "epoll_create1");
    struct CloseFd {
        int fd;
        ~CloseFd() { close(fd); }
    } close_epoll{epoll_fd};
    epoll_event interest{.events = EPOLLIN, .data = {.ptr = channel.get()}};
    check_errno(epoll_ctl(epoll_fd, EPOLL_CTL_ADD, channel->fd, &interest) == 0, "epoll_ctl(ADD)");
    // #endregion epoll-set

    // #region arm-solicited
    // Arm for solicited completions only, then poll: anything already there raised no event.
    check_ibv(ibv_req_notify_cq(cq, 1), "ibv_req_notify_cq(solicited only)");
    server.drain();
    // #endregion arm-solicited

    // wait_event(MS): one epoll_wait of at most MS; on an event, take it, acknowledge it, re-arm
    // (solicited only), then poll: a note that came in before the re-arm raised nothing.
    auto wait_event = [&](std::chrono::milliseconds wait) {
        // #region epoll-wait
        epoll_event ready{};
        int n = epoll_wait(epoll_fd, &ready, 1, static_cast<int>(wait.count()));
        check_errno(n >= 0 || errno == EINTR, "epoll_wait");
        if (n <= 0) return false;
        ibv_cq* event_cq = nullptr;
        void* cq_context = nullptr;
        check_errno(ibv_get_cq_event(channel.get(), &event_cq, &cq_context) == 0,
                    "ibv_get_cq_event");
        if (event_cq != cq) fail("ibv_get_cq_event returned an event for another CQ");
        ibv_ack_cq_events(cq, 1);
        check_ibv(ibv_req_notify_cq(cq, 1), "ibv_req_notify_cq(solicited only)");
        server.drain();
        return true;
        // #endregion epoll-wait
    };

    const auto deadline = Clock::now() + options.timeout();
    auto check_deadline = [&] {
        if (Clock::now() > deadline)
            fail(fmt::format("the client's notes did not all arrive within {:.1f} s",
                             options.timeout().count() / 1000.0));
    };
    // One step: the go-ahead (once the previous one has completed: they share one buffer), then
    // sleep until the step's notes are in, counting events. A sleep that times out is followed
    // by a poll: notes that raised no event are found in the CQ all the same.
    struct StepCount {
        unsigned events, timeouts;
    };
    auto run_step = [&](std::uint32_t number, std::chrono::milliseconds sleep) {
        while (server.sends_done < number - 1) check_deadline(), server.drain();
        server.notes_allowed = kSteps[number - 1].last;
        go_ahead.post_send(connection.qp(), number, number);
        unsigned events = 0, timeouts = 0;
        while (server.notes_taken < server.notes_allowed) {
            check_deadline();
            if (wait_event(sleep))
                ++events;
            else
                ++timeouts, server.drain();
        }
        return StepCount{events, timeouts};
    };

    // Step 1, two plain SENDs: short sleeps that time out; the notes are found by polling.
    const StepCount step1 = run_step(1, std::chrono::milliseconds(100));
    fmt::print("server: step 1, 2 plain SENDs: {} event(s), {} epoll_wait timeouts, then polled\n",
               step1.events, step1.timeouts);
    // Steps 2 and 3: sleep until an event; it must come with the solicited note. (A device that
    // raised none would leave the notes in the CQ: the poll after the timeout counts them.)
    const std::uint32_t before2 = server.notes_taken;
    const StepCount step2 = run_step(2, options.timeout());
    fmt::print("server: step 2, a plain then a solicited SEND: {} event(s), {} notes in the CQ\n",
               step2.events, server.notes_taken - before2);
    const StepCount step3 = run_step(3, options.timeout());
    fmt::print("server: step 3, re-armed, one solicited SEND: {} event(s)\n", step3.events);
    // Nothing more to poll: go-ahead 3's completion is left in the CQ, which goes with the QP.
    connection.wait_for_disconnect();

    if (step1.events != 0 || step2.events != 1 || step3.events != 1) {
        fmt::print("server: FAILED: expected 0, 1 and 1 events in the three steps\n");
        return 1;
    }
    fmt::print(
        "server: verified: the 2 solicited SENDs woke the channel, the 3 plain ones did not\n");
    return 0;
}

// ---------------------------------------------------------------- client

// #region send-solicited
// A SEND with IBV_SEND_SOLICITED sets the Solicited Event bit in its last packet: a receiver whose
// CQ is armed for solicited completions only (ibv_req_notify_cq(cq, 1)) gets an event for it,
// and for no other successful completion.
void post_note(ibv_qp* qp, std::span<std::byte> slot, std::uint32_t lkey, std::uint32_t number,
               bool solicited) {
    store_be32(slot, number);
    ibv_sge sge{
        .addr = reinterpret_cast<std::uintptr_t>(slot.data()), .length = kNoteSize, .lkey = lkey};
    ibv_send_wr wr{};
    wr.wr_id = number;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED | (solicited ? IBV_SEND_SOLICITED : 0);
    ibv_send_wr* bad = nullptr;
    check_ibv(ibv_post_send(qp, &wr, &bad), "ibv_post_send(SEND note)");
}
// #endregion send-solicited

int run_client(const ConnectionOptions& options) {
    // The client just waits for its completions (Connection::wait_for_completion polls): no
    // channel, no events on this side.
    auto connection = Connection::resolve(options);
    connection.create_queues({.send = 4, .recv = 1, .completions = 8});
    // The notes: one slot each, only read by our NIC (no access flags).
    Buffer notes(kNotes * kNoteSize);
    MemoryRegion notes_mr{
        check_ptr(ibv_reg_mr(connection.pd(), notes.data(), notes.size(), 0), "ibv_reg_mr(notes)")};
    ControlWord go_ahead(connection.pd(), ControlWord::Direction::kReceive);
    go_ahead.post_receive(connection.qp(), 0);
    connection.connect();
    fmt::print("client: connected over {}\n", connection.path_description());

    // Wait for go-ahead `step` and for the send completions of the notes before it. They come in
    // network order, not ours: the go-ahead can overtake the ACK of our last note.
    unsigned sends = 0;
    auto wait_go_ahead = [&](std::uint32_t step) {
        bool received = false;
        while (sends > 0 || !received) {
            ibv_wc wc = connection.wait_for_completion("the server's go-ahead");
            if (wc.opcode != IBV_WC_RECV) {
                if (sends == 0) fail("an unexpected send completion");
                --sends;
                continue;
            }
            if (received) fail("an unexpected message from the server");
            if (go_ahead.received_value(wc, "the go-ahead") != step)
                fail(fmt::format("expected the server's go-ahead {}", step));
            received = true;
        }
    };
    for (std::uint32_t number = 1; number <= kSteps.size(); ++number) {
        const Step& step = kSteps[number - 1];
        wait_go_ahead(number);
        // The next go-ahead comes only after this step's notes: its receive can be posted now.
        if (number < kSteps.size()) go_ahead.post_receive(connection.qp(), 0);
        for (std::uint32_t note = step.first; note <= step.last; ++note, ++sends)
            post_note(connection.qp(), notes.bytes().subspan((note - 1) * kNoteSize, kNoteSize),
                      notes_mr->lkey, note, note == step.solicited);
    }
    // Every note acknowledged by the server's NIC, hence in its CQ: done.
    while (sends > 0) connection.wait_for_completion("the last notes"), --sends;
    connection.disconnect();
    fmt::print("client: sent 5 SENDs in 3 steps, notes 4 and 5 with IBV_SEND_SOLICITED\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("solicited-events", [&] {
        CommandLine cli{"Solicited events: which SENDs wake a server asleep in epoll_wait",
                        "solicited-events"};
        ConnectionOptions options;
        cli.add_connection_options(options);
        cli.parse_or_exit(argc, argv);
        return options.server ? run_server(options) : run_client(options);
    });
}
