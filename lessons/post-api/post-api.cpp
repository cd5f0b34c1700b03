// Lesson: post-api — the extended verbs that rdma-core, NCCL and UCX post and poll with: a QP
// created by ibv_create_qp_ex with the operations it will post (send_ops_flags), WRs built with
// ibv_wr_start / ibv_wr_rdma_write / ibv_wr_set_sge / ibv_wr_send_imm / ibv_wr_complete (no
// ibv_send_wr, no linked list), and a CQ from ibv_create_cq_ex read with ibv_start_poll /
// ibv_next_poll / ibv_end_poll and the ibv_wc_read_* accessors. What the provider offers beyond
// the basics (completion timestamps) is asked, and the answer printed.
// Run: post-api server [-s SIZE] | post-api client ADDR [-s SIZE]
#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

using namespace rdmalab;

namespace {

constexpr std::uint64_t kSeed = 0xe7;

struct CqExDeleter {
    void operator()(ibv_cq_ex* cq) const noexcept { ibv_destroy_cq(ibv_cq_ex_to_cq(cq)); }
};
using ExtendedCq = std::unique_ptr<ibv_cq_ex, CqExDeleter>;

// #region create-cq-ex
// An extended CQ: the caller says which fields it will read (wc_flags); asking for one the
// provider cannot fill fails the creation. Ask for completion timestamps first, then without.
ExtendedCq create_cq_ex(ibv_context* context, const char* who, bool& timestamps) {
    ibv_cq_init_attr_ex attributes{};
    attributes.cqe = 8;
    attributes.wc_flags =
        std::uint64_t{IBV_WC_STANDARD_FLAGS} | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
    ibv_cq_ex* cq = ibv_create_cq_ex(context, &attributes);
    timestamps = cq != nullptr;
    if (cq) {
        fmt::print("{}: the CQ reports completion timestamps (the NIC's clock)\n", who);
        return ExtendedCq{cq};
    }
    fmt::print(
        "{}: {} gives no completion timestamps (ibv_create_cq_ex: {}); standard fields "
        "only\n",
        who, ibv_get_device_name(context->device), std::strerror(errno));
    attributes.wc_flags = IBV_WC_STANDARD_FLAGS;
    return ExtendedCq{check_ptr(ibv_create_cq_ex(context, &attributes), "ibv_create_cq_ex")};
}
// #endregion create-cq-ex

// #region create-qp-ex
// An extended QP: send_ops_flags names every operation the ibv_wr_* calls will post, so the
// provider can prepare them; IBV_QP_INIT_ATTR_SEND_OPS_FLAGS says the field is set.
QueuePair create_qp_ex(ibv_context* context, ibv_pd* pd, ibv_cq_ex* cq) {
    ibv_qp_init_attr_ex init{};
    init.qp_type = IBV_QPT_RC;
    init.send_cq = ibv_cq_ex_to_cq(cq);
    init.recv_cq = ibv_cq_ex_to_cq(cq);
    init.cap.max_send_wr = 4;
    init.cap.max_recv_wr = 4;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    init.pd = pd;
    init.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    init.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND_WITH_IMM;
    return QueuePair{check_ptr(ibv_create_qp_ex(context, &init), "ibv_create_qp_ex")};
}
// #endregion create-qp-ex

// One completion read through the accessors; the poll loop is the caller's.
struct Completion {
    std::uint64_t wr_id = 0;
    ibv_wc_status status = IBV_WC_SUCCESS;
    ibv_wc_opcode opcode = IBV_WC_SEND;
    std::uint32_t byte_len = 0;
    bool has_imm = false;
    std::uint32_t imm = 0;               // host order
    std::optional<std::uint64_t> stamp;  // the NIC's clock, where the CQ was asked for it
};

// ibv_start_poll takes the first completion (or ENOENT: none yet) and holds the CQ until
// ibv_end_poll; ibv_next_poll moves to the next. Between them the current one is read field by
// field — only the fields asked for at creation, and only what a completion of its kind has.
std::vector<Completion> poll_cq_ex(ibv_cq_ex* cq, bool timestamps, std::size_t count,
                                   std::chrono::milliseconds timeout, std::string_view what) {
    std::vector<Completion> found;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    ibv_poll_cq_attr attributes{};
    // #region poll-cq-ex
    while (found.size() < count) {
        int rc = ibv_start_poll(cq, &attributes);
        if (rc == ENOENT) {  // empty: nothing is held, nothing to end
            if (std::chrono::steady_clock::now() > deadline)
                fail(fmt::format("{}: {} of {} completions within {:.1f} s", what, found.size(),
                                 count, timeout.count() / 1000.0));
            continue;
        }
        check_ibv(rc, "ibv_start_poll");
        do {
            Completion c;
            c.wr_id = cq->wr_id;
            c.status = cq->status;
            if (c.status == IBV_WC_SUCCESS) {
                c.opcode = ibv_wc_read_opcode(cq);
                c.byte_len = ibv_wc_read_byte_len(cq);
                c.has_imm = (ibv_wc_read_wc_flags(cq) & IBV_WC_WITH_IMM) != 0;
                if (c.has_imm) c.imm = from_be32(ibv_wc_read_imm_data(cq));
                if (timestamps) c.stamp = ibv_wc_read_completion_ts(cq);
            }
            found.push_back(c);
        } while (found.size() < count && (rc = ibv_next_poll(cq)) == 0);
        ibv_end_poll(cq);
        if (rc != 0 && rc != ENOENT) check_ibv(rc, "ibv_next_poll");
    }
    // #endregion poll-cq-ex
    for (const Completion& c : found)
        if (c.status != IBV_WC_SUCCESS)
            fail(fmt::format("{}: work completion {} failed: {} (status {})", what, c.wr_id,
                             ibv_wc_status_str(c.status), static_cast<int>(c.status)));
    return found;
}

struct Side {
    Context context;
    PortAddress local;
    ProtectionDomain pd;
    ExtendedCq cq;
    bool timestamps = false;
    QueuePair qp;
};

Side open_side(const QpOptions& options, const char* who) {
    Side side;
    side.context = open_device(options.device);
    side.local = choose_port_address(side.context.get(), options.ib_port, options.gid_index);
    apply_traffic_class(side.local, options.tclass);
    side.pd.reset(check_ptr(ibv_alloc_pd(side.context.get()), "ibv_alloc_pd"));
    side.cq = create_cq_ex(side.context.get(), who, side.timestamps);
    side.qp = create_qp_ex(side.context.get(), side.pd.get(), side.cq.get());
    return side;
}

int run_server(const QpOptions& options) {
    auto tcp =
        TcpExchange::accept_one(options.port, options.bind_address, options.accept_timeout());
    Side side = open_side(options, "server");
    // The client writes here (REMOTE_WRITE), then says so with the immediate of a SEND.
    Buffer target(options.size);
    MemoryRegion target_mr{ibv_reg_mr(side.pd.get(), target.data(), target.size(),
                                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)};
    check_ptr(target_mr.get(), "ibv_reg_mr(target)");
    apply_transition(side.qp.get(), init_transition(side.local, IBV_ACCESS_REMOTE_WRITE), "server");
    // Receives are posted the classic way (the extended API covers the send side), once the QP
    // is in INIT and before the peer can send: a zero-length one, for the immediate.
    ibv_recv_wr receive{.wr_id = 7, .next = nullptr, .sg_list = nullptr, .num_sge = 0};
    ibv_recv_wr* bad = nullptr;
    check_ibv(ibv_post_recv(side.qp.get(), &receive, &bad), "ibv_post_recv");
    connect_qp(
        side.qp.get(), tcp, side.local,
        local_endpoint(side.qp.get(), side.local, reinterpret_cast<std::uintptr_t>(target.data()),
                       target_mr->rkey, static_cast<std::uint32_t>(target.size())),
        PeerBuffer::kNone, Reliability{}, "server");

    const Completion arrived = poll_cq_ex(side.cq.get(), side.timestamps, 1, options.timeout(),
                                          "the client's SEND WITH IMMEDIATE")
                                   .front();
    if (arrived.opcode != IBV_WC_RECV || arrived.wr_id != 7 || !arrived.has_imm)
        fail(fmt::format("expected the receive with an immediate, got opcode {}, wr_id {}",
                         static_cast<int>(arrived.opcode), arrived.wr_id));
    fmt::print(
        "server: read with ibv_wc_read_*: wr_id {}, opcode RECV, byte_len {}, "
        "IBV_WC_WITH_IMM, immediate {}\n",
        arrived.wr_id, arrived.byte_len, arrived.imm);
    const std::uint32_t written = arrived.imm;  // from the network: checked before use
    if (written == 0 || written > target.size())
        fail(fmt::format("the immediate says {} bytes; the buffer holds {}", written,
                         target.size()));
    if (auto mismatch = find_pattern_mismatch(target.bytes().first(written), kSeed))
        fail(fmt::format("byte {} of the {} written is not the client's", *mismatch, written));
    if (!all_zero(target.bytes().subspan(written))) fail("bytes past the written ones changed");
    fmt::print("server: verified {} bytes written with ibv_wr_rdma_write\n", written);
    return 0;
}

int run_client(const QpOptions& options) {
    auto tcp = TcpExchange::connect_to(options.server_address, options.port, options.timeout());
    Side side = open_side(options, "client");
    Buffer source(options.size);
    fill_pattern(source.bytes(), kSeed);
    MemoryRegion source_mr{ibv_reg_mr(side.pd.get(), source.data(), source.size(), 0)};
    check_ptr(source_mr.get(), "ibv_reg_mr(source)");

    apply_transition(side.qp.get(), init_transition(side.local, 0), "client");
    const QpEndpoint server =
        connect_qp(side.qp.get(), tcp, side.local, local_endpoint(side.qp.get(), side.local),
                   PeerBuffer::kAdvertised, Reliability{}, "client");
    if (server.length < source.size())
        fail(fmt::format("the server's buffer holds {} bytes; cannot write {}", server.length,
                         source.size()));

    // #region post-ex
    // Two WRs, one doorbell: between ibv_wr_start and ibv_wr_complete every ibv_wr_* call builds
    // the next WR in the send queue itself; wr_id and wr_flags are set on the qp_ex first.
    ibv_qp_ex* qpx = ibv_qp_to_qp_ex(side.qp.get());
    ibv_wr_start(qpx);
    qpx->wr_id = 1;
    qpx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_rdma_write(qpx, server.rkey, server.address);
    ibv_wr_set_sge(qpx, source_mr->lkey, reinterpret_cast<std::uintptr_t>(source.data()),
                   static_cast<std::uint32_t>(source.size()));
    qpx->wr_id = 2;
    qpx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_send_imm(qpx, to_be32(static_cast<std::uint32_t>(source.size())));
    ibv_wr_set_sge_list(qpx, 0, nullptr);                // no payload: the immediate is the message
    check_ibv(ibv_wr_complete(qpx), "ibv_wr_complete");  // posts both, or neither
    // #endregion post-ex

    const auto done =
        poll_cq_ex(side.cq.get(), side.timestamps, 2, options.timeout(), "the WRITE and the SEND");
    for (const Completion& c : done)
        fmt::print("client: completion wr_id {}: {}{}\n", c.wr_id,
                   c.opcode == IBV_WC_RDMA_WRITE ? "RDMA_WRITE"
                   : c.opcode == IBV_WC_SEND     ? "SEND"
                                                 : "unexpected",
                   c.stamp ? fmt::format(", completion timestamp {}", *c.stamp) : std::string());
    if (done[0].wr_id != 1 || done[0].opcode != IBV_WC_RDMA_WRITE || done[1].wr_id != 2 ||
        done[1].opcode != IBV_WC_SEND)
        fail("the completions did not come back as the WRITE, then the SEND");
    fmt::print(
        "client: wrote {} bytes and sent the immediate, two WRs posted by one "
        "ibv_wr_complete\n",
        source.size());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("post-api", [&] {
        CommandLine cli{"The extended post and poll API: ibv_wr_* and ibv_start_poll", "post-api"};
        QpOptions options;
        add_qp_options(cli, options);
        cli.parse_or_exit(argc, argv);
        return options.server ? run_server(options) : run_client(options);
    });
}
