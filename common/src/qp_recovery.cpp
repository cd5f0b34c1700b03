// Recovering a failed RC connection: see qp_recovery.hpp.
#include "rdmalab/qp_recovery.hpp"

#include "rdmalab/error.hpp"
#include "rdmalab/qp_transitions.hpp"
#include "rdmalab/verbs.hpp"
#include "rdmalab/verbs_names.hpp"

#include <fmt/core.h>

namespace rdmalab {
namespace {

constexpr std::uint32_t kRecover = 0x52535421;   // "RST!": the client's "my QP failed: reset both"
constexpr std::uint32_t kFinished = 0x444f4e45;  // "DONE"

}  // namespace

void expect_status(const ibv_wc& wc, ibv_wc_status expected, std::string_view what) {
    if (wc.status != expected)
        fail(fmt::format("{}: expected {}, got {} ({})", what, wc_status_name(expected),
                         wc_status_name(wc.status), ibv_wc_status_str(wc.status)));
}

void reset_qp(ibv_qp* qp, std::string_view who) {
    QpTransition reset;
    reset.attributes.qp_state = IBV_QPS_RESET;
    reset.mask = IBV_QP_STATE;  // RESET takes nothing else: it forgets the peer and the PSNs
    apply_transition(qp, reset, who);
}

void request_recovery(TcpExchange& tcp) {
    send_word(tcp, kRecover);
}

void await_recovery_request(TcpExchange& tcp) {
    expect_word(tcp, kRecover, "the client's request to recover");
}

void send_finished(TcpExchange& tcp) {
    send_word(tcp, kFinished);
}

void await_finished(TcpExchange& tcp) {
    expect_word(tcp, kFinished, "the client's end");
}

RecoveryServer::RecoveryServer(const QpOptions& options, const Reliability& reliability)
    : r(create_qp_resources(options, IBV_QPT_RC, 1, 1, "server")),
      rounds(r.pd.get(), options.size),
      limits(reliability),
      timeout(options.timeout()) {}

void RecoveryServer::bring_up(TcpExchange& tcp) {
    apply_transition(r.qp.get(), init_transition(r.local, IBV_ACCESS_REMOTE_WRITE), "server");
    rounds.post_done_receive(r.qp.get());
    connect_qp(r.qp.get(), tcp, r.local, rounds.advertise(r), PeerBuffer::kNone, limits, "server");
}

void RecoveryServer::verified_round(TcpExchange& tcp, int round) {
    const ibv_wc done = wait_for_completion(r.cq.get(), timeout, "the client's done SEND");
    fmt::print("server: round {}: verified {} bytes RDMA-written by the client\n", round,
               rounds.check(done, tcp, round));
}

RecoveryClient::RecoveryClient(const QpOptions& options, const Reliability& reliability,
                               std::uint32_t send_depth)
    : r(create_qp_resources(options, IBV_QPT_RC, send_depth, 1, "client")),
      rounds(r.pd.get(), options.size),
      limits(reliability),
      timeout(options.timeout()) {}

void RecoveryClient::bring_up(TcpExchange& tcp) {
    apply_transition(r.qp.get(), init_transition(r.local, 0), "client");
    server = connect_qp(r.qp.get(), tcp, r.local, local_endpoint(r), PeerBuffer::kAdvertised,
                        limits, "client");
    if (rounds.size() > server.length)
        fail(fmt::format("the server's buffer holds {} bytes; cannot write {} (use -s {} or less)",
                         server.length, rounds.size(), server.length));
}

void RecoveryClient::verified_round(TcpExchange& tcp, int round) {
    rounds.fill(round);
    rounds.post_write(r.qp.get(), server, 1, server.rkey);
    rounds.post_done(r.qp.get(), 2, static_cast<std::uint32_t>(rounds.size()));
    wait_for_completion(r.cq.get(), timeout, "the round's RDMA WRITE");
    wait_for_completion(r.cq.get(), timeout, "the round's done SEND");
    rounds.expect_verified(tcp, round);
    fmt::print("client: round {}: RDMA WRITE of {} bytes + SEND; the server verified the data\n",
               round, rounds.size());
}

}  // namespace rdmalab
