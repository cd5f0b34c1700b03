// One RC connection set up through rdma_cm, in the steps every connected lesson takes:
// resolve (client) or wait for a request (server); create PD, CQ and QP; connect or accept
// with private data; disconnect. Read src/connection.cpp once: it is the rdma_cm lesson.
#pragma once

#include "rdmalab/options.hpp"
#include "rdmalab/verbs.hpp"

#include <rdma/rdma_cma.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace rdmalab {

struct EventChannelDeleter {
    void operator()(rdma_event_channel* channel) const noexcept {
        rdma_destroy_event_channel(channel);
    }
};
using EventChannel = std::unique_ptr<rdma_event_channel, EventChannelDeleter>;

struct CmIdDeleter {
    void operator()(rdma_cm_id* id) const noexcept;
};
using CmId = std::unique_ptr<rdma_cm_id, CmIdDeleter>;

// The QP rdma_create_qp attached to an id; released with rdma_destroy_qp.
struct CmQpDeleter {
    void operator()(rdma_cm_id* id) const noexcept { rdma_destroy_qp(id); }
};
using CmQp = std::unique_ptr<rdma_cm_id, CmQpDeleter>;

// A copy of an rdma_cm event, taken BEFORE rdma_ack_cm_event: acking frees the event and the
// private data it points to.
struct CmEvent {
    rdma_cm_event_type type{};
    int status = 0;
    rdma_cm_id* id = nullptr;  // for CONNECT_REQUEST: the new id that represents this client
    std::vector<std::byte> private_data;
    // A connect request's read credits, as the kernel reports them to the side receiving it:
    // responder_resources = READs the peer will issue to us, initiator_depth = READs it serves.
    std::uint8_t initiator_depth = 0;
    std::uint8_t responder_resources = 0;
};

// Waits up to timeout for the next event on channel; throws on timeout or failure.
CmEvent wait_for_cm_event(rdma_event_channel* channel, std::chrono::milliseconds timeout);

// What create_queues builds. Shared objects (a PD, CQ or SRQ that several connections use)
// are passed in and then neither created nor released by the connection.
struct QueueSizes {
    std::uint32_t send = 16;  // max outstanding send-queue WRs
    std::uint32_t recv = 16;  // max outstanding receive WRs (ignored with an SRQ)
    std::uint32_t completions = 32;
    ibv_qp_type type = IBV_QPT_RC;
    std::uint32_t send_sge = 1;
    std::uint32_t recv_sge = 1;
    std::uint32_t max_inline = 0;         // bytes IBV_SEND_INLINE may carry
    ibv_comp_channel* channel = nullptr;  // completion events instead of busy polling
    ibv_pd* shared_pd = nullptr;
    ibv_cq* shared_cq = nullptr;
    ibv_srq* srq = nullptr;
};

class Connection;

// A listening rdma_cm id. Each client it accepts gets its own event channel (rdma_migrate_id),
// so a server can hold several connections and wait on each independently.
class Listener {
  public:
    // rdma_create_event_channel, rdma_create_id, rdma_bind_addr, rdma_listen; prints
    // "server: listening on …" (tests and the tour wait for that line).
    explicit Listener(const ConnectionOptions& options);
    // Waits for the next CONNECT_REQUEST (options.accept_timeout_s) and returns its connection.
    Connection next_client();

  private:
    ConnectionOptions options_;
    EventChannel channel_;
    CmId id_;
};

class Connection {
  public:
    // Client step 1: rdma_resolve_addr then rdma_resolve_route; afterwards context() is known.
    static Connection resolve(const ConnectionOptions& options);
    // Server step 1: listen and wait for one client's connection request (see Listener for more).
    static Connection wait_for_client(const ConnectionOptions& options);

    // Step 2: ibv_alloc_pd, ibv_create_cq, rdma_create_qp (one CQ for sends and receives),
    // each unless given shared in sizes.
    void create_queues(const QueueSizes& sizes);

    // Step 3, client: rdma_connect with our private data; returns the server's private data.
    std::vector<std::byte> connect(std::span<const std::byte> private_data = {});
    // Step 3, server: rdma_accept with our private data; returns once ESTABLISHED.
    void accept(std::span<const std::byte> private_data = {});

    // Step 4: rdma_disconnect and wait for DISCONNECTED (either side may start it).
    void disconnect();
    // Wait for the peer to disconnect.
    void wait_for_disconnect();

    // Polls the connection's CQ with the connection's timeout (see wait_for_completion); a peer
    // that disconnects meanwhile (RDMA_CM_EVENT_DISCONNECTED: it hung up, or died) ends the wait.
    ibv_wc wait_for_completion(std::string_view what);
    // True once the peer has disconnected; looks at the rdma_cm events without waiting.
    bool peer_disconnected();

    ibv_context* context() const { return id_->verbs; }
    ibv_pd* pd() const { return pd_ ? pd_.get() : shared_pd_; }
    ibv_cq* cq() const { return cq_ ? cq_.get() : shared_cq_; }
    ibv_qp* qp() const { return id_->qp; }
    const ConnectionOptions& options() const { return options_; }
    // Largest message the port carries (ibv_port_attr::max_msg_sz).
    std::size_t max_message_size() const;
    // Throws unless size fits this device's limits for one message and one MR.
    void require_size_fits(std::size_t size) const;
    // "rxe0 port 1, GID index 1 (RoCE v2 ::ffff:198.51.100.1)": what the connection really uses.
    std::string path_description() const;

  private:
    friend class Listener;
    explicit Connection(const ConnectionOptions& options);
    void require_device();
    void check_gid_index();
    CmEvent expect_event(rdma_cm_event_type expected, std::chrono::milliseconds timeout);
    std::chrono::milliseconds timeout() const;

    ConnectionOptions options_;
    // Declared in creation order: destroyed in reverse (QP, CQ, PD, ids, channel).
    EventChannel channel_;
    CmId id_;
    ProtectionDomain pd_;
    CompletionQueue cq_;
    CmQp qp_;
    ibv_pd* shared_pd_ = nullptr;
    ibv_cq* shared_cq_ = nullptr;
    std::uint8_t reads_peer_will_issue_ = 0;  // from the client's connect request
    std::uint8_t reads_peer_will_serve_ = 0;
    bool disconnected_ = false;
    bool answered_ = false;  // the CM's disconnect handshake done from this side
};

}  // namespace rdmalab
