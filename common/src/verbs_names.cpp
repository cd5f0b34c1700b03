// Names of verbs values: see verbs_names.hpp.
#include "rdmalab/verbs_names.hpp"

#include <fmt/core.h>

namespace rdmalab {

const char* qp_type_name(unsigned type) {
    switch (type) {
        case IBV_QPT_RC:
            return "RC";
        case IBV_QPT_UC:
            return "UC";
        case IBV_QPT_UD:
            return "UD";
    }
    return "unknown";
}

const char* send_opcode_name(ibv_wr_opcode opcode) {
    switch (opcode) {
        case IBV_WR_RDMA_WRITE:
            return "RDMA_WRITE";
        case IBV_WR_RDMA_WRITE_WITH_IMM:
            return "RDMA_WRITE_WITH_IMM";
        case IBV_WR_SEND:
            return "SEND";
        case IBV_WR_SEND_WITH_IMM:
            return "SEND_WITH_IMM";
        case IBV_WR_RDMA_READ:
            return "RDMA_READ";
        case IBV_WR_ATOMIC_CMP_AND_SWP:
            return "ATOMIC_CMP_AND_SWP";
        case IBV_WR_ATOMIC_FETCH_AND_ADD:
            return "ATOMIC_FETCH_AND_ADD";
        case IBV_WR_LOCAL_INV:
            return "LOCAL_INV";
        case IBV_WR_BIND_MW:
            return "BIND_MW";
        case IBV_WR_SEND_WITH_INV:
            return "SEND_WITH_INV";
        default:
            return "OTHER";
    }
}

const char* wc_opcode_name(ibv_wc_opcode opcode) {
    switch (opcode) {
        case IBV_WC_SEND:
            return "SEND";
        case IBV_WC_RDMA_WRITE:
            return "RDMA_WRITE";
        case IBV_WC_RDMA_READ:
            return "RDMA_READ";
        case IBV_WC_COMP_SWAP:
            return "COMP_SWAP";
        case IBV_WC_FETCH_ADD:
            return "FETCH_ADD";
        case IBV_WC_BIND_MW:
            return "BIND_MW";
        case IBV_WC_LOCAL_INV:
            return "LOCAL_INV";
        case IBV_WC_RECV:
            return "RECV";
        case IBV_WC_RECV_RDMA_WITH_IMM:
            return "RECV_RDMA_WITH_IMM";
        default:
            return "OTHER";
    }
}

const char* qp_state_name(ibv_qp_state state) {
    switch (state) {
        case IBV_QPS_RESET:
            return "RESET";
        case IBV_QPS_INIT:
            return "INIT";
        case IBV_QPS_RTR:
            return "RTR";
        case IBV_QPS_RTS:
            return "RTS";
        case IBV_QPS_SQD:
            return "SQD";
        case IBV_QPS_SQE:
            return "SQE";
        case IBV_QPS_ERR:
            return "ERROR";
        case IBV_QPS_UNKNOWN:
            return "UNKNOWN";
    }
    return "unknown state";
}

std::string qp_attr_mask_names(int mask) {
    // In the order a reader meets them: INIT's, then RTR's, then RTS's, then the rest.
    static constexpr std::pair<int, const char*> kNames[] = {
        {IBV_QP_STATE, "STATE"},
        {IBV_QP_CUR_STATE, "CUR_STATE"},
        {IBV_QP_PKEY_INDEX, "PKEY_INDEX"},
        {IBV_QP_PORT, "PORT"},
        {IBV_QP_ACCESS_FLAGS, "ACCESS_FLAGS"},
        {IBV_QP_QKEY, "QKEY"},
        {IBV_QP_AV, "AV"},
        {IBV_QP_PATH_MTU, "PATH_MTU"},
        {IBV_QP_DEST_QPN, "DEST_QPN"},
        {IBV_QP_RQ_PSN, "RQ_PSN"},
        {IBV_QP_MAX_DEST_RD_ATOMIC, "MAX_DEST_RD_ATOMIC"},
        {IBV_QP_MIN_RNR_TIMER, "MIN_RNR_TIMER"},
        {IBV_QP_SQ_PSN, "SQ_PSN"},
        {IBV_QP_TIMEOUT, "TIMEOUT"},
        {IBV_QP_RETRY_CNT, "RETRY_CNT"},
        {IBV_QP_RNR_RETRY, "RNR_RETRY"},
        {IBV_QP_MAX_QP_RD_ATOMIC, "MAX_QP_RD_ATOMIC"},
        {IBV_QP_ALT_PATH, "ALT_PATH"},
        {IBV_QP_PATH_MIG_STATE, "PATH_MIG_STATE"},
        {IBV_QP_CAP, "CAP"},
        {IBV_QP_EN_SQD_ASYNC_NOTIFY, "EN_SQD_ASYNC_NOTIFY"},
    };
    std::string names;
    for (auto [bit, name] : kNames) {
        if (!(mask & bit)) continue;
        names += names.empty() ? "IBV_QP_" : " | IBV_QP_";
        names += name;
        mask &= ~bit;
    }
    if (mask != 0) names += fmt::format("{}{:#x}", names.empty() ? "" : " | ", mask);
    return names.empty() ? "0" : names;
}

std::string access_flag_names(unsigned access) {
    static constexpr std::pair<unsigned, const char*> kNames[] = {
        {IBV_ACCESS_LOCAL_WRITE, "LOCAL_WRITE"}, {IBV_ACCESS_REMOTE_WRITE, "REMOTE_WRITE"},
        {IBV_ACCESS_REMOTE_READ, "REMOTE_READ"}, {IBV_ACCESS_REMOTE_ATOMIC, "REMOTE_ATOMIC"},
        {IBV_ACCESS_MW_BIND, "MW_BIND"},         {IBV_ACCESS_ZERO_BASED, "ZERO_BASED"},
        {IBV_ACCESS_ON_DEMAND, "ON_DEMAND"},     {IBV_ACCESS_RELAXED_ORDERING, "RELAXED_ORDERING"},
    };
    std::string names;
    for (auto [bit, name] : kNames) {
        if (!(access & bit)) continue;
        names += names.empty() ? "" : " | ";
        names += name;
        access &= ~bit;
    }
    if (access != 0) names += fmt::format("{}{:#x}", names.empty() ? "" : " | ", access);
    return names.empty() ? "none" : names;
}

std::string wc_status_name(ibv_wc_status status) {
    switch (status) {
        case IBV_WC_SUCCESS:
            return "IBV_WC_SUCCESS";
        case IBV_WC_LOC_LEN_ERR:
            return "IBV_WC_LOC_LEN_ERR";
        case IBV_WC_LOC_QP_OP_ERR:
            return "IBV_WC_LOC_QP_OP_ERR";
        case IBV_WC_LOC_PROT_ERR:
            return "IBV_WC_LOC_PROT_ERR";
        case IBV_WC_WR_FLUSH_ERR:
            return "IBV_WC_WR_FLUSH_ERR";
        case IBV_WC_MW_BIND_ERR:
            return "IBV_WC_MW_BIND_ERR";
        case IBV_WC_BAD_RESP_ERR:
            return "IBV_WC_BAD_RESP_ERR";
        case IBV_WC_LOC_ACCESS_ERR:
            return "IBV_WC_LOC_ACCESS_ERR";
        case IBV_WC_REM_INV_REQ_ERR:
            return "IBV_WC_REM_INV_REQ_ERR";
        case IBV_WC_REM_ACCESS_ERR:
            return "IBV_WC_REM_ACCESS_ERR";
        case IBV_WC_REM_OP_ERR:
            return "IBV_WC_REM_OP_ERR";
        case IBV_WC_RETRY_EXC_ERR:
            return "IBV_WC_RETRY_EXC_ERR";
        case IBV_WC_RNR_RETRY_EXC_ERR:
            return "IBV_WC_RNR_RETRY_EXC_ERR";
        case IBV_WC_REM_ABORT_ERR:
            return "IBV_WC_REM_ABORT_ERR";
        case IBV_WC_FATAL_ERR:
            return "IBV_WC_FATAL_ERR";
        case IBV_WC_GENERAL_ERR:
            return "IBV_WC_GENERAL_ERR";
        default:
            return fmt::format("status {}", static_cast<int>(status));
    }
}

std::string failed_completion(const ibv_wc& wc) {
    return fmt::format(
        "work completion failed: {} ({}, status {}) on QP {:#x}, wr_id {}, vendor "
        "error {:#x}",
        ibv_wc_status_str(wc.status), wc_status_name(wc.status), static_cast<int>(wc.status),
        wc.qp_num, wc.wr_id, wc.vendor_err);
}

}  // namespace rdmalab
