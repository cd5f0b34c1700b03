// Lesson: error-recovery — break an RC connection on purpose (wrong rkey; SEND with no receive),
// see the QP go to ERROR and flush its WRs, and recover through RESET->INIT->RTR->RTS.
// Run: error-recovery server [-s SIZE] | error-recovery client ADDR [-s SIZE] [-n FLUSHED]
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/qp_recovery.hpp"
#include "rdmalab/tcp_exchange.hpp"
#include "rdmalab/trace.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>

#include <chrono>
#include <cstdint>
#include <thread>

using namespace rdmalab;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kRounds = 3;  // verified traffic: before the faults, and after each recovery

// #region short-limits
// Short limits, so the errors arrive within moments: an unanswered packet would be retried 3
// times 67 ms apart; a SEND that meets no receive is retried once (rnr_retry 1) after the
// receiver's minimum RNR delay (min_rnr_timer 1: 0.01 ms).
constexpr Reliability kShortLimits{.timeout = 14,
                                   .retry_cnt = 3,
                                   .rnr_retry = 1,
                                   .min_rnr_timer = 1,
                                   .max_rd_atomic = 0,
                                   .max_dest_rd_atomic = 0};
// #endregion short-limits

struct RecoveryOptions : QpOptions {
    std::uint32_t flushed = 3;  // WRs posted to the failed QP, to show each is flushed
};

// The next completion, whatever its status (wait_for_completion would throw on an error, but
// here the errors are the lesson), printed with how long it took; it must have `expected`.
void expect_completion(ibv_cq* cq, std::chrono::milliseconds timeout, const char* what,
                       ibv_wc_status expected) {
    const auto start = Clock::now();
    const ibv_wc wc = wait_for_any_completion(cq, timeout, what);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    fmt::print("client:   completion of {} (wr_id {}): {} \"{}\" after {:.3f} s\n", what, wc.wr_id,
               wc_status_name(wc.status), ibv_wc_status_str(wc.status), seconds);
    expect_status(wc, expected, what);
}

void show_state(ibv_qp* qp, const char* who, const char* when) {
    fmt::print("{}: {}: ibv_query_qp says the QP is {}\n", who, when,
               qp_state_name(query_qp_state(qp)));
}

// #region reset-qp
// Both sides, after each failure. A QP in ERROR cannot be repaired in place:
// RESET empties its queues and forgets its peer and PSNs, then INIT -> RTR -> RTS as at first,
// with fresh PSNs exchanged again (the old packet numbering died with the error).
void reset_qp(ibv_qp* qp, const char* who) {
    const ibv_qp_state from = query_qp_state(qp);
    ibv_qp_attr reset{};
    reset.qp_state = IBV_QPS_RESET;
    fmt::print("{}: {} -> RESET: ibv_modify_qp(IBV_QP_STATE)\n", who, qp_state_name(from));
    check_ibv(ibv_modify_qp(qp, &reset, IBV_QP_STATE), "ibv_modify_qp(-> RESET)");
    trace::modify_qp(qp, from, IBV_QPS_RESET);  // --trace records the transition (else: nothing)
    show_state(qp, who, "after the reset");
}
// #endregion reset-qp

// The server's QP and target, its bring-up and verified rounds: qp_recovery.hpp. What it adds:
// after the client reports a failure, look at our own QP, then recover together.
struct Server : RecoveryServer {
    explicit Server(const RecoveryOptions& o) : RecoveryServer(o, kShortLimits) {}

    void recover(TcpExchange& tcp, const char* fault) {
        await_recovery_request(tcp);
        show_state(r.qp.get(), "server", fault);
        reset_qp(r.qp.get(), "server");
        bring_up(tcp);
    }
};

int run_server(const RecoveryOptions& options) {
    Server server(options);
    auto tcp =
        TcpExchange::accept_one(options.port, options.bind_address, options.accept_timeout());
    server.bring_up(tcp);
    server.verified_round(tcp, 1);
    // (a) The responder of a WRITE with a bad rkey NAKs it; whether its own QP also fails is up to
    // the device (a "class C" error: rxe and most NICs move it to ERROR too).
    server.recover(tcp, "after the client's WRITE with a wrong rkey");
    server.verified_round(tcp, 2);
    // (b) Receiver not ready: the SEND found no receive, we answered RNR NAK; our QP is fine.
    server.recover(tcp, "after the client's SEND that found no receive");
    server.verified_round(tcp, 3);
    await_finished(tcp);
    fmt::print(
        "server: verified {} rounds of RDMA WRITE + SEND; "
        "the connection was broken and recovered twice\n",
        kRounds);
    return 0;
}

