// RESET → INIT → RTR → RTS: see qp_transitions.hpp.
#include "rdmalab/qp_transitions.hpp"

#include "rdmalab/error.hpp"
#include "rdmalab/trace.hpp"
#include "rdmalab/verbs.hpp"
#include "rdmalab/verbs_names.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace rdmalab {

void print_qp_attributes(std::string_view who, std::string_view label, const ibv_qp_attr& a,
                         int mask) {
    std::vector<std::string> fields;
    auto add = [&](int bit, std::string text) {
        if (mask & bit) fields.push_back(std::move(text));
    };
    add(IBV_QP_STATE, fmt::format("qp_state {}", qp_state_name(a.qp_state)));
    add(IBV_QP_PKEY_INDEX, fmt::format("pkey_index {}", a.pkey_index));
    add(IBV_QP_PORT, fmt::format("port_num {}", a.port_num));
    add(IBV_QP_ACCESS_FLAGS,
        fmt::format("qp_access_flags {}", access_flag_names(a.qp_access_flags)));
    add(IBV_QP_PATH_MTU, fmt::format("path_mtu {}", mtu_bytes(a.path_mtu)));
    add(IBV_QP_DEST_QPN, fmt::format("dest_qp_num {:#x}", a.dest_qp_num));
    add(IBV_QP_RQ_PSN, fmt::format("rq_psn {:#x}", a.rq_psn));
    add(IBV_QP_MAX_DEST_RD_ATOMIC, fmt::format("max_dest_rd_atomic {}", a.max_dest_rd_atomic));
    add(IBV_QP_MIN_RNR_TIMER, fmt::format("min_rnr_timer {}", a.min_rnr_timer));
    add(IBV_QP_SQ_PSN, fmt::format("sq_psn {:#x}", a.sq_psn));
    add(IBV_QP_TIMEOUT, fmt::format("timeout {}", a.timeout));
    add(IBV_QP_RETRY_CNT, fmt::format("retry_cnt {}", a.retry_cnt));
    add(IBV_QP_RNR_RETRY, fmt::format("rnr_retry {}", a.rnr_retry));
    add(IBV_QP_MAX_QP_RD_ATOMIC, fmt::format("max_rd_atomic {}", a.max_rd_atomic));
    std::string line;
    for (const auto& field : fields) line += (line.empty() ? "" : ", ") + field;
    fmt::print("{}:     {}{}\n", who, label, line);
    if (mask & IBV_QP_AV) {
        const ibv_ah_attr& ah = a.ah_attr;
        if (ah.is_global)
            fmt::print(
                "{}:     {}ah_attr: is_global 1, dgid {}, sgid_index {}, hop_limit {}, "
                "port_num {}\n",
                who, label, format_gid(ah.grh.dgid), ah.grh.sgid_index, ah.grh.hop_limit,
                ah.port_num);
        else
            fmt::print("{}:     {}ah_attr: is_global 0, dlid {:#x}, port_num {}\n", who, label,
                       ah.dlid, ah.port_num);
    }
}

void print_transition(std::string_view who, ibv_qp_state from, const ibv_qp_attr& attributes,
                      int mask) {
    fmt::print("{}: {} -> {}: ibv_modify_qp({})\n", who, qp_state_name(from),
               qp_state_name(attributes.qp_state), qp_attr_mask_names(mask));
    print_qp_attributes(who, "", attributes, mask);
}

ibv_qp_state query_qp_state(ibv_qp* qp) {
    ibv_qp_attr attributes{};
    ibv_qp_init_attr init{};
    check_ibv(ibv_query_qp(qp, &attributes, IBV_QP_STATE, &init), "ibv_query_qp");
    return attributes.qp_state;
}

QpTransition init_transition(const PortAddress& local, unsigned access) {
    QpTransition t;
    t.attributes.qp_state = IBV_QPS_INIT;
    t.attributes.pkey_index = 0;
    t.attributes.port_num = local.port;
    t.attributes.qp_access_flags = access;
    t.mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
    return t;
}

QpTransition ud_init_transition(const PortAddress& local, std::uint32_t qkey) {
    QpTransition t;
    t.attributes.qp_state = IBV_QPS_INIT;
    t.attributes.pkey_index = 0;
    t.attributes.port_num = local.port;
    t.attributes.qkey = qkey;
    t.mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
    return t;
}

ibv_ah_attr address_vector(const PortAddress& local, const QpEndpoint& remote) {
    ibv_ah_attr av{};
    av.port_num = local.port;
    if (local.gid_index >= 0) {
        av.is_global = 1;
        av.grh.dgid = remote.gid;
        av.grh.sgid_index = static_cast<std::uint8_t>(local.gid_index);
        av.grh.hop_limit = 64;
        av.grh.traffic_class = local.traffic_class;
    } else {
        av.dlid = remote.lid;
    }
    return av;
}

QpTransition rtr_transition(ibv_qp_type type, const PortAddress& local, const QpEndpoint& remote,
                            const Reliability& reliability) {
    QpTransition t;
    ibv_qp_attr& a = t.attributes;
    a.qp_state = IBV_QPS_RTR;
    t.mask = IBV_QP_STATE;
    if (type == IBV_QPT_UD) return t;  // a UD QP has no peer: each SEND names its own
    a.path_mtu = std::min(local.active_mtu, remote.active_mtu);
    a.dest_qp_num = remote.qpn;
    a.rq_psn = remote.psn;
    a.ah_attr = address_vector(local, remote);
    t.mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
    if (type == IBV_QPT_RC) {
        a.max_dest_rd_atomic = reliability.max_dest_rd_atomic;
        a.min_rnr_timer = reliability.min_rnr_timer;
        t.mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
    }
    return t;
}

QpTransition rts_transition(ibv_qp_type type, std::uint32_t sq_psn,
                            const Reliability& reliability) {
    QpTransition t;
    ibv_qp_attr& a = t.attributes;
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = sq_psn;
    t.mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
    if (type == IBV_QPT_RC) {
        a.timeout = reliability.timeout;
        a.retry_cnt = reliability.retry_cnt;
        a.rnr_retry = reliability.rnr_retry;
        a.max_rd_atomic = reliability.max_rd_atomic;
        t.mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
    }
    return t;
}

void apply_transition(ibv_qp* qp, const QpTransition& transition, std::string_view who) {
    const ibv_qp_state from = query_qp_state(qp);
    const ibv_qp_state to = transition.attributes.qp_state;
    print_transition(who, from, transition.attributes, transition.mask);
    ibv_qp_attr attributes = transition.attributes;  // ibv_modify_qp takes a non-const pointer
    check_ibv(ibv_modify_qp(qp, &attributes, transition.mask),
              fmt::format("ibv_modify_qp({} -> {})", qp_state_name(from), qp_state_name(to)));
    trace::modify_qp(qp, from, to);
    const ibv_qp_state now = query_qp_state(qp);
    if (now != to)
        fail(fmt::format("ibv_query_qp says the QP is {}, not {}", qp_state_name(now),
                         qp_state_name(to)));
    fmt::print("{}:     ibv_query_qp: qp_state {}\n", who, qp_state_name(now));
}

}  // namespace rdmalab
