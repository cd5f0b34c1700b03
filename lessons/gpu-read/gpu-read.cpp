// Lesson: gpu-read — the client RDMA-READs a buffer in the server's GPU memory into its own
// (GPU) memory. A GPU kernel fills the server's source before it is advertised; a GPU kernel
// verifies what arrived. Both sides say which registration path they took and how the READ's
// bytes became visible to the kernel.
// Run: gpu-read server [--mem cuda:0] | gpu-read client ADDR [--mem host|cuda[:N]|rocm[:N]] [-s
// SIZE]
#include "rdmalab/connection.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/gpu/memory.hpp"
#include "rdmalab/gpu/options.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/private_data.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>

#include <cstdint>

using namespace rdmalab;

namespace {

constexpr std::uint64_t kSeed = 0x48;

int run_server(const ConnectionOptions& options, const gpu::MemoryOptions& memory_options) {
    // #region fill-source
    // A kernel writes the pattern into the source on the GPU, before any client is accepted.
    gpu::DeviceMemory source(memory_options.memory, options.size);
    source.fill_pattern(kSeed, source.size());
    // #endregion fill-source
    fmt::print("server: source: {} bytes of {}, filled by {}\n", source.size(),
               source.description(), source.worker());

    auto connection = Connection::wait_for_client(options);
    connection.create_queues({.send = 1, .recv = 1, .completions = 2});
    connection.require_size_fits(options.size);

    // #region register-source
    // Least privilege: the peer may read (REMOTE_READ) and nothing else. The ladder is in
    // gpu/src/registration.cpp; it reports every rung it tried.
    gpu::RegisteredMemory source_mr =
        gpu::register_memory(connection.pd(), source, IBV_ACCESS_REMOTE_READ, memory_options.path);
    for (const std::string& line : source_mr.report()) fmt::print("server: {}\n", line);
    // The peer may READ as soon as it has the rkey: the kernel must be finished (and, staging,
    // its bytes copied into the bounce buffer) BEFORE the buffer is advertised.
    source_mr.before_nic_reads(source.size());
    // #endregion register-source

    auto advertisement = encode_remote_buffer({.address = source_mr.nic_address(),
                                               .rkey = source_mr.rkey(),
                                               .length = static_cast<std::uint32_t>(source.size()),
                                               .use = BufferUse::kReadSource});
    connection.accept(advertisement);
    fmt::print(
        "server: connected over {}; advertised {} bytes for reading at {:#x}, rkey {:#x} ({})\n",
        connection.path_description(), source.size(), source_mr.nic_address(), source_mr.rkey(),
        gpu::path_name(source_mr.path()));

    // Nothing arrives here: the client's READ is served by the NIC. Wait for it to leave.
    connection.wait_for_disconnect();
    fmt::print(
        "server: the client disconnected; it read {} bytes of {} without this CPU's help (path: "
        "{})\n",
        source.size(), source.description(), gpu::path_name(source_mr.path()));
    return 0;
}

int run_client(const ConnectionOptions& options, const gpu::MemoryOptions& memory_options) {
    // The destination starts as zeros, so a READ that never happened cannot pass the check.
    gpu::DeviceMemory destination(memory_options.memory, options.size);
    fmt::print("client: destination: {} bytes of {}\n", destination.size(),
               destination.description());

    auto connection = Connection::resolve(options);
    connection.create_queues({.send = 1, .recv = 1, .completions = 2});
    connection.require_size_fits(options.size);

    // Our own NIC writes the READ response into it: LOCAL_WRITE.
    gpu::RegisteredMemory destination_mr = gpu::register_memory(
        connection.pd(), destination, IBV_ACCESS_LOCAL_WRITE, memory_options.path);
    for (const std::string& line : destination_mr.report()) fmt::print("client: {}\n", line);

    auto private_data = connection.connect();
    RemoteBuffer remote =
        decode_remote_buffer_or_throw(private_data, BufferUse::kReadSource, destination.size());
    fmt::print("client: connected over {}; server buffer {} bytes at {:#x}, rkey {:#x}\n",
               connection.path_description(), remote.length, remote.address, remote.rkey);

    // #region post-read
    // The RDMA READ: remote address + rkey → the address our NIC knows the destination by.
    ibv_sge sge{.addr = destination_mr.nic_address(),
                .length = static_cast<std::uint32_t>(destination.size()),
                .lkey = destination_mr.lkey()};
    ibv_send_wr read{};
    read.wr_id = 1;
    read.sg_list = &sge;
    read.num_sge = 1;
    read.opcode = IBV_WR_RDMA_READ;
    read.send_flags = IBV_SEND_SIGNALED;
    read.wr.rdma.remote_addr = remote.address;
    read.wr.rdma.rkey = remote.rkey;
    ibv_send_wr* bad_send = nullptr;
    check_ibv(ibv_post_send(connection.qp(), &read, &bad_send), "ibv_post_send(RDMA_READ)");
    connection.wait_for_completion("RDMA READ");
    // #endregion post-read

    // #region make-visible
    // The completion says the NIC has written the response. For a kernel to read it: staging
    // queues the bounce → GPU copy ahead of the kernel on the stream; a direct GPU write may
    // need cuFlushGPUDirectRDMAWrites (unless the device orders such writes for its kernels).
    fmt::print("client: {}\n", destination_mr.after_nic_writes(destination.size()));
    auto mismatch = destination.find_mismatch(kSeed, destination.size());
    // #endregion make-visible
    connection.disconnect();
    if (mismatch) {
        fmt::print("client: data check FAILED: byte {} of {} differs from the server's buffer\n",
                   *mismatch, destination.size());
        return 1;
    }
    fmt::print(
        "client: verified {} bytes fetched with one RDMA READ, checked by {} in {} (path: {})\n",
        destination.size(), destination.worker(), destination.description(),
        gpu::path_name(destination_mr.path()));
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("gpu-read", [&] {
        CommandLine cli{"RDMA READ of GPU memory: dma-buf, peer memory or host staging",
                        "gpu-read"};
        ConnectionOptions options;
        gpu::MemoryOptions memory_options;
        cli.add_connection_options(options);
        gpu::add_memory_options(cli, memory_options);
        cli.parse_or_exit(argc, argv);
        return options.server ? run_server(options, memory_options)
                              : run_client(options, memory_options);
    });
}
