// Lesson: send-invalidate — the peer revokes the key it was given: the target side binds a type 2
// memory window over its buffer and hands out the window's rkey; the initiator RDMA-WRITEs
// through it, then sends SEND WITH INVALIDATE naming that rkey. The target's receive completion
// says which rkey was invalidated (IBV_WC_WITH_INV, invalidated_rkey), and a second WRITE with
// the old rkey is refused (remote access error). The one-message "done, and close the door"
// that storage protocols (NVMe-oF, iSER) use. One process, two RC QPs connected to each other.
// Run: send-invalidate [-s SIZE] [--timeout S]
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/port_address.hpp"
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/verbs.hpp"
#include "rdmalab/verbs_names.hpp"

#include <fmt/core.h>

#include <chrono>
#include <cstdint>
#include <string>

using namespace rdmalab;

namespace {

constexpr std::uint64_t kSeed = 0x1d;

struct Options {
    std::string device;
    std::size_t size = 4096;
    double timeout_s = 5;
};

// Posts one WR on qp; the caller waits for its completion.
void post(ibv_qp* qp, ibv_send_wr& wr, const char* what) {
    ibv_send_wr* bad = nullptr;
    check_ibv(ibv_post_send(qp, &wr, &bad), what);
}

int run(const Options& options) {
    const auto timeout = to_milliseconds(options.timeout_s);
    Context context = open_device(options.device);
    const PortAddress local = choose_port_address(context.get(), 1, -1);
    ibv_device_attr device{};
    check_ibv(ibv_query_device(context.get(), &device), "ibv_query_device");
    if (device.max_mw <= 0 || !(device.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B))
        fail(
            fmt::format("{} has no type 2B memory windows (max_mw {}): remote invalidation "
                        "needs them",
                        ibv_get_device_name(context->device), device.max_mw));
    ProtectionDomain pd{check_ptr(ibv_alloc_pd(context.get()), "ibv_alloc_pd")};
    CompletionQueue target_cq{
        check_ptr(ibv_create_cq(context.get(), 8, nullptr, nullptr, 0), "ibv_create_cq")};
    CompletionQueue initiator_cq{
        check_ptr(ibv_create_cq(context.get(), 8, nullptr, nullptr, 0), "ibv_create_cq")};
    auto create_qp = [&](ibv_cq* cq) {
        ibv_qp_init_attr init{};
        init.send_cq = init.recv_cq = cq;
        init.qp_type = IBV_QPT_RC;
        init.cap.max_send_wr = init.cap.max_recv_wr = 4;
        init.cap.max_send_sge = init.cap.max_recv_sge = 1;
        return QueuePair{check_ptr(ibv_create_qp(pd.get(), &init), "ibv_create_qp")};
    };
    QueuePair target = create_qp(target_cq.get());
    QueuePair initiator = create_qp(initiator_cq.get());
    // The target grants remote write on its QP (windows need it there); the MR grants none.
    connect_loopback(target.get(), IBV_ACCESS_REMOTE_WRITE, initiator.get(), 0, local);

    // #region bind-window
    // The target's buffer: an MR that only allows windows to be bound over it (MW_BIND), and a
    // type 2 window bound by a work request on the target's QP, granting REMOTE_WRITE.
    Buffer buffer(options.size);
    MemoryRegion buffer_mr{ibv_reg_mr(pd.get(), buffer.data(), buffer.size(),
                                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND)};
    check_ptr(buffer_mr.get(), "ibv_reg_mr(MW_BIND)");
    MemoryWindow window{ibv_alloc_mw(pd.get(), IBV_MW_TYPE_2)};
    check_ptr(window.get(), "ibv_alloc_mw(IBV_MW_TYPE_2)");
    const std::uint32_t rkey = ibv_inc_rkey(window->rkey);
    ibv_send_wr bind{};
    bind.wr_id = 1;
    bind.opcode = IBV_WR_BIND_MW;
    bind.send_flags = IBV_SEND_SIGNALED;
    bind.bind_mw.mw = window.get();
    bind.bind_mw.rkey = rkey;
    bind.bind_mw.bind_info = {.mr = buffer_mr.get(),
                              .addr = reinterpret_cast<std::uintptr_t>(buffer.data()),
                              .length = buffer.size(),
                              .mw_access_flags = IBV_ACCESS_REMOTE_WRITE};
    post(target.get(), bind, "ibv_post_send(BIND_MW)");
    wait_for_completion(target_cq.get(), timeout, "the window bind");
    // #endregion bind-window
    fmt::print("send-invalidate: {}; a type 2 window over {} bytes, rkey {:#x}, REMOTE_WRITE\n",
               local.description, buffer.size(), rkey);

    // A receive for the SEND WITH INVALIDATE: no payload needed, the rkey is in its header.
    ibv_recv_wr receive{.wr_id = 2, .next = nullptr, .sg_list = nullptr, .num_sge = 0};
    ibv_recv_wr* bad_receive = nullptr;
    check_ibv(ibv_post_recv(target.get(), &receive, &bad_receive), "ibv_post_recv");

    // The initiator's data, readable by its own NIC only.
    Buffer source(options.size);
    fill_pattern(source.bytes(), kSeed);
    MemoryRegion source_mr{ibv_reg_mr(pd.get(), source.data(), source.size(), 0)};
    check_ptr(source_mr.get(), "ibv_reg_mr(source)");
    ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(source.data()),
                .length = static_cast<std::uint32_t>(source.size()),
                .lkey = source_mr->lkey};
    ibv_send_wr write{};
    write.wr_id = 3;
    write.sg_list = &sge;
    write.num_sge = 1;
    write.opcode = IBV_WR_RDMA_WRITE;
    write.send_flags = IBV_SEND_SIGNALED;
    write.wr.rdma.remote_addr = reinterpret_cast<std::uintptr_t>(buffer.data());
    write.wr.rdma.rkey = rkey;
    post(initiator.get(), write, "ibv_post_send(RDMA_WRITE)");
    wait_for_completion(initiator_cq.get(), timeout, "the WRITE through the window");
    if (auto bad = find_pattern_mismatch(buffer.bytes(), kSeed))
        fail(fmt::format("byte {} of the window is not what was written", *bad));
    fmt::print("send-invalidate: the initiator wrote {} bytes through the window; verified\n",
               buffer.size());

