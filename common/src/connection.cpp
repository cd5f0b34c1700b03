// rdma_cm connection setup shared by the connected lessons: see connection.hpp.
#include "rdmalab/connection.hpp"

#include "rdmalab/error.hpp"
#include "rdmalab/trace.hpp"

#include <fmt/core.h>
#include <poll.h>

#include <algorithm>
#include <cstring>
#include <optional>

namespace rdmalab {

using std::chrono::milliseconds;

namespace {

constexpr int kResolveTimeoutMs =
    2000;  // rdma_resolve_addr / rdma_resolve_route give up after this

// IB/RoCE CM carries at most 56 bytes of private data in a REQ and 196 in a REP.
constexpr std::size_t kMaxConnectPrivateData = 56;
constexpr std::size_t kMaxAcceptPrivateData = 196;

std::string endpoint_text(const ConnectionOptions& options) {
    const std::string& host =
        options.server ? (options.bind_address.empty() ? std::string("*") : options.bind_address)
                       : options.server_address;
    return fmt::format("{} port {}", host, options.port);
}

}  // namespace

void CmIdDeleter::operator()(rdma_cm_id* id) const noexcept {
    if (rdma_destroy_id(id) != 0) report_release_failure("rdma_destroy_id", errno);
}

// #region cm-event-copy
CmEvent wait_for_cm_event(rdma_event_channel* channel, milliseconds timeout) {
    pollfd ready{.fd = channel->fd, .events = POLLIN, .revents = 0};
    int rc = poll(&ready, 1, static_cast<int>(timeout.count()));
    check_errno(rc >= 0, "poll on the rdma_cm event channel");
    if (rc == 0) fail(fmt::format("no rdma_cm event within {:.1f} s", timeout.count() / 1000.0));
    rdma_cm_event* event = nullptr;
    check_errno(rdma_get_cm_event(channel, &event) == 0, "rdma_get_cm_event");
    CmEvent copy{
        .type = event->event,
        .status = event->status,
        .id = event->id,
        .private_data = {},
        .initiator_depth = event->param.conn.initiator_depth,
        .responder_resources = event->param.conn.responder_resources,
    };
    if (event->param.conn.private_data != nullptr) {
        const auto* bytes = static_cast<const std::byte*>(event->param.conn.private_data);
        copy.private_data.assign(bytes, bytes + event->param.conn.private_data_len);
    }
    rdma_ack_cm_event(event);  // frees event and its private data: only the copy is used below
    trace::cm_event(copy.type, rdma_event_str(copy.type), copy.status);
    return copy;
}
// #endregion cm-event-copy

Connection::Connection(const ConnectionOptions& options) : options_(options) {
    require_device_exists(options_.device);
    channel_.reset(check_ptr(rdma_create_event_channel(), "rdma_create_event_channel"));
}

milliseconds Connection::timeout() const {
    return options_.timeout();
}

namespace {

// The next event, which must be `expected`; anything else becomes a message that says what
// went wrong in the reader's terms (rejected, unreachable, no such address…).
CmEvent expect_cm_event(rdma_event_channel* channel, rdma_cm_event_type expected, milliseconds wait,
                        const ConnectionOptions& options) {
    CmEvent event;
    try {
        event = wait_for_cm_event(channel, wait);
    } catch (const Error& e) {
        fail(fmt::format("waiting for {} from {}: {}", rdma_event_str(expected),
                         endpoint_text(options), e.what()));
    }
    if (event.type == expected) return event;
    const std::string where = endpoint_text(options);
    switch (event.type) {
        case RDMA_CM_EVENT_ADDR_ERROR:
            fail(
                fmt::format("cannot resolve {} to an RDMA device ({}): no RDMA interface reaches "
                            "that address, or no host answers there",
                            where, std::strerror(-event.status)));
        case RDMA_CM_EVENT_ROUTE_ERROR:
            fail(fmt::format("no route to {} ({})", where, std::strerror(-event.status)));
        case RDMA_CM_EVENT_REJECTED:
            fail(
                fmt::format("connection rejected by {} (reject reason {}): is a server running "
                            "there, with matching settings?",
                            where, event.status));
        case RDMA_CM_EVENT_UNREACHABLE:
            fail(fmt::format("{} is unreachable (status {})", where, event.status));
        case RDMA_CM_EVENT_CONNECT_ERROR:
            fail(
                fmt::format("connection to {} failed during the handshake "
                            "(RDMA_CM_EVENT_CONNECT_ERROR, status {}): did the server exit?",
                            where, event.status));
        default:
            fail(fmt::format("expected {} from {}, got {} (status {})", rdma_event_str(expected),
                             where, rdma_event_str(event.type), event.status));
    }
}

}  // namespace

CmEvent Connection::expect_event(rdma_cm_event_type expected, milliseconds wait) {
    return expect_cm_event(channel_.get(), expected, wait, options_);
}

void Connection::require_device() {
    const char* actual = ibv_get_device_name(context()->device);
    if (!options_.device.empty() && options_.device != actual)
        fail(fmt::format("{} is served by device {}, not by -d {}", endpoint_text(options_), actual,
                         options_.device));
}

// #region cm-resolve
Connection Connection::resolve(const ConnectionOptions& options) {
    Connection connection(options);
    rdma_cm_id* id = nullptr;
    check_errno(rdma_create_id(connection.channel_.get(), &id, nullptr, RDMA_PS_TCP) == 0,
                "rdma_create_id");
    connection.id_.reset(id);
    // The traffic class rides in the route rdma_cm resolves next, and in the connect request:
    // the server's QP takes the client's (the IP header's DS field: DSCP and the ECN bits).
    if (options.tclass >= 0) {
        auto tos = static_cast<std::uint8_t>(options.tclass);  // rdma_set_option takes a void*
        check_errno(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof tos) == 0,
                    "rdma_set_option(RDMA_OPTION_ID_TOS)");
    }

