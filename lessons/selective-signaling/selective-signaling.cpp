// Lesson: selective-signaling — a completion for only every Nth WR, and why N must not exceed the
// send-queue depth (the deadlock, then the cure). Run: selective-signaling server |
// selective-signaling client ADDR [-n WRITES] [--sq-depth D] [--signal-every N]
#include "rdmalab/codec.hpp"
#include "rdmalab/connection.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/private_data.hpp"
#include "rdmalab/trace.hpp"
#include "rdmalab/verbs.hpp"
#include "rdmalab/verbs_names.hpp"
#include "selective_signaling_messages.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

using namespace rdmalab;
using namespace rdmalab::selective_signaling;  // the messages: selective_signaling_messages.hpp

namespace {

struct SignalingOptions : ConnectionOptions {
    std::uint32_t writes = 10000;
    std::uint32_t sq_depth = 32;     // asked for; the provider may give more
    std::uint32_t signal_every = 0;  // 0: show the deadlock (2 x depth), then the cure (depth / 2)
};

// The client writes WR i into slot i % kTargetSlots of the server's buffer, pattern seed i: the
// final contents show that every write landed, and in order.
constexpr std::uint32_t kTargetSlots = 16;
constexpr std::uint32_t kMaxWrites = 10'000'000;
// How long the deadlocked sender waits to show that nothing comes. Without a limit: forever.
constexpr std::chrono::seconds kStallWait{1};

// The control messages (plan, done, verified: six big-endian words each) are in
// selective_signaling_messages.hpp.

// Small registered control messages: one receive slot per message we expect, one to send.
struct ControlMessages {
    explicit ControlMessages(ibv_pd* pd) {
        // The NIC writes received messages (LOCAL_WRITE) and only reads the outgoing one.
        receive_mr.reset(
            check_ptr(ibv_reg_mr(pd, received.data(), sizeof received, IBV_ACCESS_LOCAL_WRITE),
                      "ibv_reg_mr(control receives)"));
        send_mr.reset(check_ptr(ibv_reg_mr(pd, outgoing.data(), outgoing.size(), 0),
                                "ibv_reg_mr(control send)"));
    }
    void post_receive(ibv_qp* qp, std::uint64_t slot) {
        ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(received[slot].data()),
                    .length = static_cast<std::uint32_t>(received[slot].size()),
                    .lkey = receive_mr->lkey};
        ibv_recv_wr receive{.wr_id = slot, .next = nullptr, .sg_list = &sge, .num_sge = 1};
        ibv_recv_wr* bad = nullptr;
        trace::post_recv(qp, &receive);  // --trace records the WR (else: nothing)
        check_ibv(ibv_post_recv(qp, &receive, &bad), "ibv_post_recv");
    }
    void send(Connection& connection, const Message& message) {
        outgoing = encode(message);
        ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(outgoing.data()),
                    .length = static_cast<std::uint32_t>(outgoing.size()),
                    .lkey = send_mr->lkey};
        ibv_send_wr wr{};
        wr.wr_id = 0;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_SEND;
        wr.send_flags = IBV_SEND_SIGNALED;
        ibv_send_wr* bad = nullptr;
        trace::post_send(connection.qp(), &wr);  // --trace records the WR (else: nothing)
        check_ibv(ibv_post_send(connection.qp(), &wr, &bad), "ibv_post_send(SEND)");
        // Sends and receives share one CQ, and the peer's answer may complete here before our
        // SEND's own completion does (its ACK can trail the answer): keep such a receive for
        // receive() instead of taking it for the SEND's completion.
        for (;;) {
            ibv_wc wc =
                wait_for_completion(connection.cq(), timeout(connection), "control message");
            if (wc.opcode == IBV_WC_SEND) return;
            if (wc.opcode != IBV_WC_RECV || early.has_value())
                fail(fmt::format("expected the SEND's completion, got opcode {}",
                                 static_cast<int>(wc.opcode)));
            early = wc;
        }
    }
    Message receive(Connection& connection, Kind expected, std::string_view what) {
        ibv_wc wc =
            early ? *early : wait_for_completion(connection.cq(), timeout(connection), what);
        early.reset();
        if (wc.opcode != IBV_WC_RECV || wc.wr_id >= received.size())
            fail(fmt::format("{}: unexpected completion (opcode {})", what,
                             static_cast<int>(wc.opcode)));
        return decode(received[wc.wr_id], wc.byte_len, expected);
    }
    static std::chrono::milliseconds timeout(const Connection& connection) {
        return connection.options().timeout();
    }

    std::array<MessageWire, 2> received{};
    MessageWire outgoing{};
    MemoryRegion receive_mr, send_mr;
    std::optional<ibv_wc> early;  // a receive that completed while send() waited for its SEND
};

