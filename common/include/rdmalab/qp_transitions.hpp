// A QP's way from RESET to RTS: the attributes and mask each ibv_modify_qp needs (INIT, RTR,
// RTS; RC, UC and UD), printed, applied and confirmed. The file to read to learn bring-up;
// lessons/qp-state-machine writes every step out.
#pragma once

#include "rdmalab/port_address.hpp"
#include "rdmalab/qp_endpoint.hpp"

#include <infiniband/verbs.h>

#include <cstdint>
#include <string_view>

namespace rdmalab {

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
// RESET -> INIT for UD: port, P_Key index 0, and the Q_Key a datagram must carry to be accepted.
QpTransition ud_init_transition(const PortAddress& local, std::uint32_t qkey);
// The address vector of the peer's port: its GID (RoCE, or IB with a GRH) or LID, our source GID
// index, the hop limit. An RC/UC QP holds it from RTR; UD puts it in an address handle.
ibv_ah_attr address_vector(const PortAddress& local, const QpEndpoint& remote);
// INIT -> RTR for a QP of `type`: the peer's address, QPN and first PSN, the path MTU (the
// smaller of both ports'); for RC also max_dest_rd_atomic and min_rnr_timer; for UD the state
// alone.
QpTransition rtr_transition(ibv_qp_type type, const PortAddress& local, const QpEndpoint& remote,
                            const Reliability& reliability);
// RTR -> RTS: this side's first PSN; for RC also timeout, retry_cnt, rnr_retry, max_rd_atomic.
QpTransition rts_transition(ibv_qp_type type, std::uint32_t sq_psn, const Reliability& reliability);
// "who:     LABEL name value, name value…" for the attributes mask selects (and ah_attr's).
void print_qp_attributes(std::string_view who, std::string_view label,
                         const ibv_qp_attr& attributes, int mask);
// "who: INIT -> RTR: ibv_modify_qp(STATE | AV | …)" and the attributes the mask selects: a
// transition announced before it is made.
void print_transition(std::string_view who, ibv_qp_state from, const ibv_qp_attr& attributes,
                      int mask);
// Prints the transition (mask names and values), applies it with ibv_modify_qp, and confirms
// the new state with ibv_query_qp.
void apply_transition(ibv_qp* qp, const QpTransition& transition, std::string_view who);

// ibv_query_qp for the QP's current state.
ibv_qp_state query_qp_state(ibv_qp* qp);

}  // namespace rdmalab
