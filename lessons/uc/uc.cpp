// Lesson: uc — Unreliable Connected: RDMA WRITE and SEND as on RC, but nothing is acknowledged:
// a SEND that finds no receive is dropped while its sender sees success; and there is no READ.
// Run: uc server [-s SIZE] [-n COUNT] | uc client ADDR [-s SIZE] [-n COUNT]
#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/tcp_exchange.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>

using namespace rdmalab;

namespace {

constexpr std::uint64_t kWriteSeed = 0x0c;     // pattern of the RDMA WRITE
constexpr std::uint64_t kSendSeed = 0x5e;      // pattern of the SEND
constexpr std::size_t kSmall = 64;             // the messages of part 2: one packet each
constexpr std::uint32_t kMarker = 0xffffffff;  // index carried by the last message of part 2
constexpr std::uint32_t kReceivesPosted = 0x52435653;  // "RCVS": control word of part 2
constexpr std::uint32_t kFinished = 0x444f4e45;        // "DONE"

struct UcOptions : QpOptions {
    std::uint32_t unreceived = 4;  // SENDs sent while the server has no receive posted
};

std::chrono::milliseconds timeout_of(const UcOptions& options) {
    return options.timeout();
}

// UC's transitions leave out every RC attribute that serves acknowledgements or READs. Show that
// the kernel means it: the RC attribute set on this UC QP is refused (EINVAL), and the QP stays
// where it was. Then apply the UC set.
void transition_without_rc_attributes(ibv_qp* qp, const QpTransition& uc, const QpTransition& rc,
                                      const char* omitted, const char* who) {
    ibv_qp_attr attributes = rc.attributes;
    int rc_result = ibv_modify_qp(qp, &attributes, rc.mask);
    fmt::print(
        "{}: {} -> {} with RC's extra attributes ({}) on this UC QP: ibv_modify_qp {}; "
        "the QP is {}\n",
        who, qp_state_name(query_qp_state(qp)), qp_state_name(rc.attributes.qp_state),
        qp_attr_mask_names(rc.mask & ~uc.mask),
        rc_result == 0
            ? "accepted them (this provider ignores them)"
            : std::string("refused: ") + std::strerror(rc_result < 0 ? errno : rc_result),
        qp_state_name(query_qp_state(qp)));
    fmt::print("{}: UC leaves out {}\n", who, omitted);
    if (rc_result != 0) apply_transition(qp, uc, who);
}

// #region uc-omitted
// Part 0, both sides, after RESET -> INIT: the same exchange as qp-state-machine, then RTR and RTS
// for IBV_QPT_UC.
QpEndpoint bring_up(QpResources& r, TcpExchange& tcp, const QpEndpoint& ours, PeerBuffer theirs,
                    const char* who) {
    QpEndpoint peer = exchange_endpoints(tcp, r.local, ours, theirs, who);
    const Reliability rc_defaults{};
    transition_without_rc_attributes(
        r.qp.get(), rtr_transition(IBV_QPT_UC, r.local, peer, rc_defaults),
        rtr_transition(IBV_QPT_RC, r.local, peer, rc_defaults),
        "max_dest_rd_atomic (it serves no RDMA READ or atomics) and min_rnr_timer "
        "(a UC receiver never sends an RNR NAK: with no receive posted it drops the message)",
        who);
    transition_without_rc_attributes(
        r.qp.get(), rts_transition(IBV_QPT_UC, ours.psn, rc_defaults),
        rts_transition(IBV_QPT_RC, ours.psn, rc_defaults),
        "timeout and retry_cnt (no ACKs to wait for, so nothing is retransmitted), "
        "rnr_retry (no RNR NAKs to retry) and max_rd_atomic (it issues no RDMA READ or atomics)",
        who);
    exchange_ready(tcp);
    return peer;
}
// #endregion uc-omitted

void post_receive(ibv_qp* qp, std::uint64_t id, std::byte* address, std::size_t length,
                  std::uint32_t lkey) {
    ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(address),
                .length = static_cast<std::uint32_t>(length),
                .lkey = lkey};
    ibv_recv_wr receive{.wr_id = id, .next = nullptr, .sg_list = &sge, .num_sge = 1};
    ibv_recv_wr* bad = nullptr;
    check_ibv(ibv_post_recv(qp, &receive, &bad), "ibv_post_recv");
}