// ---------------------------------------------------------------- server

// Slot k holds the last write i with i % kTargetSlots == k (RC applies WRITEs in order), or
// zeros if there was none. Returns a description of the first difference.
std::optional<std::string> check_target(std::span<const std::byte> target, std::uint32_t writes,
                                        std::size_t size) {
    for (std::uint32_t slot = 0; slot < kTargetSlots; ++slot) {
        auto bytes = target.subspan(slot * size, size);
        if (slot >= writes) {
            if (!all_zero(bytes))
                return fmt::format("slot {} was written, but no write aimed there", slot);
            continue;
        }
        const std::uint32_t last = slot + (writes - 1 - slot) / kTargetSlots * kTargetSlots;
        if (auto mismatch = find_pattern_mismatch(bytes, last))
            return fmt::format("slot {} byte {} is not what write {} put there", slot, *mismatch,
                               last);
    }
    if (!all_zero(target.subspan(kTargetSlots * size)))
        return std::string("bytes beyond the written slots were changed");
    return std::nullopt;
}

int run_server(const SignalingOptions& options) {
    Listener listener(options);
    for (unsigned number = 1;; ++number) {
        auto connection = listener.next_client();
        connection.create_queues({.send = 1, .recv = 2, .completions = 4});
        connection.require_size_fits(std::size_t{kTargetSlots} * options.size);

        // The client's RDMA WRITEs land here: remote write (and the LOCAL_WRITE it requires).
        Buffer target(std::size_t{kTargetSlots} * options.size);
        MemoryRegion target_mr{
            check_ptr(ibv_reg_mr(connection.pd(), target.data(), target.size(),
                                 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE),
                      "ibv_reg_mr(target)")};
        ControlMessages control(connection.pd());
        control.post_receive(connection.qp(), 0);  // the plan
        control.post_receive(connection.qp(), 1);  // "done"
        connection.accept(
            encode_remote_buffer({.address = reinterpret_cast<std::uintptr_t>(target.data()),
                                  .rkey = target_mr->rkey,
                                  .length = static_cast<std::uint32_t>(target.size()),
                                  .use = BufferUse::kWriteTarget}));

        // The plan, validated before anything is done with it.
        const Message plan = control.receive(connection, Kind::kPlan, "the client's plan");
        if (plan.writes == 0 || plan.writes > kMaxWrites || plan.size == 0 ||
            plan.size > options.size || plan.signal_every == 0 || plan.sq_depth == 0 ||
            plan.last > 1)
            fail(fmt::format(
                "connection {}: the client's plan ({} writes of {} bytes) does not fit this server "
                "({} bytes per slot)",
                number, plan.writes, plan.size, options.size));
        fmt::print(
            "server: connection {}: {} RDMA WRITEs of {} bytes planned, signaling every {} through "
            "a send queue of depth {}\n",
            number, plan.writes, plan.size, plan.signal_every, plan.sq_depth);

        if (plan.signal_every > plan.sq_depth && plan.writes > plan.sq_depth) {
            // The client will fill its send queue before its first signaled WR: it cannot finish.
            connection.wait_for_disconnect();
            fmt::print(
                "server: connection {}: the client stalled with its send queue full, as its plan "
                "implied, and disconnected\n",
                number);
            if (plan.last) {
                fmt::print("server: nothing to verify: the client could not deliver its writes\n");
                return 1;
            }
            continue;
        }

        const Message done = control.receive(connection, Kind::kDone, "the client's done message");
        if (done.writes != plan.writes)
            fail(fmt::format("the client says it wrote {} times; its plan said {}", done.writes,
                             plan.writes));
        // RC ordering: the done SEND arrived after every WRITE before it had been placed.
        if (auto problem = check_target(target.bytes(), plan.writes, plan.size)) {
            fmt::print("server: data check FAILED: {}\n", *problem);
            return 1;
        }
        control.send(connection, {.kind = Kind::kVerified, .writes = plan.writes});
        // The side that sends last disconnects first: a client that hung up on the verdict
        // could beat its ACK, and rdma_cm would flush our SEND before it completed.
        connection.disconnect();
        fmt::print(
            "server: verified the buffer after {} RDMA WRITEs: every slot holds the last write "
            "aimed at it\n",
            plan.writes);
        if (plan.last) return 0;
    }
}