    auto server = parse_ip_address(options.server_address, options.port);
    if (!server) fail(fmt::format("'{}' is not a numeric IP address", options.server_address));
    // Address resolution maps the IP address to a local RDMA device and port (and the
    // peer's GID); route resolution fills in the path. Each answers with an event.
    check_errno(rdma_resolve_addr(id, nullptr, reinterpret_cast<sockaddr*>(&*server),
                                  kResolveTimeoutMs) == 0,
                "rdma_resolve_addr");
    connection.expect_event(RDMA_CM_EVENT_ADDR_RESOLVED, milliseconds(kResolveTimeoutMs + 3000));
    check_errno(rdma_resolve_route(id, kResolveTimeoutMs) == 0, "rdma_resolve_route");
    connection.expect_event(RDMA_CM_EVENT_ROUTE_RESOLVED, milliseconds(kResolveTimeoutMs + 3000));
    connection.require_device();
    return connection;
}
// #endregion cm-resolve

Listener::Listener(const ConnectionOptions& options) : options_(options) {
    require_device_exists(options_.device);
    channel_.reset(check_ptr(rdma_create_event_channel(), "rdma_create_event_channel"));
    rdma_cm_id* id = nullptr;
    check_errno(rdma_create_id(channel_.get(), &id, nullptr, RDMA_PS_TCP) == 0, "rdma_create_id");
    id_.reset(id);

    sockaddr_storage local{};
    if (!options.bind_address.empty()) {
        local = *parse_ip_address(options.bind_address, options.port);
    } else {
        auto* any = reinterpret_cast<sockaddr_in*>(&local);
        any->sin_family = AF_INET;
        any->sin_port = htons(options.port);
    }
    if (rdma_bind_addr(id, reinterpret_cast<sockaddr*>(&local)) != 0) {
        int code = errno;
        // rdma_cm reports a port held by another rdma_cm listener as EADDRNOTAVAIL.
        const bool busy =
            code == EADDRINUSE || (code == EADDRNOTAVAIL && options.bind_address.empty());
        fail(fmt::format("rdma_bind_addr({}) failed: {}{}", endpoint_text(options),
                         std::strerror(code),
                         busy                    ? " (is another server running on this port?)"
                         : code == EADDRNOTAVAIL ? " (is that address on this host?)"
                                                 : ""));
    }
    check_errno(rdma_listen(id, 8) == 0, "rdma_listen");
    fmt::print("server: listening on {}\n", endpoint_text(options));
    std::fflush(stdout);
}

// #region cm-next-client
Connection Listener::next_client() {
    Connection connection(options_);
    // The request arrives on the listener's channel; the connection moves its id to its own.
    CmEvent request = expect_cm_event(channel_.get(), RDMA_CM_EVENT_CONNECT_REQUEST,
                                      options_.accept_timeout(), options_);
    connection.id_.reset(request.id);
    check_errno(rdma_migrate_id(request.id, connection.channel_.get()) == 0, "rdma_migrate_id");
    if (!options_.device.empty() &&
        options_.device != ibv_get_device_name(connection.context()->device)) {
        rdma_reject(request.id, nullptr, 0);
        connection.require_device();
    }
    // Remember what the client asked for: accept() answers within these limits. The event
    // reports them from this side's point of view (the kernel swaps the client's fields):
    // responder_resources = the READs the client will issue to us (its initiator depth),
    // initiator_depth = the READs the client will serve for us (its responder resources).
    connection.reads_peer_will_issue_ = request.responder_resources;
    connection.reads_peer_will_serve_ = request.initiator_depth;
    return connection;
}
// #endregion cm-next-client

