// Lesson: dcqcn — congestion control built above verbs, as a MODEL of what a RoCE NIC does in
// hardware. The server receives a stream of RDMA WRITEs and plays DCQCN's notification point:
// it reads the ECN bits of its own RoCE packets from an AF_PACKET socket and, when they arrive
// marked Congestion Experienced, sends the client a CNP (here a zero-byte SEND with immediate)
// at most once per interval. The client plays the reaction point: each CNP cuts its rate
// (common/src/dcqcn.cpp runs the paper's algorithm) and it paces its posts by that rate. With
// --reaction none it ignores the CNPs and sends as fast as its window allows, as rxe itself
// does. Soft-RoCE has no congestion control; run it across lab hosts through a marking queue
// (lab.sh --aqm, traffic class 106) to see it work: on one host rxe loops the packets inside the
// kernel, and the notification point sees none.
// --timeline FILE (client): "# NAME<TAB>VALUE" lines (reaction, remote_qp, model), then time_s,
// rate_mbit (R_C), target_mbit (R_T), alpha, sent_mbit and completion_ms (of the WRITEs completed
// in the row's 50 ms; "-" for none) and cnps (so far), one row per 50 ms.
// Run: dcqcn server [--tclass 106] [-s SIZE] [--slots N] [--dcqcn n=MS]
//      dcqcn client ADDR [--tclass 106] [-s SIZE] [-D SECONDS] [--window K]
//                        [--reaction dcqcn|none] [--dcqcn NAME=VALUE,...] [--timeline FILE]
#include "rdmalab/dcqcn.hpp"
#include "rdmalab/codec.hpp"
#include "rdmalab/connection.hpp"
#include "rdmalab/control_word.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/percentile.hpp"
#include "rdmalab/private_data.hpp"
#include "rdmalab/roce_copies.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>
#include <fmt/os.h>
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>

using namespace rdmalab;

