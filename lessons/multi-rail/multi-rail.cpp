// Lesson: multi-rail — one transfer spread over two rails (two NICs, each its own RDMA device
// and link), as transfer engines move a KV cache: the target's buffer is registered on each
// rail's device (a key per rail), the client cuts its buffer into slices and WRITEs them round-
// robin over both QPs, and only once EVERY slice has completed, on both rails, it tells the
// target with a WRITE WITH IMMEDIATE of no bytes. Sooner would be wrong: two QPs do not order each
// other, so a notice sent on rail 1 could overtake rail 2's last slice.
// Run: multi-rail server | multi-rail client ADDR [--rail2 ADDR2] [-s SIZE] [--slice SIZE]
// (ADDR2, the server's address on its second rail; without it both rails are one device, which
// shows the calls but not two links.)
#include "rdmalab/codec.hpp"
#include "rdmalab/connection.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/private_data.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

using namespace rdmalab;

namespace {

constexpr std::uint64_t kSeed = 0x4b56;         // "KV": both sides compute the same pattern
constexpr std::uint32_t kInFlightPerRail = 16;  // slices posted and not yet completed, per rail
constexpr std::uint64_t kNotification = UINT64_MAX;  // the notice's wr_id; a slice's is its index

struct Options : ConnectionOptions {
    std::string rail2_address;  // client: the server's address on rail 2
    std::string slice = "64K";
};

int run_server(const Options& options) {
    // One listener; the client connects once per rail, to the server's address on that rail,
    // and rdma_cm gives each connection the device of the address it arrived on.
    Listener listener(options);
    Buffer target(options.size);  // zeros: a slice that never landed cannot pass the check
    std::vector<Connection> rails;
    rails.reserve(2);
    std::vector<MemoryRegion> target_mrs;
    for (std::size_t r = 0; r < 2; ++r) {
        rails.push_back(listener.next_client());
        rails[r].create_queues({.send = 1, .recv = 1, .completions = 2});
        rails[r].require_size_fits(options.size);
        // #region register-per-rail
        // The same bytes, registered once per rail: each rail is its own device with its own
        // protection domain, so each has its own MR and rkey. The client may write, not read.
        target_mrs.emplace_back(ibv_reg_mr(rails[r].pd(), target.data(), target.size(),
                                           IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
        check_ptr(target_mrs[r].get(), "ibv_reg_mr(target, rail)");
        // #endregion register-per-rail
        if (r == 0) {
            // The notice is a WRITE WITH IMMEDIATE of no bytes: it consumes a receive, which
            // needs no buffer. Posted on rail 1, where the client sends it, before accepting.
            ibv_recv_wr receive{.wr_id = 1, .next = nullptr, .sg_list = nullptr, .num_sge = 0};
            ibv_recv_wr* bad_receive = nullptr;
            check_ibv(ibv_post_recv(rails[0].qp(), &receive, &bad_receive),
                      "ibv_post_recv(notice)");
        }
        auto advertisement =
            encode_remote_buffer({.address = reinterpret_cast<std::uintptr_t>(target.data()),
                                  .rkey = target_mrs[r]->rkey,
                                  .length = static_cast<std::uint32_t>(target.size()),
                                  .use = BufferUse::kWriteTarget});
        rails[r].accept(advertisement);
        fmt::print("server: rail {} connected over {}; rkey {:#x}\n", r + 1,
                   rails[r].path_description(), target_mrs[r]->rkey);
    }

    // #region notice
    const ibv_wc notice = rails[0].wait_for_completion("the client's notice");
    if (notice.opcode != IBV_WC_RECV_RDMA_WITH_IMM || (notice.wc_flags & IBV_WC_WITH_IMM) == 0)
        fail("the notice came without an immediate");
    const std::uint32_t written = from_be32(notice.imm_data);  // the peer's claim: checked
    if (written == 0 || written > target.size())
        fail(fmt::format("the client claims {} bytes written into a {}-byte buffer", written,
                         target.size()));
    // Every slice completed at the client before the notice was sent: all bytes are here (in host
    // memory; a GPU's may need a flush first, as NCCL's READ after its receives does).
    if (auto bad = find_pattern_mismatch(target.bytes().first(written), kSeed)) {
        fmt::print("server: data check FAILED at byte {} of {}\n", *bad, written);
        return 1;
    }
    // #endregion notice
    fmt::print("server: the notice arrived on rail 1; all {} bytes verified\n", written);
    for (Connection& rail : rails) rail.wait_for_disconnect();
    return 0;
}

// Slices done per rail, and the bytes they carried.
struct RailCount {
    std::uint32_t in_flight = 0;
    std::uint64_t bytes = 0;
};

int run_client(const Options& options) {
    const std::size_t slice = *parse_size(options.slice);
    Options rail2 = options;
    if (!options.rail2_address.empty()) rail2.server_address = options.rail2_address;
    std::array<Connection, 2> rails{Connection::resolve(options), Connection::resolve(rail2)};
    Buffer source(options.size);
    fill_pattern(source.bytes(), kSeed);

    // The source, registered on each rail's device; only our NICs read it (access 0).
    std::vector<MemoryRegion> source_mrs;
    std::vector<RemoteBuffer> remotes;
    for (std::size_t r = 0; r < rails.size(); ++r) {
        rails[r].create_queues(
            {.send = kInFlightPerRail + 1, .recv = 1, .completions = kInFlightPerRail + 2});
        rails[r].require_size_fits(options.size);
        source_mrs.emplace_back(ibv_reg_mr(rails[r].pd(), source.data(), source.size(), 0));
        check_ptr(source_mrs[r].get(), "ibv_reg_mr(source, rail)");
        // The server's address and rkey for this rail came from the network: validated.
        remotes.push_back(decode_remote_buffer_or_throw(rails[r].connect(), BufferUse::kWriteTarget,
                                                        source.size()));
        fmt::print("client: rail {} connected over {}; the server's rkey {:#x}\n", r + 1,
                   rails[r].path_description(), remotes[r].rkey);
    }

    // A rail that never answers is given up on at the deadline: rdma_cm's QPs retry forever on
    // Soft-RoCE. (Strict turns: when the next slice's rail is full, the other waits too; an
    // engine gives a slice to whichever rail has room, or finishes it soonest.)
    const auto deadline = std::chrono::steady_clock::now() + options.timeout();
    const std::size_t slices = (source.size() + slice - 1) / slice;
    std::array<RailCount, 2> count{};
    std::size_t next = 0, completed = 0;
    while (completed < slices) {
        // #region slices
        // Slice i goes to rail i % 2, at most kInFlightPerRail slices ahead of the rail's
        // completions; a completion says the target's NIC acknowledged the slice's bytes.
        while (next < slices && count[next % 2].in_flight < kInFlightPerRail) {
            const std::size_t r = next % 2, offset = next * slice;
            ibv_sge sge{
                .addr = reinterpret_cast<std::uintptr_t>(source.data()) + offset,
                .length = static_cast<std::uint32_t>(std::min(slice, source.size() - offset)),
                .lkey = source_mrs[r]->lkey};
            ibv_send_wr write{};
            write.wr_id = next;
            write.sg_list = &sge;
            write.num_sge = 1;
            write.opcode = IBV_WR_RDMA_WRITE;
            write.send_flags = IBV_SEND_SIGNALED;
            write.wr.rdma.remote_addr = remotes[r].address + offset;
            write.wr.rdma.rkey =
                remotes[r].rkey;  // this rail's key: another rail's is invalid here
            ibv_send_wr* bad = nullptr;
            check_ibv(ibv_post_send(rails[r].qp(), &write, &bad), "ibv_post_send(RDMA_WRITE)");
            ++count[r].in_flight;
            count[r].bytes += sge.length;
            ++next;
        }
        // #endregion slices
        if (std::chrono::steady_clock::now() > deadline)
            fail(fmt::format(
                "{} of {} slices completed within {:.1f} s (in flight: rail 1 {}, rail "
                "2 {})",
                completed, slices, options.timeout_s, count[0].in_flight, count[1].in_flight));
        // Whichever rail has a completion first; each rail's CQ is its own.
        for (std::size_t r = 0; r < rails.size(); ++r) {
            ibv_wc wc{};
            const int found = ibv_poll_cq(rails[r].cq(), 1, &wc);
            check_errno(found >= 0, "ibv_poll_cq");
            if (found == 0) continue;
            if (wc.status != IBV_WC_SUCCESS)
                fail(fmt::format("rail {}: slice {} failed: {}", r + 1, wc.wr_id,
                                 ibv_wc_status_str(wc.status)));
            --count[r].in_flight;
            ++completed;
        }
    }

    // #region notify
    // Only now, every slice on both rails acknowledged: the notice, on rail 1. Its immediate
    // carries the byte count; no bytes, so no address or key is checked at the target.
    ibv_send_wr notice{};
    notice.wr_id = kNotification;
    notice.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    notice.send_flags = IBV_SEND_SIGNALED;
    notice.imm_data = to_be32(static_cast<std::uint32_t>(source.size()));
    notice.wr.rdma.remote_addr = remotes[0].address;
    notice.wr.rdma.rkey = remotes[0].rkey;
    ibv_send_wr* bad = nullptr;
    check_ibv(ibv_post_send(rails[0].qp(), &notice, &bad), "ibv_post_send(RDMA_WRITE_WITH_IMM)");
    rails[0].wait_for_completion("the notice");
    // #endregion notify
    for (Connection& rail : rails) rail.disconnect();
    fmt::print(
        "client: {} slices of {} bytes over 2 rails (rail 1: {} bytes, rail 2: {} bytes); "
        "then the notice\n",
        slices, slice, count[0].bytes, count[1].bytes);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("multi-rail", [&] {
        CommandLine cli{"One transfer over two rails, and a notice once every slice has landed",
                        "multi-rail"};
        Options options;
        options.size = 1024 * 1024;
        cli.add_connection_options(options);
        cli.option("--rail2", options.rail2_address,
                   "client: the server's address on its second rail (default: ADDR, one device)");
        cli.option("--slice", options.slice, "bytes per slice (one WRITE)")
            .is_size()
            .show_default();
        cli.parse_or_exit(argc, argv);
        const auto slice = parse_size(options.slice);  // a size, or the parser refused it
        if (!options.server && (*slice == 0 || *slice > options.size)) {
            fmt::print(stderr,
                       "multi-rail: --slice {} must be 1 byte to -s ({} bytes) (run with --help "
                       "for usage)\n",
                       options.slice, options.size);
            return 2;
        }
        return options.server ? run_server(options) : run_client(options);
    });
}