// ---------------------------------------------------------------- client

struct Outcome {
    bool delivered = false;
    std::string stall;  // why not, when not
};

// One connection: `writes` RDMA WRITEs, IBV_SEND_SIGNALED on every `signal_every`th and the last.
Outcome run_connection(const SignalingOptions& options, std::uint32_t requested_signal_every,
                       bool last) {
    auto connection = Connection::resolve(options);
    ibv_device_attr device{};
    check_ibv(ibv_query_device(connection.context(), &device), "ibv_query_device");
    // #region cq-sizing
    // The CQ must hold a completion for every WR the send queue can hold (all may be signaled).
    const auto limit = static_cast<std::uint32_t>(std::min(device.max_qp_wr, device.max_cqe - 4));
    if (options.sq_depth > limit)
        fail(fmt::format("--sq-depth {} is more than {} allows (max_qp_wr {}, max_cqe {})",
                         options.sq_depth, ibv_get_device_name(connection.context()->device),
                         device.max_qp_wr, device.max_cqe));
    // sq_sig_all = 0 (Connection sets it): only WRs flagged IBV_SEND_SIGNALED make completions.
    connection.create_queues(
        {.send = options.sq_depth, .recv = 1, .completions = options.sq_depth + 4});
    connection.require_size_fits(options.size);

    // The real depth: providers round up (rxe to a power of two, minus one).
    ibv_qp_attr attributes{};
    ibv_qp_init_attr init{};
    check_ibv(ibv_query_qp(connection.qp(), &attributes, IBV_QP_CAP, &init), "ibv_query_qp");
    const std::uint32_t depth = init.cap.max_send_wr;
    const std::uint32_t signal_every = requested_signal_every
                                           ? requested_signal_every
                                           : (last ? std::max(1U, depth / 2) : 2 * depth);
    // #endregion cq-sizing

    // One source slot per send-queue slot: WR i uses slot i % depth, which WR i + depth reuses —
    // and that can only be posted once WR i's send-queue slot is back, i.e. WR i is complete.
    // Only our NIC reads the sources: no access flags.
    Buffer sources(std::size_t{depth} * options.size);
    MemoryRegion sources_mr{check_ptr(
        ibv_reg_mr(connection.pd(), sources.data(), sources.size(), 0), "ibv_reg_mr(sources)")};
    ControlMessages control(connection.pd());
    control.post_receive(connection.qp(), 0);  // the server's verdict

    RemoteBuffer remote = decode_remote_buffer_or_throw(
        connection.connect(), BufferUse::kWriteTarget, std::size_t{kTargetSlots} * options.size);
    fmt::print("client: connected over {}; asked for a send queue of {}, {} gave {}\n",
               connection.path_description(), options.sq_depth,
               ibv_get_device_name(connection.context()->device), depth);
    fmt::print(
        "client: {} RDMA WRITEs of {} bytes, IBV_SEND_SIGNALED on every {}{}\n", options.writes,
        options.size, signal_every,
        signal_every > depth ? fmt::format(" — more than the depth, {}", depth) : std::string());
    // The plan goes first, while the send queue is empty.
    control.send(connection, {.kind = Kind::kPlan,
                              .writes = options.writes,
                              .size = static_cast<std::uint32_t>(options.size),
                              .signal_every = signal_every,
                              .sq_depth = depth,
                              .last = last ? 1U : 0U});

    // The verbs contract: a send-queue slot stays taken until a completion for its WR — or for
    // a later WR — has been polled. An unsignaled WR makes no completion, so its slot returns
    // only with the next signaled one. Count it ourselves: in use = posted - reclaimed.
    // #region reclaim
    const auto timeout = ControlMessages::timeout(connection);
    std::uint64_t posted = 0, reclaimed = 0, signaled = 0, completions = 0, full = 0;
    std::int64_t last_signaled = -1;  // the index of the newest signaled WR posted
    auto post_write = [&](std::uint64_t index, bool with_completion) {
        std::byte* source = sources.data() + index % depth * options.size;
        fill_pattern({source, options.size}, index);
        ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(source),
                    .length = static_cast<std::uint32_t>(options.size),
                    .lkey = sources_mr->lkey};
        ibv_send_wr wr{};
        wr.wr_id = index;  // a completion for WR i reclaims the slots of every WR up to i
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_RDMA_WRITE;
        wr.send_flags = with_completion ? IBV_SEND_SIGNALED : 0;
        wr.wr.rdma.remote_addr = remote.address + index % kTargetSlots * options.size;
        wr.wr.rdma.rkey = remote.rkey;
        ibv_send_wr* bad = nullptr;
        trace::post_send(connection.qp(), &wr);  // --trace records the WR (else: nothing)
        return ibv_post_send(connection.qp(), &wr, &bad);
    };
    auto reclaim = [&](std::string_view what) {
        ibv_wc wc = wait_for_completion(connection.cq(), timeout, what);
        if (wc.opcode != IBV_WC_RDMA_WRITE || wc.wr_id < reclaimed || wc.wr_id >= posted)
            fail(fmt::format("unexpected completion: opcode {}, wr_id {}",
                             static_cast<int>(wc.opcode), wc.wr_id));
        ++completions;
        reclaimed = wc.wr_id + 1;
    };
    // #endregion reclaim

    for (std::uint64_t index = 0; index < options.writes; ++index) {
        if (posted - reclaimed == depth) {
            ++full;
            if (last_signaled < static_cast<std::int64_t>(reclaimed)) {
                // Full, and not one outstanding WR asked for a completion: none will come.
                fmt::print(
                    "client: after {} WRs the send queue is full: unsignaled WRs hold all {} "
                    "slots, and the first signaled one would be number {}\n",
                    posted, depth, signal_every);
                // A program that waits for a completion now waits forever. Show it, bounded.
                std::uint64_t arrived = 0;
                const auto until = std::chrono::steady_clock::now() + kStallWait;
                while (std::chrono::steady_clock::now() < until) {
                    ibv_wc wc{};
                    int found = ibv_poll_cq(connection.cq(), 1, &wc);
                    if (found < 0) fail("ibv_poll_cq failed");
                    if (found > 0) {
                        trace::completion(wc);  // --trace records the CQE (else: nothing)
                        if (wc.status != IBV_WC_SUCCESS)
                            fail(fmt::format("an RDMA WRITE: {}", failed_completion(wc)));
                        ++arrived;
                    }
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                }
                fmt::print(
                    "client: waited {} s for a completion to free a slot: {} arrived. Without a "
                    "time limit this wait never ends: deadlock\n",
                    kStallWait.count(), arrived);
                // Break the contract once, to see what this provider does about it. (Its source
                // slot may still be in use: this connection is abandoned, its data not checked.)
                if (int rc = post_write(posted, false); rc != 0)
                    fmt::print(
                        "client: one more ibv_post_send anyway: {} ({}): the send queue is full\n",
                        rc == ENOMEM ? "ENOMEM" : "error", std::strerror(rc));
                else
                    fmt::print(
                        "client: one more ibv_post_send anyway: {} accepted it. Soft-RoCE frees a "
                        "slot as soon as its kernel finishes the WR; that is a provider detail, "
                        "not the contract: hardware providers (mlx5…) answer ENOMEM here\n",
                        ibv_get_device_name(connection.context()->device));
                connection.disconnect();
                return {false,
                        fmt::format(
                            "deadlock: the send queue (depth {}) filled with unsignaled WRs, and "
                            "signaling every {} never frees a slot (use --signal-every {} or less)",
                            depth, signal_every, depth)};
            }
            reclaim("a signaled RDMA WRITE, to free send-queue slots");
        }
        // #region signal-every-nth
        const bool with_completion = (index + 1) % signal_every == 0 || index + 1 == options.writes;
        if (int rc = post_write(index, with_completion); rc != 0)
            check_ibv(rc, "ibv_post_send(RDMA_WRITE)");
        ++posted;
        if (with_completion) {
            ++signaled;
            last_signaled = static_cast<std::int64_t>(index);
        }
    }
    while (reclaimed < posted) reclaim("the last signaled RDMA WRITE");
    // #endregion signal-every-nth

    // RC ordering: "done" reaches the server after every WRITE before it.
    control.send(connection, {.kind = Kind::kDone, .writes = options.writes});
    const Message verdict = control.receive(connection, Kind::kVerified, "the server's verdict");
    connection.wait_for_disconnect();  // the server hangs up once its verdict has completed
    if (verdict.writes != options.writes)
        fail(fmt::format("the server verified {} writes; {} were posted", verdict.writes,
                         options.writes));
    fmt::print(
        "client: {} RDMA WRITEs posted, {} signaled; {} completions polled; the send queue was "
        "full {} times, and each polled completion freed up to {} slots at once\n",
        posted, signaled, completions, full, signal_every);
    return {true, {}};
}