namespace {

constexpr std::uint64_t kSeed = 0xdc;       // slot k of every message carries pattern kSeed + k
constexpr std::size_t kHeaderBytes = 8;     // each message starts with its number (big-endian)
constexpr std::uint32_t kCnpsInFlight = 8;  // the server's send queue: CNPs not yet completed
constexpr double kLongestRunS = 600;        // -D's upper bound
constexpr std::uint32_t kCnpReceives = 32;  // the client's receives waiting for CNPs
constexpr double kPacingBurst = 2;          // messages a late sender may post back to back
constexpr std::uint64_t kDoneWrId = 1, kCnpWrId = 2, kWriteWrId = 3;

struct LessonOptions {
    std::uint32_t slots = 16;  // the server's buffer holds this many messages
    double duration_s = 5;     // client: how long to send
    std::uint32_t window = 8;  // client: WRITEs in flight at most
    std::string reaction = "dcqcn";
    std::string dcqcn;     // NAME=VALUE,... over the model's defaults
    std::string timeline;  // client: a file for the rate every 50 ms
};

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The message number the server expects in slot k after `messages` WRITEs, if any landed there.
std::optional<std::uint64_t> last_message_in_slot(std::uint64_t slot, std::uint64_t messages,
                                                  std::uint64_t slots) {
    if (slot >= messages) return std::nullopt;
    return slot + (messages - 1 - slot) / slots * slots;
}

int run_server(const ConnectionOptions& options, const LessonOptions& lesson,
               const DcqcnParameters& model) {
    auto connection = Connection::wait_for_client(options);
    connection.create_queues({.send = kCnpsInFlight, .recv = 1, .completions = kCnpsInFlight + 1});
    connection.require_size_fits(options.size * lesson.slots);

    // The target: `slots` messages side by side; the client writes message i into slot i % slots.
    Buffer target(options.size * lesson.slots);
    MemoryRegion target_mr{ibv_reg_mr(connection.pd(), target.data(), target.size(),
                                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)};
    check_ptr(target_mr.get(), "ibv_reg_mr(target)");
    ControlWord done(connection.pd(), ControlWord::Direction::kReceive);
    done.post_receive(connection.qp(), kDoneWrId);

    // The notification point's eyes. A NIC sees the ECN bits of every packet it receives; verbs
    // show none of them, so the server reads its own flow's packets a second time, as copies from
    // an AF_PACKET socket filtered in the kernel (common/src/roce_copies.cpp).
    const std::uint32_t our_qp = connection.qp()->qp_num;
    RoceCopies copies(our_qp);

    connection.accept(
        encode_remote_buffer({.address = reinterpret_cast<std::uintptr_t>(target.data()),
                              .rkey = target_mr->rkey,
                              .length = static_cast<std::uint32_t>(target.size()),
                              .use = BufferUse::kWriteTarget}));
    fmt::print(
        "server: connected over {}; {} slots of {} bytes; notification point on QP {:#x}: "
        "a CNP at most every {:g} ms while packets arrive marked CE\n",
        connection.path_description(), lesson.slots, options.size, our_qp,
        model.cnp_interval_s * 1e3);

    std::uint64_t arrived = 0, marked = 0, cnps = 0;
    std::uint32_t cnps_in_flight = 0;
    std::optional<std::uint32_t> messages_written;  // from the client's done message
    const auto start = std::chrono::steady_clock::now();
    double last_cnp_s = -1e9, last_packet_s = 0;
    const auto drain_completions = [&] {
        ibv_wc wc{};
        while (ibv_poll_cq(connection.cq(), 1, &wc) > 0) {
            // A CNP still unacknowledged when the client, done, hangs up is flushed: not a fault.
            if (messages_written && wc.wr_id == kCnpWrId && wc.status == IBV_WC_WR_FLUSH_ERR) {
                --cnps_in_flight;
                continue;
            }
            if (wc.status != IBV_WC_SUCCESS)
                fail(fmt::format("{} completion: {}", wc.wr_id == kDoneWrId ? "done" : "CNP",
                                 ibv_wc_status_str(wc.status)));
            if (wc.wr_id == kDoneWrId)
                messages_written = done.received_value(wc, "the done message");
            else
                --cnps_in_flight;
        }
    };
    while (!messages_written) {
        pollfd ready{.fd = copies.fd(), .events = POLLIN, .revents = 0};
        check_errno(poll(&ready, 1, 10) >= 0, "poll(packet socket)");
        while (auto headers = copies.next()) {
            ++arrived;
            const double now = seconds_since(start);
            last_packet_s = now;
            // #region cnp
            if (headers->ecn != Ecn::kCongestionExperienced) continue;
            ++marked;
            // One CNP per flow per interval, however many marked packets arrive within it.
            if (now - last_cnp_s < model.cnp_interval_s || cnps_in_flight == kCnpsInFlight)
                continue;
            ibv_send_wr cnp{};
            cnp.wr_id = kCnpWrId;
            cnp.num_sge = 0;  // no payload: the immediate is the whole message
            cnp.opcode = IBV_WR_SEND_WITH_IMM;
            cnp.imm_data = to_be32(static_cast<std::uint32_t>(++cnps));
            cnp.send_flags = IBV_SEND_SIGNALED;
            ibv_send_wr* bad = nullptr;
            check_ibv(ibv_post_send(connection.qp(), &cnp, &bad), "ibv_post_send(CNP)");
            ++cnps_in_flight;
            last_cnp_s = now;
            // #endregion cnp
        }
        drain_completions();
        // A client that dies or hangs up disconnects (its done message, if it sent one, is in
        // the CQ by then: look once more). One that stops sending shows as silence — except on
        // one host, where rxe loops the packets inside the kernel and the socket sees none: there
        // the longest run a client may ask for bounds the wait.
        if (!messages_written && connection.peer_disconnected()) {
            drain_completions();
            if (!messages_written) fail("the client disconnected before its done message");
        }
        const double quiet_limit_s = arrived ? options.timeout_s : kLongestRunS + options.timeout_s;
        if (!messages_written && seconds_since(start) - last_packet_s > quiet_limit_s)
            fail(fmt::format("no packet for QP {:#x} in {:g} s: is the client sending?", our_qp,
                             quiet_limit_s));
    }

    // Every slot holds the last message written into it: its number, then its slot's pattern.
    for (std::uint64_t slot = 0; slot < lesson.slots; ++slot) {
        auto bytes = target.bytes().subspan(slot * options.size, options.size);
        auto expected = last_message_in_slot(slot, *messages_written, lesson.slots);
        const bool ok = expected
                            ? load_be64(bytes.first(kHeaderBytes)) == *expected &&
                                  !find_pattern_mismatch(bytes.subspan(kHeaderBytes), kSeed + slot)
                            : all_zero(bytes);
        if (!ok) {
            fmt::print("server: data check FAILED in slot {}\n", slot);
            return 1;
        }
    }
    fmt::print(
        "server: notification point: {} packets of QP {:#x} arrived, {} marked CE ({:.1f} %); "
        "{} CNPs sent; the packet socket missed {} of its copies\n",
        arrived, our_qp, marked, arrived ? 100.0 * marked / arrived : 0.0, cnps, copies.dropped());
    fmt::print("server: verified {} WRITEs of {} bytes: every slot holds its last message\n",
               *messages_written, options.size);
    connection.wait_for_disconnect();
    return 0;
}

void post_cnp_receive(ibv_qp* qp) {
    ibv_recv_wr receive{};
    receive.wr_id = kCnpWrId;
    receive.num_sge = 0;  // a CNP carries no bytes, only its immediate
    ibv_recv_wr* bad = nullptr;
    check_ibv(ibv_post_recv(qp, &receive, &bad), "ibv_post_recv(CNP)");
}

int run_client(const ConnectionOptions& options, const LessonOptions& lesson,
               const DcqcnParameters& model) {
    const bool reacting = lesson.reaction == "dcqcn";
    // The client sleeps between posts; a completion channel wakes it when a completion arrives
    // (declared before the connection, so it outlives the CQ attached to it).
    CompletionChannel channel;
    auto connection = Connection::resolve(options);
    channel.reset(
        check_ptr(ibv_create_comp_channel(connection.context()), "ibv_create_comp_channel"));
    connection.create_queues({.send = lesson.window + 1,
                              .recv = kCnpReceives,
                              .completions = lesson.window + kCnpReceives + 1,
                              .channel = channel.get()});
    check_ibv(ibv_req_notify_cq(connection.cq(), 0), "ibv_req_notify_cq");
    for (std::uint32_t i = 0; i < kCnpReceives; ++i) post_cnp_receive(connection.qp());
    ControlWord done(connection.pd(), ControlWord::Direction::kSend);

    // The server's buffer decides the slots; a message never overtakes its slot's last one,
    // because the window is no larger than the slots (RC completes WRITEs in order).
    RemoteBuffer remote =
        decode_remote_buffer_or_throw(connection.connect(), BufferUse::kWriteTarget, options.size);
    const std::uint64_t slots = remote.length / options.size;
    if (slots < lesson.window)
        fail(fmt::format("the server has {} slots of {} bytes; a window of {} needs as many", slots,
                         options.size, lesson.window));
    Buffer source(options.size * slots);
    for (std::uint64_t slot = 0; slot < slots; ++slot)
        fill_pattern(
            source.bytes().subspan(slot * options.size + kHeaderBytes, options.size - kHeaderBytes),
            kSeed + slot);
    MemoryRegion source_mr{ibv_reg_mr(connection.pd(), source.data(), source.size(), 0)};
    check_ptr(source_mr.get(), "ibv_reg_mr(source)");
    // The server's QP number names this flow on the wire (the BTH's destination QP of our
    // packets); the ACK timeout rdma_cm chose says how long queueing may delay an ACK before
    // go-back-N resends (4.096 µs × 2^timeout).
    ibv_qp_attr attributes{};
    ibv_qp_init_attr init{};
    check_ibv(ibv_query_qp(connection.qp(), &attributes, IBV_QP_DEST_QPN | IBV_QP_TIMEOUT, &init),
              "ibv_query_qp(IBV_QP_DEST_QPN | IBV_QP_TIMEOUT)");
    const std::uint32_t remote_qp = attributes.dest_qp_num;
    fmt::print(
        "client: connected over {} to QP {:#x}, ACK timeout {} ({:.0f} ms); reaction point: {}\n",
        connection.path_description(), remote_qp, attributes.timeout,
        4.096e-3 * static_cast<double>(1ull << attributes.timeout),
        reacting ? "DCQCN (a model: " + describe(model) + ")"
                 : "none (CNPs are counted, not obeyed)");

    std::optional<fmt::ostream> timeline;
    if (!lesson.timeline.empty()) {
        timeline.emplace(fmt::output_file(lesson.timeline));
        // A header of "# NAME<TAB>VALUE" lines, then the columns.
        timeline->print("# dcqcn timeline: one row per 50 ms\n# reaction\t{}\n# remote_qp\t{:#x}\n",
                        lesson.reaction, remote_qp);
        if (reacting) timeline->print("# model\t{}\n", describe(model));
        timeline->print("time_s\trate_mbit\ttarget_mbit\talpha\tsent_mbit\tcompletion_ms\tcnps\n");
    }

    const auto start = std::chrono::steady_clock::now();
    ReactionPoint rp(model, 0);
    std::uint64_t posted = 0, cnps = 0;
    std::size_t completed_at_last_row = 0;
    double next_post_s = 0, next_row_s = 0.05;
    // Each WRITE's time from post to completion: its packets' wait in every queue on the path,
    // and the ACK's way back. Completions come in posting order, so slot i % slots says when.
    std::vector<double> posted_at(slots), completion_s;  // completion_s[i]: WRITE i's time
    const auto outstanding = [&] { return posted - completion_s.size(); };  // WRITEs in flight
    const auto handle = [&](const ibv_wc& wc, double now) {
        if (wc.status != IBV_WC_SUCCESS)
            fail(fmt::format("{} completion: {}",
                             wc.wr_id == kCnpWrId    ? "CNP"
                             : wc.wr_id == kDoneWrId ? "done"
                                                     : "WRITE",
                             ibv_wc_status_str(wc.status)));
        if (wc.opcode == IBV_WC_RECV) {  // a CNP: the flow's packets arrived marked
            ++cnps;
            post_cnp_receive(connection.qp());
            if (reacting) rp.on_cnp(now);
        } else if (wc.wr_id == kWriteWrId) {
            completion_s.push_back(now - posted_at[completion_s.size() % slots]);
        }
    };
    for (double now = 0; now < lesson.duration_s; now = seconds_since(start)) {
        ibv_wc wc{};
        while (ibv_poll_cq(connection.cq(), 1, &wc) > 0) handle(wc, seconds_since(start));
        rp.advance(now);
        // #region pace
        // Post while the window has room and, when reacting, the rate allows: one message of
        // `size` bytes every size·8 / R_C seconds.
        while (outstanding() < lesson.window && (!reacting || now >= next_post_s)) {
            const std::uint64_t slot = posted % slots;
            store_be64(source.bytes().subspan(slot * options.size, kHeaderBytes), posted);
            ibv_sge sge{
                .addr = reinterpret_cast<std::uintptr_t>(source.data() + slot * options.size),
                .length = static_cast<std::uint32_t>(options.size),
                .lkey = source_mr->lkey};
            ibv_send_wr write{};
            write.wr_id = kWriteWrId;
            write.sg_list = &sge;
            write.num_sge = 1;
            write.opcode = IBV_WR_RDMA_WRITE;
            write.send_flags = IBV_SEND_SIGNALED;
            write.wr.rdma.remote_addr = remote.address + slot * options.size;
            write.wr.rdma.rkey = remote.rkey;
            ibv_send_wr* bad = nullptr;
            check_ibv(ibv_post_send(connection.qp(), &write, &bad), "ibv_post_send(RDMA_WRITE)");
            posted_at[slot] = now;
            ++posted;
            rp.on_bytes_sent(options.size, now);
            // A token bucket two messages deep: a wakeup that came late (the CPU was busy) may
            // catch up with a short burst, as a NIC's rate limiter allows, but idle time is not
            // saved up beyond that.
            const double interval_s = options.size * 8.0 / rp.rate_bps();
            next_post_s = std::max(next_post_s, now - kPacingBurst * interval_s) + interval_s;
        }
        // #endregion pace
        if (timeline && now >= next_row_s) {
            // The mean of the WRITEs completed in the row's 50 ms; "-" where none did.
            const auto row = std::span(completion_s).subspan(completed_at_last_row);
            const std::string completion_ms =
                row.empty() ? "-"
                            : fmt::format("{:.2f}", std::accumulate(row.begin(), row.end(), 0.0) /
                                                        static_cast<double>(row.size()) * 1e3);
            timeline->print("{:.3f}\t{:.3f}\t{:.3f}\t{:.4f}\t{:.3f}\t{}\t{}\n", now,
                            rp.rate_bps() / 1e6, rp.target_bps() / 1e6, rp.alpha(),
                            row.size() * options.size * 8.0 / 0.05 / 1e6, completion_ms, cnps);
            completed_at_last_row = completion_s.size();
            next_row_s += 0.05;
        }
        // Sleep until the next post or row is due, or a completion arrives: no busy polling.
        double next_event_s = std::min(next_row_s, lesson.duration_s);
        if (outstanding() < lesson.window && reacting)
            next_event_s = std::min(next_event_s, next_post_s);
        const double wait_s = std::max(0.0, next_event_s - seconds_since(start));
        const timespec wait{.tv_sec = static_cast<time_t>(wait_s),
                            .tv_nsec = static_cast<long>((wait_s - std::floor(wait_s)) * 1e9)};
        pollfd ready{.fd = channel->fd, .events = POLLIN, .revents = 0};
        const int woke = ppoll(&ready, 1, &wait, nullptr);
        check_errno(woke >= 0, "ppoll(completion channel)");
        if (woke > 0) {  // take the event, acknowledge it, and ask for the next one
            ibv_cq* cq = nullptr;
            void* context = nullptr;
            check_errno(ibv_get_cq_event(channel.get(), &cq, &context) == 0, "ibv_get_cq_event");
            ibv_ack_cq_events(cq, 1);
            check_ibv(ibv_req_notify_cq(cq, 0), "ibv_req_notify_cq");
        }
    }

    while (outstanding() > 0)
        handle(connection.wait_for_completion("the last WRITEs"), seconds_since(start));
    const double elapsed = seconds_since(start);
    done.post_send(connection.qp(), static_cast<std::uint32_t>(posted), kDoneWrId);
    for (bool sent = false; !sent;) {
        ibv_wc wc = connection.wait_for_completion("the done message");
        if (wc.wr_id == kDoneWrId && wc.status == IBV_WC_SUCCESS)
            sent = true;
        else
            handle(wc, seconds_since(start));
    }
    connection.disconnect();
    fmt::print(
        "client: {} WRITEs of {} bytes in {:.2f} s: {:.2f} Mbit/s; post to completion: median "
        "{:.2f} ms, p99 {:.2f} ms; {} CNPs arrived",
        posted, options.size, elapsed, posted * options.size * 8.0 / elapsed / 1e6,
        median(completion_s) * 1e3, percentile(completion_s, 0.99) * 1e3, cnps);
    if (reacting)
        fmt::print(
            "; the reaction point ended at R_C {:.2f} Mbit/s (target {:.2f}), alpha {:.3f}, in {}",
            rp.rate_bps() / 1e6, rp.target_bps() / 1e6, rp.alpha(), stage_name(rp.stage()));
    fmt::print("\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("dcqcn", [&] {
        CommandLine cli{"DCQCN as a model above verbs: the server notifies, the client reacts",
                        "dcqcn"};
        ConnectionOptions options;
        LessonOptions lesson;
        cli.add_connection_options(options);
        cli.option("--slots", lesson.slots, "server: messages its buffer holds").range(1u, 4096u);
        cli.option("-D,--duration", lesson.duration_s, "client: seconds to send")
            .range(0.1, kLongestRunS);
        cli.option("--window", lesson.window, "client: WRITEs in flight at most").range(1u, 1024u);
        cli.option("--reaction", lesson.reaction, "client: dcqcn (obey CNPs) or none (count them)")
            .choices({"dcqcn", "none"});
        cli.option("--dcqcn", lesson.dcqcn,
                   "the model's parameters, NAME=VALUE,... (rate, min, g, "
                   "k, t, b, f, rai, rhai, n; see common/include/rdmalab/dcqcn.hpp)")
            .check([](const std::string& text) {
                try {
                    parse_dcqcn_parameters(text);
                    return std::string();
                } catch (const Error& e) {
                    return std::string(e.what());
                }
            });
        cli.option("--timeline", lesson.timeline,
                   "client: write the rate every 50 ms to this file");
        cli.existing("--size").check([](const std::string& text) {
            auto size = parse_size(text);
            return !size || *size > kHeaderBytes
                       ? std::string()  // the option's own check names garbage
                       : fmt::format("{} bytes leave no room after the {}-byte message number",
                                     *size, kHeaderBytes);
        });
        cli.parse_or_exit(argc, argv);
        const DcqcnParameters model = parse_dcqcn_parameters(lesson.dcqcn);
        return options.server ? run_server(options, lesson, model)
                              : run_client(options, lesson, model);
    });
}
