// Lesson: gpu-write — the client RDMA-WRITEs into a buffer in the server's GPU memory. A GPU
// kernel fills the client's source, a GPU kernel verifies the server's destination, and both
// sides say how the NIC reached the memory (dma-buf, peer memory or host staging) and how the
// NIC's bytes became visible to the kernel.
// Run: gpu-write server [--mem cuda:0] | gpu-write client ADDR [--mem host|cuda[:N]|rocm[:N]] [-s
// SIZE]
#include "rdmalab/connection.hpp"
#include "rdmalab/control_word.hpp"
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

constexpr std::uint64_t kSeed = 0x47;  // both sides compute the same pattern from it

int run_server(const ConnectionOptions& options, const gpu::MemoryOptions& memory_options) {
    // #region allocate-target
    // The target lives where --mem says, zero-filled so a write that never happened cannot
    // pass. It is allocated before a client is accepted: a machine without that GPU says so
    // at once (one line, exit 1) instead of after a connection.
    gpu::DeviceMemory target(memory_options.memory, options.size);
    // #endregion allocate-target
    fmt::print("server: target: {} bytes of {}\n", target.size(), target.description());

    auto connection = Connection::wait_for_client(options);
    connection.create_queues({.send = 1, .recv = 1, .completions = 2});
    connection.require_size_fits(options.size);

    // #region register-target
    // Least privilege, as for host memory: the peer may write (REMOTE_WRITE, which requires
    // LOCAL_WRITE), not read. register_memory walks the ladder — dma-buf (ibv_reg_dmabuf_mr),
    // peer memory (ibv_reg_mr on the GPU address), staging (ibv_reg_mr on pinned host memory) —
    // and reports every rung: read gpu/src/registration.cpp once.
    gpu::RegisteredMemory target_mr =
        gpu::register_memory(connection.pd(), target,
                             IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, memory_options.path);
    for (const std::string& line : target_mr.report()) fmt::print("server: {}\n", line);
    // #endregion register-target

    ControlWord done(connection.pd(), ControlWord::Direction::kReceive);
    done.post_receive(connection.qp(), 1);

    // The address the client must use is the one the NIC knows the memory by: the GPU
    // address (dma-buf, peer memory) or the bounce buffer's (staging).
    auto advertisement = encode_remote_buffer({.address = target_mr.nic_address(),
                                               .rkey = target_mr.rkey(),
                                               .length = static_cast<std::uint32_t>(target.size()),
                                               .use = BufferUse::kWriteTarget});
    connection.accept(advertisement);
    fmt::print("server: connected over {}; advertised {} bytes at {:#x}, rkey {:#x} ({})\n",
               connection.path_description(), target.size(), target_mr.nic_address(),
               target_mr.rkey(), gpu::path_name(target_mr.path()));

    const std::uint32_t written = done.received_value(
        connection.wait_for_completion("the client's done message"), "the done message");
    if (written == 0 || written > target.size())  // a peer's claim is checked before use
        fail(fmt::format("the client claims it wrote {} bytes into a {}-byte buffer", written,
                         target.size()));

    // #region make-visible
    // RC order: the done SEND arrived after the WRITE, so the bytes are in the memory the NIC
    // wrote. That is not yet "visible to a kernel": staging must copy the bounce buffer into
    // the GPU (queued on the stream, ahead of the kernel: stream order is enough); a direct
    // write into GPU memory may need cuFlushGPUDirectRDMAWrites unless the device orders
    // GPUDirect RDMA writes for its own kernels.
    fmt::print("server: {}\n", target_mr.after_nic_writes(written));
    // A kernel, queued after that, checks every byte on the device: the pattern below
    // `written`, zeros above it.
    auto mismatch = target.find_mismatch(kSeed, written);
    // #endregion make-visible
    if (mismatch) {
        fmt::print(
            "server: data check FAILED: byte {} of the {}-byte buffer is wrong ({} bytes were "
            "written)\n",
            *mismatch, target.size(), written);
        return 1;
    }
    fmt::print(
        "server: verified {} bytes placed by the client's RDMA WRITE, checked by {} in {} (path: "
        "{})\n",
        written, target.worker(), target.description(), gpu::path_name(target_mr.path()));
    connection.wait_for_disconnect();
    return 0;
}

int run_client(const ConnectionOptions& options, const gpu::MemoryOptions& memory_options) {
    // #region fill-source
    // A kernel writes the pattern into the source on the GPU; nothing on the CPU touches it.
    gpu::DeviceMemory source(memory_options.memory, options.size);
    source.fill_pattern(kSeed, source.size());
    // #endregion fill-source
    fmt::print("client: source: {} bytes of {}, filled by {}\n", source.size(),
               source.description(), source.worker());

    auto connection = Connection::resolve(options);
    connection.create_queues({.send = 2, .recv = 1, .completions = 4});
    connection.require_size_fits(options.size);

    // Only our own NIC reads the source: access flags 0 (local read) are enough.
    gpu::RegisteredMemory source_mr =
        gpu::register_memory(connection.pd(), source, 0, memory_options.path);
    for (const std::string& line : source_mr.report()) fmt::print("client: {}\n", line);
    ControlWord done(connection.pd(), ControlWord::Direction::kSend);

    auto private_data = connection.connect();
    RemoteBuffer remote =
        decode_remote_buffer_or_throw(private_data, BufferUse::kWriteTarget, source.size());
    fmt::print("client: connected over {}; server buffer {} bytes at {:#x}, rkey {:#x}\n",
               connection.path_description(), remote.length, remote.address, remote.rkey);

    // #region post-write
    // The kernel that filled the source is queued on a GPU stream; the NIC reads memory, not
    // that queue. before_nic_reads waits for the GPU (and, staging, copies device → bounce).
    source_mr.before_nic_reads(source.size());
    ibv_sge sge{.addr = source_mr.nic_address(),
                .length = static_cast<std::uint32_t>(source.size()),
                .lkey = source_mr.lkey()};
    ibv_send_wr write{};
    write.wr_id = 1;
    write.sg_list = &sge;
    write.num_sge = 1;
    write.opcode = IBV_WR_RDMA_WRITE;
    write.send_flags = IBV_SEND_SIGNALED;
    write.wr.rdma.remote_addr = remote.address;
    write.wr.rdma.rkey = remote.rkey;
    ibv_send_wr* bad_send = nullptr;
    check_ibv(ibv_post_send(connection.qp(), &write, &bad_send), "ibv_post_send(RDMA_WRITE)");
    connection.wait_for_completion("RDMA WRITE");
    // #endregion post-write

    done.post_send(connection.qp(), static_cast<std::uint32_t>(source.size()), 2);
    connection.wait_for_completion("done message");
    connection.disconnect();
    fmt::print(
        "client: wrote {} bytes from {} into the server's memory with one RDMA WRITE (path: {})\n",
        source.size(), source.description(), gpu::path_name(source_mr.path()));
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("gpu-write", [&] {
        CommandLine cli{"RDMA WRITE into GPU memory: dma-buf, peer memory or host staging",
                        "gpu-write"};
        ConnectionOptions options;
        gpu::MemoryOptions memory_options;
        cli.add_connection_options(options);
        gpu::add_memory_options(cli, memory_options);
        cli.parse_or_exit(argc, argv);
        return options.server ? run_server(options, memory_options)
                              : run_client(options, memory_options);
    });
}