    // #region send-with-invalidate
    // "Done — and close the door": a SEND whose header carries the rkey the target must revoke.
    ibv_send_wr done{};
    done.wr_id = 4;
    done.opcode = IBV_WR_SEND_WITH_INV;
    done.send_flags = IBV_SEND_SIGNALED;
    done.invalidate_rkey = rkey;
    post(initiator.get(), done, "ibv_post_send(SEND_WITH_INV)");
    wait_for_completion(initiator_cq.get(), timeout, "the SEND WITH INVALIDATE");
    // The target learns it from the receive completion: the flag, and which rkey.
    const ibv_wc arrived = wait_for_completion(target_cq.get(), timeout, "the receive");
    if (arrived.opcode != IBV_WC_RECV)
        fail(fmt::format("expected a receive completion, got opcode {}",
                         static_cast<int>(arrived.opcode)));
    const bool flagged = (arrived.wc_flags & IBV_WC_WITH_INV) != 0;
    if (flagged && arrived.invalidated_rkey != rkey)
        fail(fmt::format("invalidated rkey {:#x}, not the window's {:#x}", arrived.invalidated_rkey,
                         rkey));
    // #endregion send-with-invalidate
    if (flagged)
        fmt::print(
            "send-invalidate: the target's receive completion: IBV_WC_WITH_INV, "
            "invalidated_rkey {:#x}\n",
            arrived.invalidated_rkey);
    else
        fmt::print(
            "send-invalidate: the target's receive completion has no IBV_WC_WITH_INV "
            "(wc_flags {:#x}): {} does not report which rkey the peer invalidated\n",
            arrived.wc_flags, ibv_get_device_name(context->device));

    // #region write-after-invalidate
    // The old rkey now opens nothing: the same WRITE again fails at the target's NIC, and the
    // initiator's QP reports it (and goes to the error state).
    write.wr_id = 5;
    post(initiator.get(), write, "ibv_post_send(RDMA_WRITE again)");
    const ibv_wc refused =
        wait_for_any_completion(initiator_cq.get(), timeout, "the WRITE with the revoked rkey");
    // #endregion write-after-invalidate
    if (refused.status == IBV_WC_SUCCESS) {
        fmt::print(
            "send-invalidate: the WRITE with rkey {:#x} after the SEND WITH INVALIDATE "
            "succeeded: {} did not revoke the window (the SEND arrived as a plain SEND)\n",
            rkey, ibv_get_device_name(context->device));
        return 0;
    }
    if (refused.status != IBV_WC_REM_ACCESS_ERR)
        fail(fmt::format("the WRITE with the revoked rkey: {}", failed_completion(refused)));
    fmt::print(
        "send-invalidate: the WRITE with rkey {:#x} after the invalidation: {} ({}) — "
        "the peer revoked the window\n",
        rkey, ibv_wc_status_str(refused.status), wc_status_name(refused.status));
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("send-invalidate", [&] {
        CommandLine cli{"SEND WITH INVALIDATE: the peer revokes the window it wrote through",
                        "send-invalidate"};
        Options options;
        cli.option("-d,--device", options.device, "RDMA device (default: the first)");
        cli.option("-s,--size", options.size, "bytes in the window")
            .range(std::size_t{1}, std::size_t{1} << 24);
        cli.option("--timeout", options.timeout_s, "seconds any wait may take")
            .range(0.1, 600.0)
            .show_default();
        cli.parse_or_exit(argc, argv);
        return run(options);
    });
}
