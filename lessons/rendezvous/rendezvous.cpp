// Lesson: rendezvous — how large transfers are arranged: the client SENDs {address, rkey,
// length}, the server RDMA-READs the data and answers FIN; only then may the client release its
// buffer. (Streams of small messages go through a ring instead: the next lesson, credit-ring.)
// Run: rendezvous server [-s MAX] | rendezvous client ADDR [-s SIZE]
#include "rdmalab/codec.hpp"
#include "rdmalab/connection.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/private_data.hpp"
#include "rdmalab/trace.hpp"
#include "rdmalab/verbs.hpp"
#include "rendezvous_messages.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

using namespace rdmalab;
using namespace rdmalab::rendezvous;  // the messages: rendezvous_messages.hpp

namespace {

constexpr std::uint64_t kPayloadSeed = 0x8d;

void post_one(ibv_qp* qp, ibv_send_wr& wr, std::string_view call) {
    ibv_send_wr* bad_send = nullptr;
    trace::post_send(qp, &wr);  // --trace records the WR (else: nothing)
    check_ibv(ibv_post_send(qp, &wr, &bad_send), call);
}

// One receive, into the registered bytes sge names.
void post_receive(ibv_qp* qp, ibv_sge& sge) {
    ibv_recv_wr receive{.wr_id = 0, .next = nullptr, .sg_list = &sge, .num_sge = 1};
    ibv_recv_wr* bad_receive = nullptr;
    trace::post_recv(qp, &receive);  // --trace records the WR (else: nothing)
    check_ibv(ibv_post_recv(qp, &receive, &bad_receive), "ibv_post_recv");
}

// One CQ carries both the completions of our own operations and the peer's messages. A message
// can complete before the operation we wait for (the peer may answer before our NIC has polled
// the acknowledgement), so a receive that comes early is kept for later, never mistaken.
class Completions {
  public:
    explicit Completions(Connection& connection) : connection_(connection) {}

    ibv_wc wait_for(ibv_wc_opcode expected, std::string_view what) {
        if (expected == IBV_WC_RECV && early_receive_)
            return *std::exchange(early_receive_, std::nullopt);
        for (;;) {
            ibv_wc wc = connection_.wait_for_completion(what);
            if (wc.opcode == expected) return wc;
            if (wc.opcode == IBV_WC_RECV && !early_receive_) {
                early_receive_ = wc;  // only one receive is ever posted: at most one comes early
                continue;
            }
            fail(fmt::format("{}: unexpected completion (opcode {})", what,
                             static_cast<int>(wc.opcode)));
        }
    }

