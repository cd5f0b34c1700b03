// Connecting a queue pair by hand, without rdma_cm: the endpoint record both sides swap over TCP
// (QPN, PSN, GID or LID, MTU, buffer), the choice of source GID, and RESET→INIT→RTR→RTS.
// lessons/qp-state-machine writes every step out; the uc and error-recovery lessons reuse them.
#pragma once

#include "rdmalab/options.hpp"
#include "rdmalab/tcp_exchange.hpp"
#include "rdmalab/verbs.hpp"

#include <infiniband/verbs.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>

namespace rdmalab {

// The connection options plus -i/--ib-port. Without rdma_cm there is no IP address to pick the
// device, so -d chooses it (default: the first device) and --gid-index the source GID.
struct QpOptions : ConnectionOptions {
    std::uint8_t ib_port = 1;
};
void add_qp_options(CommandLine& cli, QpOptions& options);

// ---- The endpoint record: what one side must know about the other to reach its QP.

// Whether the record carries a buffer (address, rkey, length) the peer may use.
enum class PeerBuffer { kAdvertised, kNone };

struct QpEndpoint {
    ibv_qp_type qp_type = IBV_QPT_RC;  // both sides must use the same transport
    std::uint8_t link_layer = IBV_LINK_LAYER_ETHERNET;
    ibv_mtu active_mtu = IBV_MTU_1024;  // the path MTU is the smaller of the two sides'
    std::uint32_t qpn = 0;              // 24 bits
    std::uint32_t psn = 0;              // 24 bits: the first packet sequence number it sends
    std::uint16_t lid = 0;              // InfiniBand: the port's LID
    ibv_gid gid{};                      // RoCE (or IB with a GRH): the source GID it uses
    std::uint64_t address = 0;
    std::uint32_t rkey = 0;
    std::uint32_t length = 0;  // 0 with PeerBuffer::kNone
};

// Wire format, 52 bytes, big-endian: "RDQP" | version 1 | QP type | link layer | MTU |
// QPN (4) | PSN (4) | LID (2) | 2 reserved (0) | GID (16) | address (8) | rkey (4) | length (4).
inline constexpr std::size_t kQpEndpointWireSize = 52;
using QpEndpointWire = std::array<std::byte, kQpEndpointWireSize>;

QpEndpointWire encode_qp_endpoint(const QpEndpoint& endpoint);

// Either the decoded record or the reason it was refused: wrong size, magic or version, a QP
// type other than expected_type, a QPN or PSN wider than 24 bits, an unknown MTU or link layer,
// a buffer of length 0 or one that wraps (kAdvertised), or a buffer where none belongs (kNone).
std::variant<QpEndpoint, std::string> decode_qp_endpoint(std::span<const std::byte> bytes,
                                                         ibv_qp_type expected_type,
                                                         PeerBuffer expected_buffer);
QpEndpoint decode_qp_endpoint_or_throw(std::span<const std::byte> bytes, ibv_qp_type expected_type,
                                       PeerBuffer expected_buffer);

// A random 24-bit starting PSN, so packets of an earlier connection cannot pass as this one's.
std::uint32_t random_psn();

// ---- Device, port and source address.

// ibv_open_device on the device named -d, or on the first device when name is empty.
Context open_device(const std::string& name);

// What this side's port offers, and how the peer will address it.
struct PortAddress {
    std::uint8_t port = 1;
    std::uint8_t link_layer = IBV_LINK_LAYER_ETHERNET;
    ibv_mtu active_mtu = IBV_MTU_1024;
    std::uint32_t max_message_size = 0;
    std::uint16_t lid = 0;
    int gid_index = -1;  // -1: no GRH (InfiniBand, routed by LID)
    ibv_gid gid{};
    std::string description;  // "rxe0 port 1, GID index 1 (RoCE v2 ::ffff:198.51.100.1)"
};

// ibv_query_port, then the source address: on RoCE the RoCE v2 GID that carries an IPv4 address
// (::ffff:a.b.c.d), found with ibv_query_gid_table, or requested_gid_index (ibv_query_gid_ex);
// on InfiniBand the LID, with a GRH only if a GID index was requested. Throws if the port is
// not active or no such GID exists.
PortAddress choose_port_address(ibv_context* context, std::uint8_t port, int requested_gid_index);

// ---- Printing what a QP is and what is done to it.

const char* qp_state_name(ibv_qp_state state);   // "RESET", "INIT", "RTR", "RTS", …
std::string qp_attr_mask_names(int mask);        // "STATE | PKEY_INDEX | PORT | ACCESS_FLAGS"
std::string access_flag_names(unsigned access);  // "REMOTE_WRITE", "none"
// "who:     LABEL name value, name value…" for the attributes mask selects (and ah_attr's).
void print_qp_attributes(std::string_view who, std::string_view label,
                         const ibv_qp_attr& attributes, int mask);
// "IBV_WC_REM_ACCESS_ERR": the enum's name (ibv_wc_status_str gives the words).
std::string wc_status_name(ibv_wc_status status);
// ibv_query_qp for the QP's current state.
ibv_qp_state query_qp_state(ibv_qp* qp);

// ---- The transitions, for lessons that reuse them (qp-state-machine writes them out).

// The RC-only attributes (UC sets none of them: it has no acknowledgements, no retries, no
// READ or atomics).
struct Reliability {
    std::uint8_t timeout = 14;   // wait 4.096 µs × 2^14 ≈ 67 ms for an ACK, then retransmit
    std::uint8_t retry_cnt = 7;  // retransmissions before IBV_WC_RETRY_EXC_ERR
    std::uint8_t rnr_retry = 6;  // receiver-not-ready retries (7 would be: forever)
    std::uint8_t min_rnr_timer = 12;      // how long a sender that met no receive waits: 0.64 ms
    std::uint8_t max_rd_atomic = 0;       // READs/atomics this QP may have in flight as requester
    std::uint8_t max_dest_rd_atomic = 0;  // … and serves as responder
};

// One ibv_modify_qp call: the attributes and the mask that says which of them to apply.
struct QpTransition {
    ibv_qp_attr attributes{};
    int mask = 0;
};

// RESET -> INIT: port, P_Key index 0, and what the PEER may do through this QP (access).
QpTransition init_transition(const PortAddress& local, unsigned access);
// INIT -> RTR for a QP of `type`: the peer's address, QPN and first PSN, the path MTU (the
// smaller of both ports'); for RC also max_dest_rd_atomic and min_rnr_timer.
QpTransition rtr_transition(ibv_qp_type type, const PortAddress& local, const QpEndpoint& remote,
                            const Reliability& reliability);
// RTR -> RTS: this side's first PSN; for RC also timeout, retry_cnt, rnr_retry, max_rd_atomic.
QpTransition rts_transition(ibv_qp_type type, std::uint32_t sq_psn, const Reliability& reliability);
// Prints the transition (mask names and values), applies it with ibv_modify_qp, and confirms
// the new state with ibv_query_qp.
void apply_transition(ibv_qp* qp, const QpTransition& transition, std::string_view who);

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

// Declared in creation order, so they are released in reverse (QP, CQ, PD, device).
struct QpResources {
    Context context;
    ProtectionDomain pd;
    CompletionQueue cq;
    QueuePair qp;
    PortAddress local;
};

// open_device, choose_port_address, ibv_alloc_pd, ibv_create_cq, ibv_create_qp (one CQ for
// both queues, every WR signaled only if it asks). Throws if options.size does not fit the
// device (max message, max MR, the record's 32-bit length).
QpResources create_qp_resources(const QpOptions& options, ibv_qp_type type,
                                std::uint32_t send_depth, std::uint32_t receive_depth,
                                std::string_view who);

// A QpEndpoint for this side's QP with a fresh random PSN and the given buffer (or none).
QpEndpoint local_endpoint(const QpResources& resources, std::uint64_t address = 0,
                          std::uint32_t rkey = 0, std::uint32_t length = 0);

// ---- Small control words (big-endian) over the TCP exchange, to keep both sides in step.
void send_word(TcpExchange& tcp, std::uint32_t word);
std::uint32_t receive_word(TcpExchange& tcp);
// Throws, naming what was expected, unless the peer's next word is `expected`.
void expect_word(TcpExchange& tcp, std::uint32_t expected, std::string_view what);

}  // namespace rdmalab
