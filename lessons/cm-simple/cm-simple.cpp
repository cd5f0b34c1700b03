// Lesson: cm-simple — rdma_cm's simplified API next to the event-driven one every other connected
// lesson uses (common/src/connection.cpp): rdma_getaddrinfo names the peer, rdma_create_ep makes
// the id, the PD, the CQs and the QP in one call, rdma_reg_msgs registers, rdma_post_send and
// rdma_post_recv post one buffer each, rdma_get_send_comp and rdma_get_recv_comp wait for one
// completion. Every call is synchronous: what the event-driven API leaves to the program (events,
// arming the CQ, acknowledging), these do inside — including the waiting, which has no timeout.
// Run: cm-simple server | cm-simple client ADDR [-s SIZE]
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/verbs.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <netdb.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

using namespace rdmalab;

namespace {

constexpr std::uint64_t kSeed = 0xc5;

// ---- Owners for what the simplified API hands back.

struct AddrInfoDeleter {
    void operator()(rdma_addrinfo* info) const noexcept { rdma_freeaddrinfo(info); }
};
using AddrInfo = std::unique_ptr<rdma_addrinfo, AddrInfoDeleter>;
struct EndpointDeleter {  // rdma_destroy_ep: the QP, the CQs and channels, then the id
    void operator()(rdma_cm_id* id) const noexcept { rdma_destroy_ep(id); }
};
using Endpoint = std::unique_ptr<rdma_cm_id, EndpointDeleter>;
struct MessagesMrDeleter {
    void operator()(ibv_mr* mr) const noexcept { rdma_dereg_mr(mr); }
};
using MessagesMr = std::unique_ptr<ibv_mr, MessagesMrDeleter>;

// rdma_getaddrinfo fails in two ways: -1 with errno set, or getaddrinfo's own (negative EAI_)
// code passed through with errno untouched.
void check_getaddrinfo(int rc) {
    if (rc == 0) return;
    if (rc == -1 && errno != 0) check_errno(false, "rdma_getaddrinfo");
    fail(fmt::format("rdma_getaddrinfo failed: {}", gai_strerror(rc)));
}

// The simplified API's connection steps block until the CM answers. A watchdog bounds each one:
// if a step takes longer than the timeout, the process says which and exits 1.
const char* g_step = "";
void on_alarm(int) {
    const std::string line = fmt::format(
        "cm-simple: {} took longer than the timeout (the simplified API's calls wait "
        "without one; this lesson's watchdog stopped it)\n",
        g_step);
    (void)!write(STDERR_FILENO, line.data(), line.size());
    _exit(1);
}
struct Watchdog {
    Watchdog(const char* step, std::chrono::milliseconds timeout) {
        g_step = step;
        std::signal(SIGALRM, on_alarm);
        alarm(static_cast<unsigned>((timeout.count() + 999) / 1000));
    }
    ~Watchdog() { alarm(0); }
};

// #region completion-with-timeout
// rdma_get_recv_comp polls the CQ, arms it, polls again and then sleeps in ibv_get_cq_event on
// the id's completion channel. With that channel's fd made non-blocking, the sleep returns
// EAGAIN instead, and the program waits on the fd with poll() — with a limit — and calls again.
ibv_wc wait_for_completion(rdma_cm_id* id, bool receive, std::chrono::milliseconds timeout,
                           const char* what) {
    ibv_comp_channel* channel = receive ? id->recv_cq_channel : id->send_cq_channel;
    const int flags = fcntl(channel->fd, F_GETFL);
    check_errno(flags >= 0 && fcntl(channel->fd, F_SETFL, flags | O_NONBLOCK) == 0, "fcntl");
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    ibv_wc wc{};
    for (;;) {
        const int found = receive ? rdma_get_recv_comp(id, &wc) : rdma_get_send_comp(id, &wc);
        if (found > 0) break;
        check_errno(found < 0 && errno == EAGAIN,
                    receive ? "rdma_get_recv_comp" : "rdma_get_send_comp");
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd ready{.fd = channel->fd, .events = POLLIN, .revents = 0};
        if (left.count() <= 0 || poll(&ready, 1, static_cast<int>(left.count())) == 0)
            fail(fmt::format("{}: no completion within {:.1f} s", what, timeout.count() / 1000.0));
    }
    if (wc.status != IBV_WC_SUCCESS)
        fail(fmt::format("{}: {} (status {})", what, ibv_wc_status_str(wc.status),
                         static_cast<int>(wc.status)));
    return wc;
}
// #endregion completion-with-timeout

// The QP every endpoint gets: rdma_create_ep creates it from these attributes.
ibv_qp_init_attr queue_attributes() {
    ibv_qp_init_attr attributes{};
    attributes.cap.max_send_wr = attributes.cap.max_recv_wr = 2;
    attributes.cap.max_send_sge = attributes.cap.max_recv_sge = 1;
    attributes.qp_type = IBV_QPT_RC;
    attributes.sq_sig_all = 1;  // rdma_get_send_comp waits for a completion of every send
    return attributes;
}

int run_server(const ConnectionOptions& options) {
    // #region server-ep
    // rdma_getaddrinfo with RAI_PASSIVE: an address to listen on (all, or --bind); rdma_create_ep
    // makes the listening id. The QP attributes given here are for the ids it will accept.
    rdma_addrinfo hints{};
    hints.ai_flags = RAI_PASSIVE;
    hints.ai_port_space = RDMA_PS_TCP;
    rdma_addrinfo* found = nullptr;
    const std::string port = std::to_string(options.port);
    check_getaddrinfo(
        rdma_getaddrinfo(options.bind_address.empty() ? nullptr : options.bind_address.c_str(),
                         port.c_str(), &hints, &found));
    AddrInfo info{found};
    ibv_qp_init_attr attributes = queue_attributes();
    rdma_cm_id* raw = nullptr;
    check_errno(rdma_create_ep(&raw, info.get(), nullptr, &attributes) == 0, "rdma_create_ep");
    Endpoint listener{raw};
    check_errno(rdma_listen(listener.get(), 1) == 0, "rdma_listen");
    // #endregion server-ep
    fmt::print("server: listening on {} port {}\n",
               options.bind_address.empty() ? "*" : options.bind_address, options.port);
    std::fflush(stdout);

    // rdma_get_request blocks until a client asks; wait on the id's channel first, with a limit.
    pollfd ready{.fd = listener->channel->fd, .events = POLLIN, .revents = 0};
    if (poll(&ready, 1, static_cast<int>(options.accept_timeout().count())) != 1)
        fail(fmt::format("no client within {:.0f} s", options.accept_timeout_s));
    // #region server-accept
    // The request arrives as a new id that already has its QP (from the listener's attributes).
    check_errno(rdma_get_request(listener.get(), &raw) == 0, "rdma_get_request");
    Endpoint id{raw};
    Buffer message(options.size);
    MessagesMr mr{rdma_reg_msgs(id.get(), message.data(), message.size())};  // LOCAL_WRITE
    check_ptr(mr.get(), "rdma_reg_msgs");
    check_errno(rdma_post_recv(id.get(), nullptr, message.data(), message.size(), mr.get()) == 0,
                "rdma_post_recv");
    {
        Watchdog watchdog("rdma_accept", options.timeout());
        check_errno(rdma_accept(id.get(), nullptr) == 0, "rdma_accept");  // until ESTABLISHED
    }
    const ibv_wc wc = wait_for_completion(id.get(), true, options.timeout(), "the client's SEND");
    // #endregion server-accept
    if (wc.byte_len != message.size())
        fail(fmt::format("the client sent {} bytes, this server expects {}", wc.byte_len,
                         message.size()));
    if (auto bad = find_pattern_mismatch(message.bytes(), kSeed))
        fail(fmt::format("byte {} of the message is not the client's", *bad));
    fmt::print("server: received and verified {} bytes (rdma_post_recv, rdma_get_recv_comp)\n",
               wc.byte_len);

    // The reply: the same buffer sent back, so the client can check the round trip.
    check_errno(rdma_post_send(id.get(), nullptr, message.data(), message.size(), mr.get(), 0) == 0,
                "rdma_post_send");
    wait_for_completion(id.get(), false, options.timeout(), "the reply");
    {
        Watchdog watchdog("rdma_disconnect", options.timeout());
        rdma_disconnect(id.get());
    }
    fmt::print("server: replied and disconnected\n");
    return 0;
}

int run_client(const ConnectionOptions& options) {
    // #region client-ep
    // rdma_getaddrinfo resolves the server's address; rdma_create_ep then resolves the address
    // and the route, creates the id, a PD, CQs with channels and the QP — one call for what the
    // event-driven API takes seven steps and three awaited events to do.
    rdma_addrinfo hints{};
    hints.ai_port_space = RDMA_PS_TCP;
    rdma_addrinfo* found = nullptr;
    const std::string port = std::to_string(options.port);
    check_getaddrinfo(
        rdma_getaddrinfo(options.server_address.c_str(), port.c_str(), &hints, &found));
    AddrInfo info{found};
    ibv_qp_init_attr attributes = queue_attributes();
    rdma_cm_id* raw = nullptr;
    {
        Watchdog watchdog("rdma_create_ep (address and route resolution)", options.timeout());
        check_errno(rdma_create_ep(&raw, info.get(), nullptr, &attributes) == 0, "rdma_create_ep");
    }
    Endpoint id{raw};
    // #endregion client-ep
    Buffer message(options.size), reply(options.size);
    fill_pattern(message.bytes(), kSeed);
    MessagesMr message_mr{rdma_reg_msgs(id.get(), message.data(), message.size())};
    check_ptr(message_mr.get(), "rdma_reg_msgs(message)");
    MessagesMr reply_mr{rdma_reg_msgs(id.get(), reply.data(), reply.size())};
    check_ptr(reply_mr.get(), "rdma_reg_msgs(reply)");

    // #region client-exchange
    check_errno(rdma_post_recv(id.get(), nullptr, reply.data(), reply.size(), reply_mr.get()) == 0,
                "rdma_post_recv");
    {
        Watchdog watchdog("rdma_connect", options.timeout());
        check_errno(rdma_connect(id.get(), nullptr) == 0, "rdma_connect");  // until ESTABLISHED
    }
    check_errno(
        rdma_post_send(id.get(), nullptr, message.data(), message.size(), message_mr.get(), 0) == 0,
        "rdma_post_send");
    wait_for_completion(id.get(), false, options.timeout(), "the SEND");
    const ibv_wc wc = wait_for_completion(id.get(), true, options.timeout(), "the reply");
    // #endregion client-exchange
    if (wc.byte_len != reply.size() || find_pattern_mismatch(reply.bytes(), kSeed))
        fail("the reply is not the message that was sent");
    fmt::print(
        "client: sent {} bytes and got them back, verified, with the simplified API alone (no "
        "event loop, no CQ handling)\n",
        reply.size());
    {
        Watchdog watchdog("rdma_disconnect", options.timeout());
        rdma_disconnect(id.get());
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("cm-simple", [&] {
        CommandLine cli{"rdma_cm's simplified API: rdma_create_ep, rdma_post_send, rdma_get_*_comp",
                        "cm-simple"};
        ConnectionOptions options;
        cli.add_connection_options(options);
        cli.parse_or_exit(argc, argv);
        // rdma_getaddrinfo picks device, port and GID from the address: nothing to choose them by.
        if (!options.device.empty() || options.gid_index >= 0)
            fail(
                "-d and --gid-index are not used here: the simplified API picks the device and "
                "GID from the address");
        return options.server ? run_server(options) : run_client(options);
    });
}
