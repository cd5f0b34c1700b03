// Lesson: write-imm — RDMA WRITE WITH IMMEDIATE: one-sided data placement that also tells the
// server, through its receive queue, which part of its buffer was written; the server's reply,
// a SEND WITH IMMEDIATE, shows the two-sided variant (payload in the receive buffer). Run:
// write-imm server [-s PART] [-n PARTS] | write-imm client ADDR [-s PART] [-n PARTS]
#include "rdmalab/codec.hpp"
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
#include <limits>
#include <optional>
#include <vector>

using namespace rdmalab;

namespace {

struct WriteImmOptions : ConnectionOptions {
    std::uint32_t parts = 4;     // -n: how many writes, each into its own part of the buffer
    bool bad_immediate = false;  // client: an out-of-range immediate, for the server to refuse
};

// Part i holds size bytes of pattern seed kSeed + i, so a part written to the wrong place fails.
constexpr std::uint64_t kSeed = 0x1000;

std::size_t buffer_size(const WriteImmOptions& options) {
    // The codec's length field is 32 bits; dividing first cannot overflow.
    if (options.size > std::numeric_limits<std::uint32_t>::max() / options.parts)
        fail(fmt::format("{} parts of {} bytes do not fit one advertised buffer (at most {} bytes)",
                         options.parts, options.size, std::numeric_limits<std::uint32_t>::max()));
    return options.size * options.parts;
}

int run_server(const WriteImmOptions& options) {
    auto connection = Connection::wait_for_client(options);
    // Every WRITE WITH IMMEDIATE consumes one receive: one per part, posted in advance.
    connection.create_queues({.send = 1, .recv = options.parts, .completions = options.parts + 1});
    const std::size_t total = buffer_size(options);
    connection.require_size_fits(total);

    // Zeros to start with, so a part nobody wrote cannot pass. The peer writes here (REMOTE_WRITE,
    // which requires LOCAL_WRITE); it may not read.
    Buffer target(total);
    MemoryRegion target_mr{ibv_reg_mr(connection.pd(), target.data(), target.size(),
                                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)};
    check_ptr(target_mr.get(), "ibv_reg_mr(target)");

    // #region zero-length-receives
    // Zero-length receives: num_sge = 0 and no buffer. The payload of a WRITE WITH IMMEDIATE goes
    // to the RDMA address it names, never into the receive; the receive only carries the 32-bit
    // immediate into a completion. (A SEND with a payload arriving here would fail: no room.)
    std::vector<ibv_recv_wr> receives(options.parts);
    for (std::uint32_t i = 0; i < options.parts; ++i)
        receives[i] = {.wr_id = i,
                       .next = i + 1 < options.parts ? &receives[i + 1] : nullptr,
                       .sg_list = nullptr,
                       .num_sge = 0};
    ibv_recv_wr* bad_receive = nullptr;
    trace::post_recv(connection.qp(), receives.data());  // --trace records the WR (else: nothing)
    check_ibv(ibv_post_recv(connection.qp(), receives.data(), &bad_receive), "ibv_post_recv");
    // #endregion zero-length-receives

    auto advertisement =
        encode_remote_buffer({.address = reinterpret_cast<std::uintptr_t>(target.data()),
                              .rkey = target_mr->rkey,
                              .length = static_cast<std::uint32_t>(target.size()),
                              .use = BufferUse::kWriteTarget});
    connection.accept(advertisement);
    fmt::print(
        "server: connected over {}; {} parts of {} bytes advertised, {} zero-length "
        "receives posted\n",
        connection.path_description(), options.parts, options.size, options.parts);

    // #region read-immediate
    // This CPU learns of each write only here, from the receive CQ. The immediate is a number the
    // client chose (the part it wrote): it came from the network, so it is checked before use.
    std::vector<bool> written(options.parts, false);
    for (std::uint32_t k = 0; k < options.parts; ++k) {
        ibv_wc wc = connection.wait_for_completion("a write notification from the client");
        if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || !(wc.wc_flags & IBV_WC_WITH_IMM))
            fail(fmt::format(
                "completion {}: expected RECV_RDMA_WITH_IMM, got opcode {}, flags {:#x}", k,
                static_cast<int>(wc.opcode), wc.wc_flags));
        // imm_data is defined as big-endian (__be32): it travels in the packet as the client's
        // to_be32 (the codec's htonl) made it, so hosts of either byte order read the same number
        // with from_be32 (its ntohl).
        const std::uint32_t part = from_be32(wc.imm_data);
        if (part >= options.parts)
            fail(fmt::format("the client's immediate {} is out of range: the buffer has {} parts",
                             part, options.parts));
        if (written[part]) fail(fmt::format("the client announced part {} twice", part));
        // byte_len of a WRITE WITH IMMEDIATE is the length the write placed, not a receive length.
        if (wc.byte_len != options.size)
            fail(fmt::format("part {}: the write placed {} bytes, expected {}", part, wc.byte_len,
                             options.size));
        written[part] = true;
        // #endregion read-immediate
        std::span<const std::byte> bytes =
            target.bytes().subspan(part * options.size, options.size);
        if (auto mismatch = find_pattern_mismatch(bytes, kSeed + part)) {
            fmt::print("server: data check FAILED: part {} differs at byte {}\n", part, *mismatch);
            return 1;
        }
        fmt::print("server: completion {}: immediate {} (offset {}), byte_len {}, part verified\n",
                   k, part, part * options.size, wc.byte_len);
    }