Connection Connection::wait_for_client(const ConnectionOptions& options) {
    Listener listener(options);
    return listener.next_client();
}

// #region cm-create-queues
void Connection::create_queues(const QueueSizes& sizes) {
    shared_pd_ = sizes.shared_pd;
    shared_cq_ = sizes.shared_cq;
    if (!shared_pd_) pd_.reset(check_ptr(ibv_alloc_pd(context()), "ibv_alloc_pd"));
    if (!shared_cq_)
        cq_.reset(check_ptr(ibv_create_cq(context(), static_cast<int>(sizes.completions), nullptr,
                                          sizes.channel, 0),
                            "ibv_create_cq"));
    ibv_qp_init_attr attributes{};
    attributes.send_cq = cq();
    attributes.recv_cq = cq();
    attributes.srq = sizes.srq;
    attributes.qp_type = sizes.type;
    attributes.sq_sig_all = 0;  // each WR says whether it wants a completion (IBV_SEND_SIGNALED)
    attributes.cap.max_send_wr = sizes.send;
    attributes.cap.max_recv_wr = sizes.srq ? 0 : sizes.recv;
    attributes.cap.max_send_sge = sizes.send_sge;
    attributes.cap.max_recv_sge = sizes.srq ? 0 : sizes.recv_sge;
    attributes.cap.max_inline_data = sizes.max_inline;
    // rdma_create_qp creates the QP and moves it through INIT/RTR/RTS as the connection forms.
    check_errno(rdma_create_qp(id_.get(), pd(), &attributes) == 0, "rdma_create_qp");
    qp_.reset(id_.get());
}
// #endregion cm-create-queues

// #region cm-connect
std::vector<std::byte> Connection::connect(std::span<const std::byte> private_data) {
    if (private_data.size() > kMaxConnectPrivateData)
        fail(fmt::format("{} bytes of private data: a connect request carries at most {}",
                         private_data.size(), kMaxConnectPrivateData));
    ibv_device_attr device{};
    check_ibv(ibv_query_device(context(), &device), "ibv_query_device");
    rdma_conn_param parameters{};
    parameters.private_data = private_data.data();
    parameters.private_data_len = static_cast<std::uint8_t>(private_data.size());
    // RDMA READs (and atomics) this side may have in flight to the peer, and may serve for it.
    parameters.initiator_depth =
        static_cast<std::uint8_t>(std::min(device.max_qp_init_rd_atom, 255));
    parameters.responder_resources =
        static_cast<std::uint8_t>(std::min(device.max_qp_rd_atom, 255));
    // Zero retries would make one lost packet fatal. 7 transport retries; 6 RNR retries
    // (7 would mean "retry forever" when the peer has no receive posted).
    parameters.retry_count = 7;
    parameters.rnr_retry_count = 6;
    check_errno(rdma_connect(id_.get(), &parameters) == 0, "rdma_connect");
    CmEvent established = expect_event(RDMA_CM_EVENT_ESTABLISHED, timeout());
    check_gid_index();
    return established.private_data;
}
// #endregion cm-connect

// #region cm-accept
void Connection::accept(std::span<const std::byte> private_data) {
    if (private_data.size() > kMaxAcceptPrivateData)
        fail(fmt::format("{} bytes of private data: an accept carries at most {}",
                         private_data.size(), kMaxAcceptPrivateData));
    ibv_device_attr device{};
    check_ibv(ibv_query_device(context(), &device), "ibv_query_device");
    rdma_conn_param parameters{};
    parameters.private_data = private_data.data();
    parameters.private_data_len = static_cast<std::uint8_t>(private_data.size());
    // Serve as many READs as the client will issue, within our limit; issue no more than the
    // client will serve.
    parameters.responder_resources =
        static_cast<std::uint8_t>(std::min<int>(device.max_qp_rd_atom, reads_peer_will_issue_));
    parameters.initiator_depth = static_cast<std::uint8_t>(
        std::min<int>(device.max_qp_init_rd_atom, reads_peer_will_serve_));
    parameters.retry_count = 7;
    parameters.rnr_retry_count = 6;
    check_errno(rdma_accept(id_.get(), &parameters) == 0, "rdma_accept");
    expect_event(RDMA_CM_EVENT_ESTABLISHED, timeout());
    check_gid_index();
}
// #endregion cm-accept

// #region cm-disconnect
void Connection::disconnect() {
    if (disconnected_) return wait_for_disconnect();  // the peer's came first: answer it
    check_errno(rdma_disconnect(id_.get()) == 0, "rdma_disconnect");
    expect_event(RDMA_CM_EVENT_DISCONNECTED, timeout());
    disconnected_ = answered_ = true;  // ours was the request
}