// The client's QP, its bring-up and verified rounds are qp_recovery.hpp's; the failures and
// the recovery are the lesson.
struct Client : RecoveryClient {
    const RecoveryOptions& options;

    explicit Client(const RecoveryOptions& o)
        : RecoveryClient(o, kShortLimits, o.flushed + 2), options(o) {}

    // #region wrong-rkey
    // (a) A WRITE whose rkey is wrong: the responder refuses it (NAK: remote access error), and
    // the requester's QP goes to ERROR. Every WR posted afterwards is flushed, never sent.
    void wrong_rkey() {
        fmt::print("client: (a) RDMA WRITE with a wrong rkey ({:#x} instead of {:#x})\n",
                   server.rkey ^ 0xff, server.rkey);
        rounds.post_write(r.qp.get(), server, 10,
                          server.rkey ^ 0xff);  // same MR index, wrong key byte
        expect_completion(r.cq.get(), timeout, "the WRITE with the wrong rkey",
                          IBV_WC_REM_ACCESS_ERR);
        show_state(r.qp.get(), "client", "after IBV_WC_REM_ACCESS_ERR");
        fmt::print("client: posting {} correct WRITEs to the failed QP\n", options.flushed);
        for (std::uint32_t i = 0; i < options.flushed; ++i)
            rounds.post_write(r.qp.get(), server, 11 + i, server.rkey);
        for (std::uint32_t i = 0; i < options.flushed; ++i)
            expect_completion(r.cq.get(), timeout, "a WRITE posted after the error",
                              IBV_WC_WR_FLUSH_ERR);
        show_state(r.qp.get(), "client", "after the flushes");
    }
    // #endregion wrong-rkey

    // #region receiver-not-ready
    // (b) A SEND when the server has no receive posted: the responder answers RNR NAK, the
    // requester waits min_rnr_timer and retries rnr_retry (1) times, then gives up.
    void receiver_not_ready() {
        fmt::print("client: (b) SEND while the server has no receive posted (rnr_retry {})\n",
                   kShortLimits.rnr_retry);
        rounds.post_done(r.qp.get(), 20, 0);
        expect_completion(r.cq.get(), timeout, "the SEND nobody can receive",
                          IBV_WC_RNR_RETRY_EXC_ERR);
        show_state(r.qp.get(), "client", "after IBV_WC_RNR_RETRY_EXC_ERR");
    }
    // #endregion receiver-not-ready

    // #region recover
    void recover(TcpExchange& tcp) {
        request_recovery(tcp);  // the server must reset too: its expected PSN is about to change
        reset_qp(r.qp.get(), "client");
        bring_up(tcp);
    }
    // #endregion recover
};

int run_client(const RecoveryOptions& options) {
    Client client(options);
    auto tcp = TcpExchange::connect_to(options.server_address, options.port, client.timeout);
    client.bring_up(tcp);
    client.verified_round(tcp, 1);
    client.wrong_rkey();
    client.recover(tcp);
    client.verified_round(tcp, 2);
    client.receiver_not_ready();
    client.recover(tcp);
    client.verified_round(tcp, 3);
    send_finished(tcp);
    fmt::print(
        "client: verified recovery: IBV_WC_REM_ACCESS_ERR (then {} WRs flushed) and "
        "IBV_WC_RNR_RETRY_EXC_ERR each put the QP in ERROR; RESET->INIT->RTR->RTS with new PSNs "
        "restored it, and {} rounds of WRITE + SEND were verified\n",
        options.flushed, kRounds);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("error-recovery", [&] {
        CommandLine cli{
            "Deliberate RC errors (wrong rkey, receiver not ready) and recovery through RESET",
            "error-recovery"};
        RecoveryOptions options;
        add_qp_options(cli, options);
        cli.option("-n,--iters", options.flushed, "WRs posted to the failed QP (each is flushed)")
            .range(1, 64)
            .show_default();
        cli.parse_or_exit(argc, argv);
        return options.server ? run_server(options) : run_client(options);
    });
}
