// The names of verbs values, for printing what a QP is and what is done to it: QP states,
// attribute masks, access flags, work-completion statuses. It needs nothing else of the library
// (verbs.cpp and the rest name values through it), so printing whole attribute sets, which
// needs verbs.hpp's MTU and GID forms, is qp_transitions.hpp's.
#pragma once

#include <infiniband/verbs.h>

#include <string>
#include <string_view>

namespace rdmalab {

const char* qp_type_name(unsigned type);             // "RC", "UC", "UD" (else "unknown")
const char* qp_state_name(ibv_qp_state state);       // "RESET", "INIT", "RTR", "RTS", …
const char* send_opcode_name(ibv_wr_opcode opcode);  // "RDMA_WRITE", "SEND_WITH_IMM", …
const char* wc_opcode_name(ibv_wc_opcode opcode);    // "RDMA_WRITE", "RECV", "RECV_RDMA_WITH_IMM"
std::string qp_attr_mask_names(int mask);            // "STATE | PKEY_INDEX | PORT | ACCESS_FLAGS"
std::string access_flag_names(unsigned access);      // "REMOTE_WRITE", "none"
// "IBV_WC_REM_ACCESS_ERR": the enum's name (ibv_wc_status_str gives the words).
std::string wc_status_name(ibv_wc_status status);
// The one report of a failed work completion, used by every program: "work completion failed:
// remote access error (IBV_WC_REM_ACCESS_ERR, status 10) on QP 0x11, wr_id 3, vendor error 0x0".
std::string failed_completion(const ibv_wc& wc);

}  // namespace rdmalab