void Connection::wait_for_disconnect() {
    if (!disconnected_) expect_event(RDMA_CM_EVENT_DISCONNECTED, timeout());
    disconnected_ = true;
    if (answered_) return;
    // The peer waits for our answer (the CM's DREP), sent now: else only when this id is destroyed.
    check_errno(rdma_disconnect(id_.get()) == 0, "rdma_disconnect(answering the peer's)");
    answered_ = true;
}
// #endregion cm-disconnect

bool Connection::peer_disconnected() {
    if (disconnected_) return true;
    pollfd ready{.fd = channel_->fd, .events = POLLIN, .revents = 0};
    while (poll(&ready, 1, 0) > 0) {
        // Only DISCONNECTED can follow ESTABLISHED on a connected id (TIMEWAIT_EXIT is not
        // delivered to user space for an id that still exists).
        if (wait_for_cm_event(channel_.get(), milliseconds(0)).type == RDMA_CM_EVENT_DISCONNECTED) {
            disconnected_ = true;
            return true;
        }
    }
    return false;
}

// The connection's CQ, watched together with its rdma_cm events: a peer that dies (or hangs up)
// while we wait leaves no completion behind (its QP is gone: nothing ACKs or NAKs), but its
// kernel sends a DREQ, which arrives here as RDMA_CM_EVENT_DISCONNECTED. That is reported at
// once instead of waiting out the timeout. A completion already on its way is still taken.
ibv_wc Connection::wait_for_completion(std::string_view what) {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + timeout();
    // The next completion within `wait`, if any; a failed one is reported as wait_for_completion
    // (verbs.hpp) reports it.
    auto next = [&](milliseconds wait) -> std::optional<ibv_wc> {
        ibv_wc wc{};
        try {
            wc = wait_for_any_completion(cq(), wait, what);
        } catch (const Error&) {
            return std::nullopt;  // none within `wait`
        }
        if (wc.status != IBV_WC_SUCCESS)
            fail(
                fmt::format("{}: work completion failed: {} (status {}, wr_id {}, vendor error "
                            "{:#x})",
                            what, ibv_wc_status_str(wc.status), static_cast<int>(wc.status),
                            wc.wr_id, wc.vendor_err));
        return wc;
    };
    for (;;) {
        const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
        if (left <= milliseconds(0))
            fail(
                fmt::format("{}: no completion within {:.1f} s", what, timeout().count() / 1000.0));
        if (auto wc = next(std::min(left, milliseconds(50)))) return *wc;
        if (!disconnected_ && peer_disconnected()) {
            // The peer's last messages may still be in flight behind its DREQ: a short grace.
            if (auto wc = next(milliseconds(200))) return *wc;
            fail(
                fmt::format("{}: the peer disconnected (RDMA_CM_EVENT_DISCONNECTED) before it "
                            "completed",
                            what));
        }
    }
}

std::size_t Connection::max_message_size() const {
    ibv_port_attr port{};
    check_ibv(ibv_query_port(context(), id_->port_num, &port), "ibv_query_port");
    return port.max_msg_sz;
}

void Connection::require_size_fits(std::size_t size) const {
    ibv_device_attr device{};
    check_ibv(ibv_query_device(context(), &device), "ibv_query_device");
    const std::size_t max_message = max_message_size();
    if (size > std::min<std::size_t>(max_message, device.max_mr_size))
        fail(fmt::format("size {} is larger than {} allows (max message {} bytes, max MR {} bytes)",
                         size, ibv_get_device_name(context()->device), max_message,
                         device.max_mr_size));
}

std::string Connection::path_description() const {
    ibv_qp_attr attributes{};
    ibv_qp_init_attr init{};
    check_ibv(ibv_query_qp(qp(), &attributes, IBV_QP_AV, &init), "ibv_query_qp");
    const unsigned index = attributes.ah_attr.grh.sgid_index;
    ibv_gid_entry entry{};
    check_ibv(ibv_query_gid_ex(context(), id_->port_num, index, &entry, 0), "ibv_query_gid_ex");
    return fmt::format("{} port {}, GID index {} ({} {})", ibv_get_device_name(context()->device),
                       id_->port_num, index, gid_type_name(entry.gid_type), format_gid(entry.gid));
}

void Connection::check_gid_index() {
    if (options_.gid_index < 0) return;
    ibv_qp_attr attributes{};
    ibv_qp_init_attr init{};
    check_ibv(ibv_query_qp(qp(), &attributes, IBV_QP_AV, &init), "ibv_query_qp");
    if (attributes.ah_attr.grh.sgid_index != options_.gid_index)
        fail(fmt::format(
            "rdma_cm chose GID index {}, not --gid-index {}: rdma_cm derives the GID from "
            "the IP address, so pick the address that GID carries",
            attributes.ah_attr.grh.sgid_index, options_.gid_index));
}

}  // namespace rdmalab
