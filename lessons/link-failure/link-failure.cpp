// Lesson: link-failure — what a dead link and a missing receive do to an RC QP, with the time
// each error takes predicted from the QP's attributes and then measured: the link dies under a
// stream of WRITEs (IBV_WC_RETRY_EXC_ERR after (retry_cnt + 1) × 4.096 µs × 2^timeout), a SEND
// meets no receive (RNR NAKs, IBV_WC_RNR_RETRY_EXC_ERR after rnr_retry × the responder's
// min_rnr_timer); each time the QP is in ERROR and both sides recover through RESET.
// Needs two hosts and a link to break: in the lab
//   ./rdmalab lab --hosts 2 --link-down 1@4+4 --on 1 'build/bin/link-failure server'
//                 --on 2 'sleep 2; build/bin/link-failure client $RDMALAB_ADDR_1'
// on real hosts, `ip link set IFACE down` (then up) on the server's host while the client writes.
// Run: link-failure server [-s SIZE] | link-failure client ADDR [-s SIZE] [--wait SEC]
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/qp_recovery.hpp"
#include "rdmalab/tcp_exchange.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>

using namespace rdmalab;
using Clock = std::chrono::steady_clock;

namespace {

// #region limits
// The limits whose product is the time to an error. timeout 14: an unanswered packet is resent
// after 4.096 µs × 2^14 ≈ 67 ms; retry_cnt 3: three resends, then IBV_WC_RETRY_EXC_ERR (7 would
// mean seven on hardware, but "forever" on rxe). min_rnr_timer 24: a responder with no receive
// posted tells the sender to wait 40.96 ms (the IBTA's table of 32 codes); rnr_retry 3: three
// more tries, then IBV_WC_RNR_RETRY_EXC_ERR (7 would be forever, everywhere).
constexpr Reliability kLimits{.timeout = 14,
                              .retry_cnt = 3,
                              .rnr_retry = 3,
                              .min_rnr_timer = 24,
                              .max_rd_atomic = 0,
                              .max_dest_rd_atomic = 0};
// #endregion limits

// #region predictions
// The local ACK timeout: 4.096 µs × 2^timeout. Each of the 1 + retry_cnt transmissions waits
// that long for an ACK before the next, so a dead link surfaces after (retry_cnt + 1) of them.
double predicted_retry_exceeded_s(const Reliability& r) {
    return (r.retry_cnt + 1) * 4.096e-6 * static_cast<double>(1u << r.timeout);
}

// min_rnr_timer's codes 1…31 in milliseconds (0 means 655.36 ms), from the IBTA's table.
double rnr_timer_ms(std::uint8_t code) {
    static constexpr std::array<double, 32> kMs = {
        655.36, 0.01,  0.02,  0.03,  0.04,  0.06,   0.08,   0.12,   0.16,   0.24,  0.32,
        0.48,   0.64,  0.96,  1.28,  1.92,  2.56,   3.84,   5.12,   7.68,   10.24, 15.36,
        20.48,  30.72, 40.96, 61.44, 81.92, 122.88, 163.84, 245.76, 327.68, 491.52};
    return kMs.at(code & 31);
}

// A SEND that meets no receive is answered by an RNR NAK each time; the sender waits the timer
// between tries, rnr_retry times, and fails on the last NAK.
double predicted_rnr_exceeded_s(const Reliability& r) {
    return r.rnr_retry * rnr_timer_ms(r.min_rnr_timer) / 1000;
}
// #endregion predictions

struct FailureOptions : QpOptions {
    double wait_s = 30;  // client: how long to keep writing while waiting for the link to die
};

// The server: its QP, bring-up and verified rounds are qp_recovery.hpp's. A responder sees
// nothing of the client's failure: its QP stays in RTS. It resets only because the client asks
// (the PSNs are about to start afresh).
void recover(RecoveryServer& server, TcpExchange& tcp, const char* after) {
    await_recovery_request(tcp);
    fmt::print("server: {}: the client asks to recover\n", after);
    reset_qp(server.r.qp.get(), "server");
    server.bring_up(tcp);
}

int run_server(const FailureOptions& options) {
    RecoveryServer server(options, kLimits);
    // The exchange's waits span the outage: they use the (long) accept limit.
    auto tcp =
        TcpExchange::accept_one(options.port, options.bind_address, options.accept_timeout());
    server.bring_up(tcp);
    server.verified_round(tcp, 1);
    recover(server, tcp, "after the dead link");
    server.verified_round(tcp, 2);
    // Round 2 used our one receive: the client's next SEND finds none and gets RNR NAKs.
    recover(server, tcp, "after the SEND that found no receive");
    server.verified_round(tcp, 3);
    await_finished(tcp);
    fmt::print(
        "server: verified 3 rounds; the connection failed twice (dead link, receiver not ready) "
        "and was "
        "recovered twice\n");
    return 0;
}

// The client's QP, bring-up and verified rounds are qp_recovery.hpp's; the failures are the
// lesson.
struct Client : RecoveryClient {
    const FailureOptions& options;

    explicit Client(const FailureOptions& o) : RecoveryClient(o, kLimits, 4), options(o) {}