    // #region send-with-imm
    // The reply is a SEND WITH IMMEDIATE. Unlike a WRITE WITH IMMEDIATE, its payload — the count
    // of verified parts, 4 bytes — lands in the client's posted receive buffer; the immediate
    // (here the number of parts that failed: 0) arrives beside it, in the receive completion.
    Buffer count(4);
    store_be32(count.bytes(), options.parts);
    MemoryRegion count_mr{ibv_reg_mr(connection.pd(), count.data(), count.size(), 0)};
    check_ptr(count_mr.get(), "ibv_reg_mr(count)");
    ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(count.data()),
                .length = 4,
                .lkey = count_mr->lkey};
    ibv_send_wr send{};
    send.wr_id = options.parts;
    send.sg_list = &sge;
    send.num_sge = 1;
    send.opcode = IBV_WR_SEND_WITH_IMM;
    send.send_flags = IBV_SEND_SIGNALED;
    send.imm_data = to_be32(0);
    ibv_send_wr* bad_send = nullptr;
    trace::post_send(connection.qp(), &send);  // --trace records the WR (else: nothing)
    check_ibv(ibv_post_send(connection.qp(), &send, &bad_send), "ibv_post_send(SEND_WITH_IMM)");
    // #endregion send-with-imm
    connection.wait_for_completion("the reply");
    // The side that sends last disconnects first: a client that hung up on receiving the reply
    // could beat the reply's ACK here, and the server would see its peer gone mid-send.
    connection.disconnect();
    fmt::print(
        "server: verified {} parts, each found through its immediate in a receive completion\n",
        options.parts);
    return 0;
}

