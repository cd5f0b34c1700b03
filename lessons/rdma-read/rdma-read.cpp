// Lesson: rdma-read — the client RDMA-READs the server's buffer; the server only advertises it.
// Then the fence: a READ and a SEND of what it fetched, posted together, without and with
// IBV_SEND_FENCE; the server says what each SEND carried.
// Run: rdma-read server [-s SIZE] | rdma-read client ADDR [-s SIZE]
#include "rdmalab/connection.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/private_data.hpp"
#include "rdmalab/trace.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>

using namespace rdmalab;

namespace {

constexpr std::uint64_t kSeed = 0x52;

int run_server(const ConnectionOptions& options) {
    auto connection = Connection::wait_for_client(options);
    connection.create_queues({.send = 1, .recv = 2, .completions = 3});
    connection.require_size_fits(options.size);

    // #region register-source
    // The source holds the pattern. Least privilege: the peer may read it (REMOTE_READ) and
    // nothing else; no local write access is needed because the NIC only reads it.
    Buffer source(options.size);
    fill_pattern(source.bytes(), kSeed);
    MemoryRegion source_mr{
        ibv_reg_mr(connection.pd(), source.data(), source.size(), IBV_ACCESS_REMOTE_READ)};
    check_ptr(source_mr.get(), "ibv_reg_mr(source)");
    // #endregion register-source

    // The fence part: the client will SEND back, twice, what its READs fetch. Two receives,
    // one per message, posted before accepting so neither SEND can find the queue empty.
    Buffer relayed(2 * options.size);
    MemoryRegion relayed_mr{
        ibv_reg_mr(connection.pd(), relayed.data(), relayed.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(relayed_mr.get(), "ibv_reg_mr(relayed)");
    for (std::uint64_t slot = 0; slot < 2; ++slot) {
        ibv_sge recv_sge{
            .addr = reinterpret_cast<std::uintptr_t>(relayed.data()) + slot * source.size(),
            .length = static_cast<std::uint32_t>(source.size()),
            .lkey = relayed_mr->lkey};
        ibv_recv_wr recv{.wr_id = slot, .next = nullptr, .sg_list = &recv_sge, .num_sge = 1};
        ibv_recv_wr* bad_recv = nullptr;
        trace::post_recv(connection.qp(), &recv);
        check_ibv(ibv_post_recv(connection.qp(), &recv, &bad_recv), "ibv_post_recv(relayed)");
    }

    auto advertisement =
        encode_remote_buffer({.address = reinterpret_cast<std::uintptr_t>(source.data()),
                              .rkey = source_mr->rkey,
                              .length = static_cast<std::uint32_t>(source.size()),
                              .use = BufferUse::kReadSource});
    connection.accept(advertisement);
    fmt::print("server: connected over {}; advertised {} bytes for reading at {:#x}, rkey {:#x}\n",
               connection.path_description(), source.size(),
               reinterpret_cast<std::uintptr_t>(source.data()), source_mr->rkey);

    // The client's READs are served by the NIC: this CPU sees nothing of them. What arrives is
    // the fence part's two SENDs, each meant to carry the bytes a READ had just fetched.
    bool fenced_ok = false;
    for (std::uint64_t slot = 0; slot < 2; ++slot) {
        ibv_wc wc = connection.wait_for_completion("the relayed SEND");
        trace::completion(wc);
        if (wc.opcode != IBV_WC_RECV || wc.wr_id != slot || wc.byte_len != source.size())
            fail(fmt::format(
                "relayed SEND {}: expected a receive of {} bytes in slot {}, got "
                "opcode {} of {} bytes in slot {}",
                slot + 1, source.size(), slot, static_cast<int>(wc.opcode), wc.byte_len, wc.wr_id));
        auto got = std::span<const std::byte>(relayed.bytes())
                       .subspan(slot * source.size(), source.size());
        auto stale = find_pattern_mismatch(got, kSeed);
        if (slot == 0 && stale)
            fmt::print(
                "server: [fence] SEND 1, no fence: STALE (byte {} of {} differs), gathered "
                "before the READ landed\n",
                *stale, got.size());
        else if (slot == 0)
            fmt::print(
                "server: [fence] SEND 1, no fence: the fetched bytes this time (nothing "
                "guaranteed it)\n");
        else if (stale)
            fmt::print("server: [fence] SEND 2, IBV_SEND_FENCE: FAILED, byte {} of {} differs\n",
                       *stale, got.size());
        else
            fmt::print(
                "server: [fence] SEND 2, IBV_SEND_FENCE: the {} bytes the READ fetched, "
                "verified\n",
                got.size());
        fenced_ok = slot == 1 && !stale;
    }
    connection.wait_for_disconnect();
    fmt::print("server: the client disconnected; it read this buffer without this CPU's help\n");
    return fenced_ok ? 0 : 1;
}

int run_client(const ConnectionOptions& options) {
    auto connection = Connection::resolve(options);
    connection.create_queues({.send = 2, .recv = 1, .completions = 3});
    connection.require_size_fits(options.size);

    // The destination is written by our own NIC with the READ response: LOCAL_WRITE.
    Buffer destination(options.size);
    MemoryRegion destination_mr{ibv_reg_mr(connection.pd(), destination.data(), destination.size(),
                                           IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(destination_mr.get(), "ibv_reg_mr(destination)");

    auto private_data = connection.connect();
    RemoteBuffer remote =
        decode_remote_buffer_or_throw(private_data, BufferUse::kReadSource, destination.size());
    fmt::print("client: connected over {}; server buffer {} bytes at {:#x}, rkey {:#x}\n",
               connection.path_description(), remote.length, remote.address, remote.rkey);

    // #region post-read
    // The RDMA READ: remote address + rkey → local buffer (sge). READs need the responder
    // resources negotiated in rdma_conn_param (initiator_depth / responder_resources).
    ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(destination.data()),
                .length = static_cast<std::uint32_t>(destination.size()),
                .lkey = destination_mr->lkey};
    ibv_send_wr read{};
    read.wr_id = 1;
    read.sg_list = &sge;
    read.num_sge = 1;
    read.opcode = IBV_WR_RDMA_READ;
    read.send_flags = IBV_SEND_SIGNALED;
    read.wr.rdma.remote_addr = remote.address;
    read.wr.rdma.rkey = remote.rkey;
    ibv_send_wr* bad_send = nullptr;
    trace::post_send(connection.qp(), &read);  // --trace records the WR (else: nothing)
    check_ibv(ibv_post_send(connection.qp(), &read, &bad_send), "ibv_post_send(RDMA_READ)");
    connection.wait_for_completion("RDMA READ");
    // #endregion post-read

    // The completion means the data is in our buffer: check every byte.
    auto mismatch = find_pattern_mismatch(destination.bytes(), kSeed);
    if (mismatch) {
        connection.disconnect();
        fmt::print("client: data check FAILED: byte {} of {} differs from the server's buffer\n",
                   *mismatch, destination.size());
        return 1;
    }
    fmt::print(
        "client: verified {} bytes fetched with one RDMA READ; the server's CPU was not involved\n",
        destination.size());

    // #region fence
    // Relay what a READ fetches, with no CPU step between: a READ into `destination`, then a
    // SEND gathered from `destination`, posted as one list. The NIC may start the SEND before the
    // READ's response has landed, and gather stale bytes. IBV_SEND_FENCE on the SEND holds it
    // until every earlier READ and atomic on this QP has completed. (A READ after a WRITE needs
    // no fence: the responder executes one QP's requests in order.)
    for (bool fence : {false, true}) {
        std::ranges::fill(destination.bytes(), std::byte{0});  // stale = zeros: easy to tell
        ibv_send_wr relay_read = read;
        ibv_send_wr relay_send{};
        relay_read.wr_id = fence ? 12 : 10;
        relay_read.next = &relay_send;
        relay_send.wr_id = relay_read.wr_id + 1;
        relay_send.sg_list = &sge;  // the READ's destination is the SEND's source
        relay_send.num_sge = 1;
        relay_send.opcode = IBV_WR_SEND;
        relay_send.send_flags = IBV_SEND_SIGNALED | (fence ? IBV_SEND_FENCE : 0);
        trace::post_send(connection.qp(), &relay_read);
        check_ibv(ibv_post_send(connection.qp(), &relay_read, &bad_send),
                  "ibv_post_send(RDMA_READ, SEND)");
        connection.wait_for_completion("relay RDMA READ");
        connection.wait_for_completion("relay SEND");
        fmt::print(
            "client: [fence] READ + SEND of what it fetched, posted together{}: both "
            "completed\n",
            fence ? ", IBV_SEND_FENCE on the SEND" : " (no fence)");
    }
    // #endregion fence
    connection.disconnect();
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("rdma-read", [&] {
        CommandLine cli{"RDMA READ: the client reads the server's registered buffer", "rdma-read"};
        ConnectionOptions options;
        cli.add_connection_options(options);
        cli.parse_or_exit(argc, argv);
        return options.server ? run_server(options) : run_client(options);
    });
}