void post_send(ibv_qp* qp, ibv_wr_opcode opcode, std::uint64_t id, const std::byte* address,
               std::size_t length, std::uint32_t lkey, std::uint64_t remote_address = 0,
               std::uint32_t rkey = 0) {
    ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(address),
                .length = static_cast<std::uint32_t>(length),
                .lkey = lkey};
    ibv_send_wr wr{};
    wr.wr_id = id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = opcode;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = remote_address;
    wr.wr.rdma.rkey = rkey;
    ibv_send_wr* bad = nullptr;
    check_ibv(ibv_post_send(qp, &wr, &bad),
              fmt::format("ibv_post_send({})", opcode == IBV_WR_SEND ? "SEND" : "RDMA_WRITE"));
}

int run_server(const UcOptions& options) {
    const auto timeout = timeout_of(options);
    auto r = create_qp_resources(options, IBV_QPT_UC, 1, options.unreceived + 2, "server");

    // The WRITE target: the peer may write it (REMOTE_WRITE needs LOCAL_WRITE), never read it.
    // UC could not serve a READ anyway. The receive slots are written by the local NIC only.
    Buffer target(options.size);
    MemoryRegion target_mr{ibv_reg_mr(r.pd.get(), target.data(), target.size(),
                                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)};
    check_ptr(target_mr.get(), "ibv_reg_mr(target)");
    Buffer slots(options.size + (options.unreceived + 1) * kSmall);
    MemoryRegion slots_mr{
        ibv_reg_mr(r.pd.get(), slots.data(), slots.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(slots_mr.get(), "ibv_reg_mr(receive slots)");

    // UC carries RDMA WRITE, so REMOTE_WRITE is all the peer may do (READ and atomics do not
    // exist on UC). The receive for part 1 is posted in INIT, before the client can send.
    apply_transition(r.qp.get(), init_transition(r.local, IBV_ACCESS_REMOTE_WRITE), "server");
    post_receive(r.qp.get(), 0, slots.data(), options.size, slots_mr->lkey);
    auto tcp =
        TcpExchange::accept_one(options.port, options.bind_address, options.accept_timeout());
    bring_up(r, tcp,
             local_endpoint(r, reinterpret_cast<std::uintptr_t>(target.data()), target_mr->rkey,
                            static_cast<std::uint32_t>(target.size())),
             PeerBuffer::kNone, "server");

    // Part 1: a WRITE, then a SEND whose byte_len says how much was written. Same order as on RC:
    // UC drops whole messages but never reorders them.
    ibv_wc wc = wait_for_completion(r.cq.get(), timeout, "the client's SEND");
    if (wc.opcode != IBV_WC_RECV || wc.wr_id != 0 || wc.byte_len == 0 || wc.byte_len > options.size)
        fail(
            fmt::format("expected a SEND of 1..{} bytes in receive 0, "
                        "got opcode {} with {} bytes in receive {}",
                        options.size, static_cast<int>(wc.opcode), wc.byte_len, wc.wr_id));
    const std::size_t length = wc.byte_len;
    const bool write_ok = !find_pattern_mismatch(target.bytes().first(length), kWriteSeed) &&
                          all_zero(target.bytes().subspan(length));
    const bool send_ok = !find_pattern_mismatch(slots.bytes().first(length), kSendSeed);
    send_word(tcp, write_ok && send_ok ? static_cast<std::uint32_t>(length) : 0);
    if (!write_ok || !send_ok) {
        fmt::print(
            "server: data check FAILED: the {} ({} bytes) differs from what the client sent\n",
            write_ok ? "SEND" : "RDMA WRITE", length);
        return 1;
    }
    fmt::print(
        "server: part 1: verified {} bytes placed by RDMA WRITE "
        "and {} bytes received by SEND over UC\n",
        length, length);

    // Part 2: the client SENDs while no receive is posted here. A UC responder has no RNR NAK to
    // answer with: it drops each message. Once the client says how many it sent, post receives
    // for all of them plus a marker; the marker arrives after anything that was still on its way.
    const std::uint32_t sent = receive_word(tcp);
    if (sent != options.unreceived)
        fail(fmt::format(
            "the client says it sent {} messages, expected {} (use the same -n on both sides)",
            sent, options.unreceived));
    for (std::uint32_t i = 0; i <= sent; ++i)
        post_receive(r.qp.get(), 1 + i, slots.data() + options.size + i * kSmall, kSmall,
                     slots_mr->lkey);
    send_word(tcp, kReceivesPosted);
    std::uint32_t arrived = 0;
    for (;;) {
        wc = wait_for_completion(r.cq.get(), timeout, "the client's marker SEND");
        if (wc.opcode != IBV_WC_RECV || wc.byte_len != kSmall)
            fail(fmt::format("expected a {}-byte SEND, got opcode {} with {} bytes", kSmall,
                             static_cast<int>(wc.opcode), wc.byte_len));
        if (wc.wr_id < 1 || wc.wr_id > sent + 1)
            fail(fmt::format("completion for unknown receive {}", wc.wr_id));
        const std::span<const std::byte> message =
            slots.bytes().subspan(options.size + (wc.wr_id - 1) * kSmall, kSmall);
        const std::uint32_t index = load_be32(message.first(4));
        if (index == kMarker) break;
        if (index >= sent)
            fail(fmt::format("a message claims index {}, but only {} were sent", index, sent));
        ++arrived;  // one that got here anyway (it would have had to arrive after the posting)
    }
    send_word(tcp, arrived);
    fmt::print(
        "server: part 2: of {} SENDs sent while no receive was posted, {} arrived; "
        "{} were dropped and nobody was told; the marker sent after posting arrived\n",
        sent, arrived, sent - arrived);

    expect_word(tcp, kFinished, "the client's end of part 3");
    fmt::print(
        "server: verified over UC: WRITE and SEND delivered intact; "
        "{} of {} SENDs without a receive silently dropped\n",
        sent - arrived, sent);
    return 0;
}

int run_client(const UcOptions& options) {
    const auto timeout = timeout_of(options);
    auto r = create_qp_resources(options, IBV_QPT_UC, options.unreceived + 2, 1, "client");

    // Sources (read by our NIC only: access 0): the WRITE's bytes, the SEND's bytes, then the
    // small messages of part 2, each starting with its big-endian index.
    Buffer source(2 * options.size + (options.unreceived + 1) * kSmall);
    fill_pattern(source.bytes().first(options.size), kWriteSeed);
    fill_pattern(source.bytes().subspan(options.size, options.size), kSendSeed);
    std::byte* const small = source.data() + 2 * options.size;
    for (std::uint32_t i = 0; i <= options.unreceived; ++i)
        store_be32(std::span(small + i * kSmall, 4), i == options.unreceived ? kMarker : i);
    MemoryRegion source_mr{ibv_reg_mr(r.pd.get(), source.data(), source.size(), 0)};
    check_ptr(source_mr.get(), "ibv_reg_mr(source)");
    // Where a READ would land: the local NIC writes it (LOCAL_WRITE).
    Buffer read_target(kSmall);
    MemoryRegion read_mr{
        ibv_reg_mr(r.pd.get(), read_target.data(), read_target.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(read_mr.get(), "ibv_reg_mr(read target)");

    // The server may do nothing to this side's memory: qp_access_flags 0.
    apply_transition(r.qp.get(), init_transition(r.local, 0), "client");
    auto tcp = TcpExchange::connect_to(options.server_address, options.port, timeout);
    QpEndpoint server = bring_up(r, tcp, local_endpoint(r), PeerBuffer::kAdvertised, "client");
    if (options.size > server.length)
        fail(fmt::format("the server's buffer holds {} bytes; cannot write {} (use -s {} or less)",
                         server.length, options.size, server.length));

    // Part 1: WRITE then SEND. Each completion here means the message LEFT: UC has no ACK.
    post_send(r.qp.get(), IBV_WR_RDMA_WRITE, 1, source.data(), options.size, source_mr->lkey,
              server.address, server.rkey);
    post_send(r.qp.get(), IBV_WR_SEND, 2, source.data() + options.size, options.size,
              source_mr->lkey);
    wait_for_completion(r.cq.get(), timeout, "RDMA WRITE");
    wait_for_completion(r.cq.get(), timeout, "SEND");
    const std::uint32_t verified = receive_word(tcp);  // only the server can say it arrived
    if (verified != options.size)
        fail(fmt::format("the server could not verify part 1 (it reports {} of {} bytes)", verified,
                         options.size));
    fmt::print("client: part 1: RDMA WRITE and SEND of {} bytes; the server verified both\n",
               options.size);

    // #region uc-no-receive
    // Part 2: SENDs to a server with no receive posted. On RC the responder would answer RNR NAK,
    // the sender would retry rnr_retry times, then fail with IBV_WC_RNR_RETRY_EXC_ERR. On UC…
    for (std::uint32_t i = 0; i < options.unreceived; ++i)
        post_send(r.qp.get(), IBV_WR_SEND, 10 + i, small + i * kSmall, kSmall, source_mr->lkey);
    std::uint32_t succeeded = 0;
    for (std::uint32_t i = 0; i < options.unreceived; ++i) {
        ibv_wc wc = wait_for_any_completion(r.cq.get(), timeout, "a SEND with no receive posted");
        fmt::print("client:   SEND {} with no receive posted: completion {}\n", wc.wr_id - 10,
                   ibv_wc_status_str(wc.status));
        if (wc.status == IBV_WC_SUCCESS) ++succeeded;
    }
    send_word(tcp, options.unreceived);
    expect_word(tcp, kReceivesPosted, "the server's receives for part 2");
    post_send(r.qp.get(), IBV_WR_SEND, 99, small + options.unreceived * kSmall, kSmall,
              source_mr->lkey);
    wait_for_completion(r.cq.get(), timeout, "the marker SEND");
    const std::uint32_t arrived = receive_word(tcp);
    if (arrived > options.unreceived)
        fail(fmt::format("the server reports {} arrivals of {}", arrived, options.unreceived));
    fmt::print(
        "client: part 2: {} of {} SENDs completed with IBV_WC_SUCCESS, "
        "yet the server received {}: on UC a completion means 'sent', not 'delivered'\n",
        succeeded, options.unreceived, arrived);

    // #endregion uc-no-receive
    // Part 3: RDMA READ needs a responder that answers with data: UC has none (nor atomics).
    std::string read_result;
    ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(read_target.data()),
                .length = static_cast<std::uint32_t>(kSmall),
                .lkey = read_mr->lkey};
    ibv_send_wr read{};
    read.wr_id = 100;
    read.sg_list = &sge;
    read.num_sge = 1;
    read.opcode = IBV_WR_RDMA_READ;
    read.send_flags = IBV_SEND_SIGNALED;
    read.wr.rdma.remote_addr = server.address;
    read.wr.rdma.rkey = server.rkey;
    ibv_send_wr* bad = nullptr;
    if (int rc = ibv_post_send(r.qp.get(), &read, &bad); rc != 0) {
        read_result =
            fmt::format("ibv_post_send refused it: {}", std::strerror(rc < 0 ? errno : rc));
    } else {
        ibv_wc wc = wait_for_any_completion(r.cq.get(), timeout, "the RDMA READ");
        if (wc.status == IBV_WC_SUCCESS) fail("an RDMA READ on a UC QP completed successfully");
        read_result = fmt::format("its completion is {} ({})", wc_status_name(wc.status),
                                  ibv_wc_status_str(wc.status));
    }
    fmt::print("client: part 3: RDMA READ on UC: {}; the QP is now {}\n", read_result,
               qp_state_name(query_qp_state(r.qp.get())));
    send_word(tcp, kFinished);

    fmt::print("client: summary of UC compared with RC:\n");
    fmt::print("client:   RDMA WRITE and SEND       work, verified by the server ({} bytes each)\n",
               options.size);
    fmt::print(
        "client:   SEND with no receive      {} of {} 'succeeded' here, {} arrived "
        "(RC: RNR NAK, retry, error)\n",
        succeeded, options.unreceived, arrived);
    fmt::print("client:   RDMA READ                 {} (RC: works)\n", read_result);
    if (succeeded != options.unreceived || arrived == options.unreceived)
        fail("part 2 did not show silent drops");
    fmt::print(
        "client: verified UC: WRITE and SEND delivered; "
        "{} SENDs completed successfully but were dropped; READ not available\n",
        options.unreceived - arrived);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("uc", [&] {
        CommandLine cli{"Unreliable Connected QPs: WRITE and SEND without acknowledgements", "uc"};
        UcOptions options;
        add_qp_options(cli, options);
        cli.option("-n,--iters", options.unreceived,
                   "SENDs sent while the server has no receive posted")
            .range(1, 64)
            .show_default();
        cli.parse_or_exit(argc, argv);
        return options.server ? run_server(options) : run_client(options);
    });
}
