// Recovering a failed RC connection, for the lessons that break one on purpose (error-recovery,
// link-failure): each side's QP brought up with the lesson's limits, a verified round of RDMA
// WRITE + SEND (verified_rounds.hpp) that proves the QP moves data, and the words over TCP by
// which both sides agree to recover. Recovery itself is RESET, then INIT -> RTR -> RTS again
// with fresh PSNs on both sides. The failures stay in the lessons, and so does error-recovery's
// RESET, which is its subject; link-failure, whose subject is when an error comes, uses reset_qp.
#pragma once

#include "rdmalab/options.hpp"
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/tcp_exchange.hpp"
#include "rdmalab/verified_rounds.hpp"

#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <string_view>

namespace rdmalab {

// Throws "WHAT: expected IBV_WC_X, got IBV_WC_Y (words)" unless wc has the expected status: for
// completions that wait_for_any_completion returns whatever their status, errors included.
void expect_status(const ibv_wc& wc, ibv_wc_status expected, std::string_view what);

// Any state -> RESET: ibv_modify_qp with the state alone, printed, recorded in the trace and
// confirmed as every other transition is (apply_transition).
void reset_qp(ibv_qp* qp, std::string_view who);

// The words over TCP. The client whose QP failed asks for recovery, and the server waits for it:
// both must reset, since the server's expected PSN is about to change. Then the client's end.
void request_recovery(TcpExchange& tcp);
void await_recovery_request(TcpExchange& tcp);
void send_finished(TcpExchange& tcp);
void await_finished(TcpExchange& tcp);

// The server: one RC QP, and the target its client writes in each round.
struct RecoveryServer {
    RecoveryServer(const QpOptions& options, const Reliability& reliability);

    // INIT (the client may write), one receive for the next round's "done" SEND, the endpoint
    // exchange with a fresh PSN, RTR (where our min_rnr_timer is set: the responder announces
    // it) and RTS.
    void bring_up(TcpExchange& tcp);
    // The client's WRITE, then its "done" SEND (RC keeps their order): waits for the SEND,
    // verifies the round's bytes and answers the client.
    void verified_round(TcpExchange& tcp, int round);

    QpResources r;
    RoundTarget rounds;
    Reliability limits;
    std::chrono::milliseconds timeout;  // each wait for the client's SEND
};

// The client: one RC QP with room for send_depth WRs, the source of its WRITEs, and the
// server's record (the target's address, rkey and length) once connected.
struct RecoveryClient {
    RecoveryClient(const QpOptions& options, const Reliability& reliability,
                   std::uint32_t send_depth);

    // INIT, the endpoint exchange with a fresh PSN, RTR and RTS; throws if the server's target
    // cannot hold a round.
    void bring_up(TcpExchange& tcp);
    // A WRITE of the round's pattern (wr_id 1) and the "done" SEND (wr_id 2), both waited for,
    // and the server's verdict.
    void verified_round(TcpExchange& tcp, int round);

    QpResources r;
    RoundSource rounds;
    QpEndpoint server;
    Reliability limits;
    std::chrono::milliseconds timeout;  // each wait for a completion
};

}  // namespace rdmalab
