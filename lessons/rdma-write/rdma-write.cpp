// Lesson: rdma-write — the client RDMA-WRITEs into the server's memory; the server's CPU takes
// no part until a final SEND says "done". Run: rdma-write server | rdma-write client ADDR [-s SIZE]
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

using namespace rdmalab;

namespace {

constexpr std::uint64_t kSeed = 0x57;  // both sides compute the same pattern from it

int run_server(const ConnectionOptions& options) {
    auto connection = Connection::wait_for_client(options);
    connection.create_queues({.send = 1, .recv = 1, .completions = 2});
    connection.require_size_fits(options.size);

    // #region register-and-advertise
    // The target buffer starts as zeros, so a write that never happened cannot pass the check.
    // Least privilege: the peer may write it (REMOTE_WRITE, which requires LOCAL_WRITE) but not
    // read it.
    Buffer target(options.size);
    MemoryRegion target_mr{ibv_reg_mr(connection.pd(), target.data(), target.size(),
                                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)};
    check_ptr(target_mr.get(), "ibv_reg_mr(target)");

    // A receive for the client's 4-byte "done" message, posted BEFORE accepting: a SEND that
    // finds no receive posted is refused (RNR) and retried.
    ControlWord done(connection.pd(), ControlWord::Direction::kReceive);
    done.post_receive(connection.qp(), 1);

    // Tell the client where to write: address, rkey and length, in the accept's private data.
    auto advertisement =
        encode_remote_buffer({.address = reinterpret_cast<std::uintptr_t>(target.data()),
                              .rkey = target_mr->rkey,
                              .length = static_cast<std::uint32_t>(target.size()),
                              .use = BufferUse::kWriteTarget});
    connection.accept(advertisement);
    // #endregion register-and-advertise
    fmt::print("server: connected over {}; advertised {} bytes at {:#x}, rkey {:#x}\n",
               connection.path_description(), target.size(),
               reinterpret_cast<std::uintptr_t>(target.data()), target_mr->rkey);

    // #region done-after-write
    // RC delivers in order: once the "done" SEND has arrived, the WRITE before it has landed.
    const std::uint32_t written = done.received_value(
        connection.wait_for_completion("the client's done message"), "the done message");
    if (written == 0 || written > target.size())  // a peer's claim is checked before use
        fail(fmt::format("the client claims it wrote {} bytes into a {}-byte buffer", written,
                         target.size()));
    // #endregion done-after-write

    auto mismatch = find_pattern_mismatch(target.bytes().first(written), kSeed);
    if (mismatch) {
        fmt::print("server: data check FAILED: byte {} of {} is not what the client wrote\n",
                   *mismatch, written);
        return 1;
    }
    if (!all_zero(target.bytes().subspan(written))) {
        fmt::print("server: data check FAILED: bytes beyond the {} written were changed\n",
                   written);
        return 1;
    }
    fmt::print(
        "server: verified {} bytes placed by the client's RDMA WRITE; this CPU never touched "
        "them\n",
        written);
    trace::step(fmt::format("server verified {} bytes", written));
    connection.wait_for_disconnect();
    return 0;
}

int run_client(const ConnectionOptions& options) {
    auto connection = Connection::resolve(options);
    connection.create_queues({.send = 2, .recv = 1, .completions = 4});
    connection.require_size_fits(options.size);

    // #region register-source
    // The source is only read by our own NIC: access flags 0 (local read) are enough.
    Buffer source(options.size);
    fill_pattern(source.bytes(), kSeed);
    MemoryRegion source_mr{ibv_reg_mr(connection.pd(), source.data(), source.size(), 0)};
    check_ptr(source_mr.get(), "ibv_reg_mr(source)");
    // #endregion register-source
    ControlWord done(connection.pd(), ControlWord::Direction::kSend);

    // The server's private data says where to write. It came from the network: validate it.
    auto private_data = connection.connect();
    RemoteBuffer remote =
        decode_remote_buffer_or_throw(private_data, BufferUse::kWriteTarget, source.size());
    fmt::print("client: connected over {}; server buffer {} bytes at {:#x}, rkey {:#x}\n",
               connection.path_description(), remote.length, remote.address, remote.rkey);

    // #region post-write
    // The RDMA WRITE: local buffer (sge) → remote address + rkey. One signaled completion.
    ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(source.data()),
                .length = static_cast<std::uint32_t>(source.size()),
                .lkey = source_mr->lkey};
    ibv_send_wr write{};
    write.wr_id = 1;
    write.sg_list = &sge;
    write.num_sge = 1;
    write.opcode = IBV_WR_RDMA_WRITE;
    write.send_flags = IBV_SEND_SIGNALED;
    write.wr.rdma.remote_addr = remote.address;
    write.wr.rdma.rkey = remote.rkey;
    ibv_send_wr* bad_send = nullptr;
    trace::post_send(connection.qp(), &write);  // --trace records the WR (else: nothing)
    check_ibv(ibv_post_send(connection.qp(), &write, &bad_send), "ibv_post_send(RDMA_WRITE)");
    connection.wait_for_completion("RDMA WRITE");
    // #endregion post-write
    fmt::print("client: RDMA WRITE of {} bytes completed\n", source.size());

    // Then the "done" SEND carrying the byte count (big-endian), so the server knows to look.
    done.post_send(connection.qp(), static_cast<std::uint32_t>(source.size()), 2);
    connection.wait_for_completion("done message");
    connection.disconnect();
    fmt::print("client: wrote {} bytes into the server's memory with one RDMA WRITE\n",
               source.size());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("rdma-write", [&] {
        CommandLine cli{"RDMA WRITE: the client writes into the server's registered buffer",
                        "rdma-write"};
        ConnectionOptions options;
        cli.add_connection_options(options);
        cli.parse_or_exit(argc, argv);
        return options.server ? run_server(options) : run_client(options);
    });
}
