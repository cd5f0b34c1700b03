// Lesson: send-recv — two-sided messaging: the server pre-posts receives, the client SENDs
// messages of different lengths, and each arrives whole, in its own receive, in order.
// Run: send-recv server [-s SIZE] [-n COUNT] | send-recv client ADDR [-s SIZE] [-n COUNT]
#include "rdmalab/connection.hpp"
#include "rdmalab/control_word.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/private_data.hpp"
#include "rdmalab/trace.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>

#include <cstdint>
#include <optional>

using namespace rdmalab;

namespace {

struct SendRecvOptions : ConnectionOptions {
    std::uint32_t count = 8;
};

int run_server(const SendRecvOptions& options) {
    auto connection = Connection::wait_for_client(options);
    connection.create_queues({.send = 1, .recv = options.count, .completions = options.count + 1});
    connection.require_size_fits(options.size);

    // One slot of `size` bytes per expected message, in one registered region. Only the local
    // NIC writes here (LOCAL_WRITE); a SEND names no remote address, so no remote access flag.
    Buffer slots(options.size * options.count);
    MemoryRegion slots_mr{
        ibv_reg_mr(connection.pd(), slots.data(), slots.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(slots_mr.get(), "ibv_reg_mr(receive slots)");

    // #region pre-post-receives
    // Pre-post every receive before accepting. wr_id carries the slot number back in the
    // completion; a linked list (next) posts them all with one call.
    std::vector<ibv_sge> sges(options.count);
    std::vector<ibv_recv_wr> receives(options.count);
    for (std::uint32_t i = 0; i < options.count; ++i) {
        sges[i] = {.addr = reinterpret_cast<std::uintptr_t>(slots.data() + i * options.size),
                   .length = static_cast<std::uint32_t>(options.size),
                   .lkey = slots_mr->lkey};
        receives[i] = {.wr_id = i,
                       .next = i + 1 < options.count ? &receives[i + 1] : nullptr,
                       .sg_list = &sges[i],
                       .num_sge = 1};
    }
    ibv_recv_wr* bad_receive = nullptr;
    trace::post_recv(connection.qp(), receives.data());  // --trace records the WR (else: nothing)
    check_ibv(ibv_post_recv(connection.qp(), receives.data(), &bad_receive), "ibv_post_recv");
    // #endregion pre-post-receives

    connection.accept();
    fmt::print("server: connected over {}; {} receives of {} bytes posted\n",
               connection.path_description(), options.count, options.size);

    // #region check-receive
    // Each SEND consumes exactly one receive, in posting order, and byte_len says how long it
    // was: message boundaries survive, unlike a TCP byte stream.
    for (std::uint32_t i = 0; i < options.count; ++i) {
        ibv_wc wc = connection.wait_for_completion("a message from the client");
        const std::size_t expected = message_length(i, options.size);
        if (wc.opcode != IBV_WC_RECV || wc.wr_id != i || wc.byte_len != expected)
            fail(
                fmt::format("message {}: expected {} bytes in receive {}, got opcode {}, {} bytes "
                            "in receive {}",
                            i, expected, i, static_cast<int>(wc.opcode), wc.byte_len, wc.wr_id));
        std::span<const std::byte> message{slots.data() + i * options.size, wc.byte_len};
        if (auto mismatch = find_pattern_mismatch(message, i)) {
            fmt::print("server: data check FAILED: message {} differs at byte {}\n", i, *mismatch);
            return 1;
        }
        fmt::print("server: message {}: {} bytes in receive {}, content verified\n", i, wc.byte_len,
                   wc.wr_id);
    }
    // #endregion check-receive

    // Answer with the count received, so the client knows nothing was lost.
    ControlWord reply(connection.pd(), ControlWord::Direction::kSend);
    reply.post_send(connection.qp(), options.count, options.count);
    connection.wait_for_completion("the reply");
    // The side that sends last disconnects first: a client that hung up on receiving the reply
    // could beat the reply's ACK here, and rdma_cm would flush our SEND before it completed.
    connection.disconnect();
    fmt::print("server: verified {} messages: each SEND arrived whole in one receive, in order\n",
               options.count);
    return 0;
}

int run_client(const SendRecvOptions& options) {
    auto connection = Connection::resolve(options);
    connection.create_queues({.send = options.count, .recv = 1, .completions = options.count + 1});
    connection.require_size_fits(options.size);

    // Message i is message_length(i) bytes of pattern i, each in its own slot.
    Buffer messages(options.size * options.count);
    for (std::uint32_t i = 0; i < options.count; ++i)
        fill_pattern({messages.data() + i * options.size, message_length(i, options.size)}, i);
    MemoryRegion messages_mr{ibv_reg_mr(connection.pd(), messages.data(), messages.size(), 0)};
    check_ptr(messages_mr.get(), "ibv_reg_mr(messages)");

    // Post the receive for the server's reply before connecting, so it is there in time.
    ControlWord reply(connection.pd(), ControlWord::Direction::kReceive);
    reply.post_receive(connection.qp(), options.count);

    connection.connect();
    fmt::print("client: connected over {}\n", connection.path_description());

    // #region post-sends
    // All SENDs go out back to back, each with its own length; then one completion each.
    for (std::uint32_t i = 0; i < options.count; ++i) {
        ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(messages.data() + i * options.size),
                    .length = static_cast<std::uint32_t>(message_length(i, options.size)),
                    .lkey = messages_mr->lkey};
        ibv_send_wr send{};
        send.wr_id = i;
        send.sg_list = &sge;
        send.num_sge = 1;
        send.opcode = IBV_WR_SEND;
        send.send_flags = IBV_SEND_SIGNALED;
        ibv_send_wr* bad_send = nullptr;
        trace::post_send(connection.qp(), &send);  // --trace records the WR (else: nothing)
        check_ibv(ibv_post_send(connection.qp(), &send, &bad_send), "ibv_post_send(SEND)");
    }
    // #endregion post-sends
    // One CQ holds both kinds: the SENDs' completions and the reply's receive, in any order.
    std::uint32_t sends_done = 0;
    std::optional<std::uint32_t> received;
    while (sends_done < options.count || !received) {
        ibv_wc wc = connection.wait_for_completion("SEND completions and the server's reply");
        if (wc.opcode == IBV_WC_SEND)
            ++sends_done;
        else
            received = reply.received_value(wc, "the server's reply");
    }
    connection.wait_for_disconnect();  // the server hangs up once its reply has completed
    if (*received != options.count)
        fail(fmt::format("the server reports {} messages received, {} were sent", *received,
                         options.count));
    fmt::print(
        "client: sent {} messages of {} sizes; the server received and verified all of them\n",
        options.count, options.count < 4 ? options.count : 4);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("send-recv", [&] {
        CommandLine cli{"SEND/RECV: two-sided messages into pre-posted receives", "send-recv"};
        SendRecvOptions options;
        cli.add_connection_options(options);
        cli.option("-n,--iters", options.count, "number of messages").range(1, 1024).show_default();
        cli.parse_or_exit(argc, argv);
        return options.server ? run_server(options) : run_client(options);
    });
}
