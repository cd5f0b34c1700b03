// Connecting a queue pair by hand, without rdma_cm: the verbs objects of one connection, the
// endpoint records swapped over TCP, and the transitions applied in order (connect_qp). The
// pieces live in qp_endpoint.hpp (the record), port_address.hpp (device, port, GID),
// qp_transitions.hpp (RESET→INIT→RTR→RTS, printed) and verbs_names.hpp (names);
// lessons/qp-state-machine writes every step out; uc, error-recovery and the wire lessons reuse
// them (error-recovery and link-failure through qp_recovery.hpp).
#pragma once

#include "rdmalab/options.hpp"
#include "rdmalab/port_address.hpp"
#include "rdmalab/qp_endpoint.hpp"
#include "rdmalab/qp_transitions.hpp"
#include "rdmalab/tcp_exchange.hpp"
#include "rdmalab/verbs.hpp"
#include "rdmalab/verbs_names.hpp"

#include <infiniband/verbs.h>

#include <cstdint>
#include <string_view>

namespace rdmalab {

// Sends our record, receives the peer's and validates it (decode, link layer, LID); prints it.
QpEndpoint exchange_endpoints(TcpExchange& tcp, const PortAddress& local, const QpEndpoint& ours,
                              PeerBuffer theirs, std::string_view who);
// Tells the peer this QP is in RTS and waits until the peer says the same: nothing is sent
// before the other side can receive it.
void exchange_ready(TcpExchange& tcp);

// Everything after INIT: exchange_endpoints, RTR, RTS, exchange_ready. Returns the peer's record.
QpEndpoint connect_qp(ibv_qp* qp, TcpExchange& tcp, const PortAddress& local,
                      const QpEndpoint& ours, PeerBuffer theirs, const Reliability& reliability,
                      std::string_view who);

// ---- The verbs objects of one hand-made connection.

// A PD, one CQ for both queues (send_depth + receive_depth entries) and a QP of `type` on them,
// one SGE per WR; every WR signaled only if it asks. Declared in creation order.
struct QpQueues {
    ProtectionDomain pd;
    CompletionQueue cq;
    QueuePair qp;
};
QpQueues create_qp_queues(ibv_context* context, ibv_qp_type type, std::uint32_t send_depth,
                          std::uint32_t receive_depth);

// Declared in creation order, so they are released in reverse (QP, CQ, PD, device).
struct QpResources {
    Context context;
    ProtectionDomain pd;
    CompletionQueue cq;
    QueuePair qp;
    PortAddress local;
};

// open_device, choose_port_address, then create_qp_queues. Throws if options.size does not fit
// the device (max message, max MR, the record's 32-bit length).
QpResources create_qp_resources(const QpOptions& options, ibv_qp_type type,
                                std::uint32_t send_depth, std::uint32_t receive_depth,
                                std::string_view who);

// A QpEndpoint for this side's QP with a fresh random PSN and the given buffer (or none).
QpEndpoint local_endpoint(ibv_qp* qp, const PortAddress& local, std::uint64_t address = 0,
                          std::uint32_t rkey = 0, std::uint32_t length = 0);
QpEndpoint local_endpoint(const QpResources& resources, std::uint64_t address = 0,
                          std::uint32_t rkey = 0, std::uint32_t length = 0);

// ---- Two RC QPs of one process, connected to each other on one port: for lessons that need a
// peer but not a second program (async-events, send-invalidate). Each goes RESET→INIT (with
// the access its peer is granted) →RTR→RTS towards the other; nothing is printed.
void connect_loopback(ibv_qp* first, unsigned first_access, ibv_qp* second, unsigned second_access,
                      const PortAddress& local);

}  // namespace rdmalab
