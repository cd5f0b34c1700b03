// Lesson: scatter-gather — one work request names several buffers: a SEND gathered from three
// buffers lands scattered across two receive buffers split elsewhere, and an RDMA WRITE gathered
// from the same three lands in one contiguous remote buffer. The message is one byte stream;
// where its SGEs begin and end is each side's own business. Then the limit: a WR with more SGEs
// than its QP was created for is refused at ibv_post_send.
// Run: scatter-gather server | scatter-gather client ADDR [-s BODY_SIZE]
#include "rdmalab/connection.hpp"
#include "rdmalab/control_word.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/private_data.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace rdmalab;

namespace {

constexpr std::uint64_t kSeed = 0x5c;  // the whole message is one pattern, across every piece
constexpr std::size_t kHeader = 16;    // the client's message: header | body (-s) | trailer
constexpr std::size_t kTrailer = 8;
constexpr std::uint32_t kGatherSges = 3;

std::size_t message_size(std::size_t body) {
    return kHeader + body + kTrailer;
}

// The device's limits on SGEs per WR: what a program must read before asking for more.
void print_sge_limits(const char* who, ibv_context* context) {
    ibv_device_attr device{};
    check_ibv(ibv_query_device(context, &device), "ibv_query_device");
    fmt::print("{}: {} allows up to {} SGEs per send or receive WR, {} per RDMA READ\n", who,
               ibv_get_device_name(context->device), device.max_sge, device.max_sge_rd);
}

// Checks that `piece` holds bytes [offset, offset + piece.size()) of the message's pattern.
bool holds_message_bytes(std::span<const std::byte> piece, std::size_t offset) {
    for (std::size_t i = 0; i < piece.size(); ++i)
        if (piece[i] != pattern_byte(kSeed, offset + i)) return false;
    return true;
}

int run_server(const ConnectionOptions& options) {
    auto connection = Connection::wait_for_client(options);
    // Two SGEs per receive: the receive queue must be created for them.
    connection.create_queues({.send = 1, .recv = 2, .completions = 4, .recv_sge = 2});
    const std::size_t capacity = message_size(options.size);
    connection.require_size_fits(capacity);
    print_sge_limits("server", connection.context());

    // #region scatter-receive
    // One receive, two buffers, split where the sender's pieces do NOT split: the first third of
    // the message, then the rest. Each buffer is its own MR (an SGE names any local MR).
    Buffer first(capacity / 3), rest(capacity - capacity / 3);
    MemoryRegion first_mr{
        ibv_reg_mr(connection.pd(), first.data(), first.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(first_mr.get(), "ibv_reg_mr(first)");
    MemoryRegion rest_mr{
        ibv_reg_mr(connection.pd(), rest.data(), rest.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(rest_mr.get(), "ibv_reg_mr(rest)");
    std::array<ibv_sge, 2> scatter{{
        {.addr = reinterpret_cast<std::uintptr_t>(first.data()),
         .length = static_cast<std::uint32_t>(first.size()),
         .lkey = first_mr->lkey},
        {.addr = reinterpret_cast<std::uintptr_t>(rest.data()),
         .length = static_cast<std::uint32_t>(rest.size()),
         .lkey = rest_mr->lkey},
    }};
    ibv_recv_wr receive{.wr_id = 1, .next = nullptr, .sg_list = scatter.data(), .num_sge = 2};
    ibv_recv_wr* bad_receive = nullptr;
    check_ibv(ibv_post_recv(connection.qp(), &receive, &bad_receive), "ibv_post_recv(2 SGEs)");
    // #endregion scatter-receive

    // The WRITE's target: one contiguous buffer the client may write (and nothing else), and a
    // receive for its "done" word.
    Buffer target(capacity);
    MemoryRegion target_mr{ibv_reg_mr(connection.pd(), target.data(), target.size(),
                                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)};
    check_ptr(target_mr.get(), "ibv_reg_mr(target)");
    ControlWord done(connection.pd(), ControlWord::Direction::kReceive);
    done.post_receive(connection.qp(), 2);
    connection.accept(
        encode_remote_buffer({.address = reinterpret_cast<std::uintptr_t>(target.data()),
                              .rkey = target_mr->rkey,
                              .length = static_cast<std::uint32_t>(target.size()),
                              .use = BufferUse::kWriteTarget}));
    fmt::print("server: connected over {}; one receive of 2 SGEs ({} + {} bytes) posted\n",
               connection.path_description(), first.size(), rest.size());

    // #region scatter-check
    // byte_len is the whole message; the NIC filled the SGEs in order, each to its length.
    const ibv_wc wc = connection.wait_for_completion("the gathered SEND");
    if (wc.opcode != IBV_WC_RECV || wc.wr_id != 1 || wc.byte_len == 0 || wc.byte_len > capacity)
        fail(fmt::format("unexpected receive: opcode {}, wr_id {}, {} bytes",
                         static_cast<int>(wc.opcode), wc.wr_id, wc.byte_len));
    const std::size_t in_first = std::min<std::size_t>(wc.byte_len, first.size());
    const std::size_t in_rest = wc.byte_len - in_first;
    if (!holds_message_bytes(first.bytes().first(in_first), 0) ||
        !holds_message_bytes(rest.bytes().first(in_rest), in_first) ||
        !all_zero(rest.bytes().subspan(in_rest)))
        fail("the scattered message does not read back as the client's byte stream");
    if (in_rest == 0)
        fmt::print("server: the SEND of {} bytes fit in the first buffer; verified\n", wc.byte_len);
    else
        fmt::print(
            "server: the SEND of {} bytes arrived scattered: bytes 0..{} in the first buffer, "
            "{}..{} in the second; verified\n",
            wc.byte_len, in_first - 1, in_first, wc.byte_len - 1);
    // #endregion scatter-check

    const std::uint32_t written =
        done.received_value(connection.wait_for_completion("the client's done word"), "done");
    if (written == 0 || written > target.size())
        fail(fmt::format("the client claims it wrote {} bytes into a {}-byte buffer", written,
                         target.size()));
    if (!holds_message_bytes(target.bytes().first(written), 0) ||
        !all_zero(target.bytes().subspan(written)))
        fail("the gathered WRITE did not land as one contiguous copy of the message");
    fmt::print(
        "server: the RDMA WRITE gathered from {} buffers landed as {} contiguous bytes; "
        "verified\n",
        kGatherSges, written);
    connection.wait_for_disconnect();
    return 0;
}

int run_client(const ConnectionOptions& options) {
    auto connection = Connection::resolve(options);
    // Three SGEs per send WR: the send queue must be created for them.
    connection.create_queues({.send = 2, .recv = 1, .completions = 4, .send_sge = kGatherSges});
    const std::size_t total = message_size(options.size);
    connection.require_size_fits(total);
    print_sge_limits("client", connection.context());

    // #region gather-sources
    // The message in three separately registered pieces — a header, a body, a trailer — each
    // filled with its part of one pattern. The NIC only reads them: access flags 0.
    Buffer header(kHeader), body(options.size), trailer(kTrailer);
    std::array<Buffer*, kGatherSges> pieces{&header, &body, &trailer};
    std::array<MemoryRegion, kGatherSges> piece_mrs;
    std::array<ibv_sge, kGatherSges> gather{};
    std::size_t offset = 0;
    for (std::uint32_t i = 0; i < kGatherSges; ++i) {
        for (std::size_t b = 0; b < pieces[i]->size(); ++b)
            pieces[i]->bytes()[b] = pattern_byte(kSeed, offset + b);
        piece_mrs[i].reset(ibv_reg_mr(connection.pd(), pieces[i]->data(), pieces[i]->size(), 0));
        check_ptr(piece_mrs[i].get(), "ibv_reg_mr(piece)");
        gather[i] = {.addr = reinterpret_cast<std::uintptr_t>(pieces[i]->data()),
                     .length = static_cast<std::uint32_t>(pieces[i]->size()),
                     .lkey = piece_mrs[i]->lkey};
        offset += pieces[i]->size();
    }
    // #endregion gather-sources
    ControlWord done(connection.pd(), ControlWord::Direction::kSend);

    RemoteBuffer remote =
        decode_remote_buffer_or_throw(connection.connect(), BufferUse::kWriteTarget, total);
    fmt::print("client: connected over {}; the message is {} bytes in {} pieces ({} + {} + {})\n",
               connection.path_description(), total, kGatherSges, header.size(), body.size(),
               trailer.size());

    // #region gather-send
    // One SEND, three SGEs: the NIC reads them in order and sends one message.
    ibv_send_wr send{};
    send.wr_id = 1;
    send.sg_list = gather.data();
    send.num_sge = kGatherSges;
    send.opcode = IBV_WR_SEND;
    send.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad_send = nullptr;
    check_ibv(ibv_post_send(connection.qp(), &send, &bad_send), "ibv_post_send(SEND, 3 SGEs)");
    connection.wait_for_completion("the gathered SEND");

    // One RDMA WRITE, the same three SGEs, one contiguous remote range.
    ibv_send_wr write = send;
    write.wr_id = 2;
    write.opcode = IBV_WR_RDMA_WRITE;
    write.wr.rdma.remote_addr = remote.address;
    write.wr.rdma.rkey = remote.rkey;
    check_ibv(ibv_post_send(connection.qp(), &write, &bad_send), "ibv_post_send(WRITE, 3 SGEs)");
    connection.wait_for_completion("the gathered RDMA WRITE");
    // #endregion gather-send
    fmt::print("client: sent {} bytes gathered from {} buffers, then wrote them with one WRITE\n",
               total, kGatherSges);

    // #region too-many-sges
    // The limit: the QP's send queue takes at most max_send_sge SGEs per WR (asked for at
    // creation; the provider may grant more, so ask the QP). One more is refused when it is
    // posted — nothing reaches the wire, and the QP stays usable.
    ibv_qp_attr attributes{};
    ibv_qp_init_attr granted{};
    check_ibv(ibv_query_qp(connection.qp(), &attributes, IBV_QP_CAP, &granted), "ibv_query_qp");
    const std::uint32_t max_sge = granted.cap.max_send_sge;
    std::vector<ibv_sge> too_many(max_sge + 1, gather.front());
    ibv_send_wr over = send;
    over.wr_id = 3;
    over.sg_list = too_many.data();
    over.num_sge = static_cast<int>(too_many.size());
    const int refused = ibv_post_send(connection.qp(), &over, &bad_send);
    if (refused == 0)
        fail(fmt::format("ibv_post_send accepted {} SGEs on a QP whose max_send_sge is {}",
                         too_many.size(), max_sge));
    // Providers return the errno, some negated.
    fmt::print(
        "client: a SEND with {} SGEs on this QP (max_send_sge {}): ibv_post_send refused "
        "it: {}\n",
        too_many.size(), max_sge, std::strerror(std::abs(refused)));
    // #endregion too-many-sges

    done.post_send(connection.qp(), static_cast<std::uint32_t>(total), 4);
    connection.wait_for_completion("done word");
    connection.disconnect();
    fmt::print("client: scatter-gather shown: one SEND and one WRITE from 3 buffers each\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("scatter-gather", [&] {
        CommandLine cli{"Scatter/gather: several buffers per work request", "scatter-gather"};
        ConnectionOptions options;
        cli.add_connection_options(options);
        cli.existing("--size").description(
            "bytes in the message's body (header and trailer add 24)");
        cli.parse_or_exit(argc, argv);
        return options.server ? run_server(options) : run_client(options);
    });
}