    // WRITEs one at a time, 20 ms apart, until one fails. While the link lives each completes in
    // well under a millisecond; once it is dead the WRITE's packets are resent retry_cnt times,
    // each after the ACK timeout, and then the completion reports IBV_WC_RETRY_EXC_ERR.
    void dead_link() {
        const double predicted = predicted_retry_exceeded_s(kLimits);
        fmt::print(
            "client: writing every 20 ms until the link dies (up to {:.0f} s); predicted error "
            "after "
            "(retry_cnt {} + 1) x 4.096 us x 2^{} = {:.3f} s\n",
            options.wait_s, kLimits.retry_cnt, kLimits.timeout, predicted);
        std::fflush(stdout);  // whoever takes the link down may be waiting for this line
        // #region dead-link
        const auto give_up = Clock::now() + to_milliseconds(options.wait_s);
        for (std::uint64_t id = 100;; ++id) {
            rounds.fill(static_cast<int>(id));
            const auto posted = Clock::now();
            rounds.post_write(r.qp.get(), server, id, server.rkey);
            ibv_wc wc = wait_for_any_completion(r.cq.get(), to_milliseconds(predicted * 10 + 5),
                                                "an RDMA WRITE on a dying link");
            const double took = std::chrono::duration<double>(Clock::now() - posted).count();
            if (wc.status == IBV_WC_SUCCESS) {
                if (Clock::now() > give_up)
                    fail(fmt::format(
                        "the link never went down within {:.0f} s: take the server's link down "
                        "while "
                        "this runs (lab: --link-down 1@4+4; real hosts: ip link set IFACE down)",
                        options.wait_s));
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                continue;
            }
            expect_status(wc, IBV_WC_RETRY_EXC_ERR, "the WRITE on the dead link");
            fmt::print(
                "client: WRITE {} failed with IBV_WC_RETRY_EXC_ERR \"{}\" after {:.3f} s "
                "(predicted {:.3f} s, "
                "ratio {:.2f}), {} WRITEs after the first\n",
                id, ibv_wc_status_str(wc.status), took, predicted, took / predicted, id - 100);
            break;
        }
        // #endregion dead-link
        fmt::print("client: after the error ibv_query_qp says the QP is {}\n",
                   qp_state_name(query_qp_state(r.qp.get())));
    }

    // #region receiver-not-ready
    // A SEND while the server has no receive posted: the responder answers RNR NAK, naming its
    // min_rnr_timer; the sender waits that long and tries again, rnr_retry times.
    void receiver_not_ready() {
        const double predicted = predicted_rnr_exceeded_s(kLimits);
        fmt::print(
            "client: SEND with no receive posted at the server; predicted error after rnr_retry {} "
            "x "
            "min_rnr_timer {} ({:.2f} ms) = {:.3f} s\n",
            kLimits.rnr_retry, kLimits.min_rnr_timer, rnr_timer_ms(kLimits.min_rnr_timer),
            predicted);
        const auto posted = Clock::now();
        rounds.post_done(r.qp.get(), 200, 0);
        ibv_wc wc = wait_for_any_completion(r.cq.get(), timeout, "the SEND nobody can receive");
        const double took = std::chrono::duration<double>(Clock::now() - posted).count();
        expect_status(wc, IBV_WC_RNR_RETRY_EXC_ERR, "the SEND nobody can receive");
        fmt::print(
            "client: the SEND failed with IBV_WC_RNR_RETRY_EXC_ERR \"{}\" after {:.3f} s "
            "(predicted {:.3f} s, "
            "ratio {:.2f}); the QP is {}\n",
            ibv_wc_status_str(wc.status), took, predicted, took / predicted,
            qp_state_name(query_qp_state(r.qp.get())));
    }
    // #endregion receiver-not-ready

    // Both sides start afresh; over TCP, which waits out the outage by itself (TCP retransmits).
    void recover(TcpExchange& tcp) {
        request_recovery(tcp);
        reset_qp(r.qp.get(), "client");
        const auto start = Clock::now();
        bring_up(tcp);
        fmt::print("client: the QP is {} again ({:.1f} s to reach the server and reconnect)\n",
                   qp_state_name(query_qp_state(r.qp.get())),
                   std::chrono::duration<double>(Clock::now() - start).count());
    }
};

int run_client(const FailureOptions& options) {
    Client client(options);
    auto tcp = TcpExchange::connect_to(options.server_address, options.port, options.timeout());
    client.bring_up(tcp);
    client.verified_round(tcp, 1);
    client.dead_link();
    client.recover(tcp);
    client.verified_round(tcp, 2);
    client.receiver_not_ready();
    client.recover(tcp);
    client.verified_round(tcp, 3);
    send_finished(tcp);
    fmt::print(
        "client: a dead link ended in IBV_WC_RETRY_EXC_ERR and a missing receive in "
        "IBV_WC_RNR_RETRY_EXC_ERR, "
        "each at the time the QP's attributes predict; the QP recovered both times and 3 rounds "
        "were "
        "verified\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("link-failure", [&] {
        CommandLine cli{
            "A dead link and a missing receive: the RC errors, when they come, and recovery",
            "link-failure"};
        FailureOptions options;
        options.timeout_s = 30;  // the waits that span the outage
        add_qp_options(cli, options);
        cli.option("--wait", options.wait_s,
                   "client: seconds to keep writing while waiting for the link to die")
            .range(1.0, 600.0)
            .show_default();
        cli.parse_or_exit(argc, argv);
        return options.server ? run_server(options) : run_client(options);
    });
}