  private:
    Connection& connection_;
    std::optional<ibv_wc> early_receive_;
};

// ---------------------------------------------------------------------------------------------
// The server: waits for the client's offer, pulls the buffer, answers FIN.

int run_server(const ConnectionOptions& options) {
    auto connection = Connection::wait_for_client(options);
    connection.create_queues({.send = 2, .recv = 1, .completions = 4});
    connection.require_size_fits(options.size);
    // The receive for the client's offer, posted before accepting.
    OfferMessage offer{};
    MemoryRegion offer_mr{
        ibv_reg_mr(connection.pd(), offer.data(), offer.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(offer_mr.get(), "ibv_reg_mr(offer)");
    ibv_sge offer_sge{.addr = reinterpret_cast<std::uintptr_t>(offer.data()),
                      .length = static_cast<std::uint32_t>(offer.size()),
                      .lkey = offer_mr->lkey};
    post_receive(connection.qp(), offer_sge);
    connection.accept();
    fmt::print("server: connected over {}\n", connection.path_description());
    Completions completions(connection);

    // byte_len is at most the bytes posted (a longer SEND fails the receive instead).
    ibv_wc wc = completions.wait_for(IBV_WC_RECV, "the client's offer");
    std::span<const std::byte> advertisement = read_offer(
        std::span<const std::byte>(offer).first(std::min<std::size_t>(wc.byte_len, kOfferBytes)));

    // #region rendezvous-read
    // The client's buffer, advertised in a SEND: validate, RDMA READ it, verify, FIN.
    RemoteBuffer source = decode_remote_buffer_or_throw(advertisement, BufferUse::kReadSource);
    if (source.length > options.size)
        fail(fmt::format("the client offers {} bytes; this server accepts at most {} (-s)",
                         source.length, options.size));
    // The landing buffer is written by our own NIC with the READ response: LOCAL_WRITE. (A real
    // server keeps registered buffers in a pool: registering per transfer is slow.)
    Buffer landing(source.length);
    MemoryRegion landing_mr{
        ibv_reg_mr(connection.pd(), landing.data(), landing.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(landing_mr.get(), "ibv_reg_mr(landing buffer)");
    ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(landing.data()),
                .length = source.length,
                .lkey = landing_mr->lkey};
    ibv_send_wr read{};
    read.sg_list = &sge;
    read.num_sge = 1;
    read.opcode = IBV_WR_RDMA_READ;
    read.send_flags = IBV_SEND_SIGNALED;
    read.wr.rdma.remote_addr = source.address;
    read.wr.rdma.rkey = source.rkey;
    post_one(connection.qp(), read, "ibv_post_send(RDMA_READ)");
    completions.wait_for(IBV_WC_RDMA_READ, "RDMA READ of the client's buffer");
    // #endregion rendezvous-read
    if (auto mismatch = find_pattern_mismatch(landing.bytes(), kPayloadSeed)) {
        fmt::print("server: data check FAILED: byte {} of the client's {} bytes differs\n",
                   *mismatch, source.length);
        return 1;
    }
    fmt::print(
        "server: rendezvous: read {} bytes from {:#x} (rkey {:#x}) with one RDMA READ, verified\n",
        source.length, source.address, source.rkey);

    // FIN: until it arrives the client must keep its buffer registered and unchanged.
    FinMessage fin = make_fin(source.length);
    MemoryRegion fin_mr{ibv_reg_mr(connection.pd(), fin.data(), fin.size(), 0)};
    check_ptr(fin_mr.get(), "ibv_reg_mr(FIN)");
    ibv_sge fin_sge{.addr = reinterpret_cast<std::uintptr_t>(fin.data()),
                    .length = static_cast<std::uint32_t>(fin.size()),
                    .lkey = fin_mr->lkey};
    ibv_send_wr send{};
    send.sg_list = &fin_sge;
    send.num_sge = 1;
    send.opcode = IBV_WR_SEND;
    send.send_flags = IBV_SEND_SIGNALED;
    post_one(connection.qp(), send, "ibv_post_send(SEND FIN)");
    completions.wait_for(IBV_WC_SEND, "the FIN message");
    // The sender of the last message hangs up, once its completion says it has arrived.
    connection.disconnect();
    fmt::print("server: verified: rendezvous, {} bytes pulled with RDMA READ\n", source.length);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// The client: offers its buffer and keeps it until FIN.

int run_client(const ConnectionOptions& options) {
    const std::size_t size = options.size;
    if (size > UINT32_MAX)
        fail(fmt::format("-s {}: a rendezvous advertises at most {} bytes", size, UINT32_MAX));
    auto connection = Connection::resolve(options);
    connection.create_queues({.send = 2, .recv = 1, .completions = 4});
    connection.require_size_fits(size);
    // The receive for FIN, posted before connecting (only one FIN ever comes).
    FinMessage fin{};
    MemoryRegion fin_mr{
        ibv_reg_mr(connection.pd(), fin.data(), fin.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(fin_mr.get(), "ibv_reg_mr(FIN)");
    ibv_sge fin_sge{.addr = reinterpret_cast<std::uintptr_t>(fin.data()),
                    .length = static_cast<std::uint32_t>(fin.size()),
                    .lkey = fin_mr->lkey};
    post_receive(connection.qp(), fin_sge);
    connection.connect();
    fmt::print("client: connected over {}\n", connection.path_description());
    Completions completions(connection);

    // #region rendezvous-offer
    // Offer a large buffer; the server pulls it. The buffer may be freed or reused only after
    // FIN: earlier, the server would read garbage.
    Buffer payload(size);
    fill_pattern(payload.bytes(), kPayloadSeed);
    // The server's NIC reads it (REMOTE_READ); our own NIC never writes it.
    MemoryRegion payload_mr{
        ibv_reg_mr(connection.pd(), payload.data(), payload.size(), IBV_ACCESS_REMOTE_READ)};
    check_ptr(payload_mr.get(), "ibv_reg_mr(payload)");

    OfferMessage offer = make_offer({.address = reinterpret_cast<std::uintptr_t>(payload.data()),
                                     .rkey = payload_mr->rkey,
                                     .length = static_cast<std::uint32_t>(size),
                                     .use = BufferUse::kReadSource});
    // #endregion rendezvous-offer
    MemoryRegion offer_mr{ibv_reg_mr(connection.pd(), offer.data(), offer.size(), 0)};
    check_ptr(offer_mr.get(), "ibv_reg_mr(offer)");
    ibv_sge offer_sge{.addr = reinterpret_cast<std::uintptr_t>(offer.data()),
                      .length = static_cast<std::uint32_t>(offer.size()),
                      .lkey = offer_mr->lkey};
    ibv_send_wr send{};
    send.sg_list = &offer_sge;
    send.num_sge = 1;
    send.opcode = IBV_WR_SEND;
    send.send_flags = IBV_SEND_SIGNALED;
    post_one(connection.qp(), send, "ibv_post_send(SEND offer)");
    completions.wait_for(IBV_WC_SEND, "the offer");
    fmt::print("client: rendezvous: offered {} bytes at {:#x}, rkey {:#x}; waiting for FIN\n", size,
               reinterpret_cast<std::uintptr_t>(payload.data()), payload_mr->rkey);
    // #region rendezvous-fin
    ibv_wc wc = completions.wait_for(IBV_WC_RECV, "the server's FIN");
    const std::uint32_t verified = read_fin(
        std::span<const std::byte>(fin).first(std::min<std::size_t>(wc.byte_len, kFinBytes)));
    if (verified != size)
        fail(fmt::format("the server's FIN reports {} bytes, {} were offered", verified, size));
    fmt::print(
        "client: FIN: the server read and verified {} bytes; only now is the buffer released\n",
        size);
    // #endregion rendezvous-fin
    connection.wait_for_disconnect();  // the server hangs up after FIN
    fmt::print(
        "client: done: {} bytes by rendezvous, released after FIN; the server verified "
        "every byte\n",
        size);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("rendezvous", [&] {
        CommandLine cli{
            "Rendezvous: the client SENDs {address, rkey, length}, the server "
            "RDMA-READs it and answers FIN",
            "rendezvous"};
        ConnectionOptions options;
        options.size = 1 << 20;  // a "large" transfer by default
        cli.add_connection_options(options);
        cli.parse_or_exit(argc, argv);
        return options.server ? run_server(options) : run_client(options);
    });
}