int run_client(const WriteImmOptions& options) {
    auto connection = Connection::resolve(options);
    connection.create_queues({.send = options.parts, .recv = 1, .completions = options.parts + 1});
    const std::size_t total = buffer_size(options);
    connection.require_size_fits(total);

    // Part i of the source is written to part i of the server's buffer. Our NIC only reads it.
    Buffer source(total);
    for (std::uint32_t i = 0; i < options.parts; ++i)
        fill_pattern(source.bytes().subspan(i * options.size, options.size), kSeed + i);
    MemoryRegion source_mr{ibv_reg_mr(connection.pd(), source.data(), source.size(), 0)};
    check_ptr(source_mr.get(), "ibv_reg_mr(source)");

    // The server's reply arrives by SEND: its receive is posted before connecting.
    ControlWord reply(connection.pd(), ControlWord::Direction::kReceive);
    reply.post_receive(connection.qp(), options.parts);

    auto private_data = connection.connect();
    RemoteBuffer remote =
        decode_remote_buffer_or_throw(private_data, BufferUse::kWriteTarget, total);
    fmt::print("client: connected over {}; server buffer {} bytes at {:#x}, rkey {:#x}\n",
               connection.path_description(), remote.length, remote.address, remote.rkey);

    // #region post-write-imm
    // One WRITE WITH IMMEDIATE per part, last part first: the server cannot rely on arrival
    // order, only on the immediate, to know which part each notification is about.
    for (std::uint32_t k = 0; k < options.parts; ++k) {
        const std::uint32_t part = options.parts - 1 - k;
        ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(source.data() + part * options.size),
                    .length = static_cast<std::uint32_t>(options.size),
                    .lkey = source_mr->lkey};
        ibv_send_wr write{};
        write.wr_id = part;
        write.sg_list = &sge;
        write.num_sge = 1;
        write.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
        write.send_flags = IBV_SEND_SIGNALED;
        write.wr.rdma.remote_addr = remote.address + part * options.size;
        write.wr.rdma.rkey = remote.rkey;
        // 32 bits of our choosing for the server's receive completion, in network byte order.
        const bool corrupt = options.bad_immediate && k + 1 == options.parts;
        write.imm_data = to_be32(corrupt ? options.parts : part);
        ibv_send_wr* bad_send = nullptr;
        trace::post_send(connection.qp(), &write);  // --trace records the WR (else: nothing)
        check_ibv(ibv_post_send(connection.qp(), &write, &bad_send),
                  "ibv_post_send(RDMA_WRITE_WITH_IMM)");
    }
    // #endregion post-write-imm

    std::uint32_t writes_done = 0;
    std::optional<std::uint32_t> verified;
    std::uint32_t failed_parts = 0;
    while (writes_done < options.parts || !verified) {
        ibv_wc wc = connection.wait_for_completion("the writes and the server's reply");
        if (wc.opcode == IBV_WC_RDMA_WRITE) {
            ++writes_done;
            continue;
        }
        // The reply: a 4-byte payload in our receive buffer and, with IBV_WC_WITH_IMM, the
        // immediate in the completion.
        verified = reply.received_value(wc, "the server's reply");
        if (!(wc.wc_flags & IBV_WC_WITH_IMM))
            fail("the server's reply carries no immediate (expected SEND WITH IMMEDIATE)");
        failed_parts = from_be32(wc.imm_data);
    }
    connection.wait_for_disconnect();  // the server hangs up once its reply has completed
    if (*verified != options.parts || failed_parts != 0)
        fail(fmt::format("the server verified {} parts and reports {} failed; {} were written",
                         *verified, failed_parts, options.parts));
    fmt::print(
        "client: the reply came as a SEND WITH IMMEDIATE: payload {} (in the receive "
        "buffer), immediate {} (in the completion)\n",
        *verified, failed_parts);
    fmt::print(
        "client: wrote {} parts of {} bytes with RDMA WRITE WITH IMMEDIATE, last part first; "
        "the server verified all of them from their immediates\n",
        options.parts, options.size);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("write-imm", [&] {
        CommandLine cli{"RDMA WRITE WITH IMMEDIATE: one-sided writes the server hears about",
                        "write-imm"};
        WriteImmOptions options;
        cli.add_connection_options(options);
        cli.option("-n,--iters", options.parts, "number of writes (parts of -s bytes each)")
            .range(1, 256)
            .show_default();
        cli.flag(
            "--bad-immediate", options.bad_immediate,
            "client: the last write carries an out-of-range immediate (the server must refuse it)");
        cli.parse_or_exit(argc, argv);
        return options.server ? run_server(options) : run_client(options);
    });
}