int run_client(const SignalingOptions& options) {
    if (options.signal_every != 0) {
        Outcome outcome = run_connection(options, options.signal_every, true);
        if (!outcome.delivered) fail(outcome.stall);
    } else {
        // First the mistake, then the cure, each on a connection of its own: a send queue that
        // deadlocked holds its slots until the QP is destroyed.
        Outcome mistake = run_connection(options, 0, false);
        if (mistake.delivered)
            fmt::print("client: no stall: all {} writes fit in the send queue at once\n",
                       options.writes);
        fmt::print("client: the cure: signal at least once per send-queue depth\n");
        Outcome cure = run_connection(options, 0, true);
        if (!cure.delivered) fail(cure.stall);
    }
    fmt::print("client: the server verified its buffer after all {} RDMA WRITEs\n", options.writes);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("selective-signaling", [&] {
        CommandLine cli{"Selective signaling: unsignaled WRs, and the send-queue slots they hold",
                        "selective-signaling"};
        SignalingOptions options;
        options.size = 64;  // small writes: where saving completions matters
        cli.add_connection_options(options);
        cli.option("-n,--iters", options.writes, "number of RDMA WRITEs")
            .range(1U, kMaxWrites)
            .show_default();
        cli.option("--sq-depth", options.sq_depth, "send-queue depth to ask for (max_send_wr)")
            .range(1U, 1U << 20)
            .show_default();
        cli.option("--signal-every", options.signal_every,
                   "signal every Nth WR (default: show N = 2 x depth deadlock, then N = depth / 2)")
            .range(1U, 1U << 30);
        cli.parse_or_exit(argc, argv);
        return options.server ? run_server(options) : run_client(options);
    });
}
