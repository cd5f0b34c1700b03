// Lesson: rdma-read — the client RDMA-READs the server's buffer; the server only advertises it.
// Run: rdma-read server [-s SIZE] | rdma-read client ADDR [-s SIZE]
#include "rdmalab/connection.hpp"
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

constexpr std::uint64_t kSeed = 0x52;

int run_server(const ConnectionOptions& options) {
    auto connection = Connection::wait_for_client(options);
    connection.create_queues({.send = 1, .recv = 1, .completions = 2});
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

    auto advertisement =
        encode_remote_buffer({.address = reinterpret_cast<std::uintptr_t>(source.data()),
                              .rkey = source_mr->rkey,
                              .length = static_cast<std::uint32_t>(source.size()),
                              .use = BufferUse::kReadSource});
    connection.accept(advertisement);
    fmt::print("server: connected over {}; advertised {} bytes for reading at {:#x}, rkey {:#x}\n",
               connection.path_description(), source.size(),
               reinterpret_cast<std::uintptr_t>(source.data()), source_mr->rkey);

    // Nothing arrives here: the client's READs are served by the NIC. Wait for it to leave.
    connection.wait_for_disconnect();
    fmt::print("server: the client disconnected; it read this buffer without this CPU's help\n");
    return 0;
}

int run_client(const ConnectionOptions& options) {
    auto connection = Connection::resolve(options);
    connection.create_queues({.send = 1, .recv = 1, .completions = 2});
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
    connection.disconnect();
    if (mismatch) {
        fmt::print("client: data check FAILED: byte {} of {} differs from the server's buffer\n",
                   *mismatch, destination.size());
        return 1;
    }
    fmt::print(
        "client: verified {} bytes fetched with one RDMA READ; the server's CPU was not involved\n",
        destination.size());
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
