// The RDMA operations rdma-bench (and rdma-mesh) measure, one row each: what the verbs make of
// the operation and what the bench does because of it. The engine, the session, the knobs and
// rdma-mesh ask a row's fields and never name an operation, so adding one is an enumerator and a
// row here. tests/unit/bench_operations_test.cpp checks the rows against the verbs, and that no
// other source switches on the operation or compares it.
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rdmalab::bench {

enum class Op { kWrite, kRead, kSend, kWriteImm, kFetchAdd, kCompareSwap };

inline constexpr std::uint32_t kAtomicBytes = 8;  // what every verbs atomic moves

// How a latency round trip ends at the initiator.
enum class Reply {
    kStamp,       // the target writes back; the initiator polls its buffer's last byte (CPU memory)
    kReceive,     // the target sends back; the initiator's receive completes
    kCompletion,  // the initiator's own completion is the reply (READ data, an atomic's value)
};

// What a bandwidth phase checks, and where.
enum class Verify {
    kTargetPattern,     // the target's destination holds the initiator's pattern, zeros after it
    kInitiatorPattern,  // the initiator's destination holds the target's pattern
    kTargetCounter,     // the target's 8-byte counter equals the operations completed
    kNothing,           // the operation changes nothing there is to check
};

// The ibv_wr_* call that names the operation and its remote half on an extended QP (--api ex),
// taken from the prepared WR; imm is in network order already.
using ExtendedCall = void (*)(ibv_qp_ex* qpx, const ibv_send_wr& wr, std::uint32_t imm);

// A row names what every operation has; the rest default to "none" (no receive, no immediate,
// no fixed size…), so a row states what its operation does and is.
struct Operation {
    Op op;
    const char* name;  // on the command line and in records
    ibv_wr_opcode opcode;
    std::uint64_t extended_flag;  // its send_ops_flags bit, for ibv_create_qp_ex
    ExtendedCall extended_call;
    ibv_wc_opcode initiator_completion;
    unsigned target_access;  // what the peer may do to the target's memory (its QP and MR)
    Reply reply;
    Verify verify;
    // The receive the target must post, by the opcode of its completion; none: the target's CPU
    // takes no part and sees nothing.
    std::optional<ibv_wc_opcode> target_completion = std::nullopt;
    // The target's NIC writes the target's memory (LOCAL_WRITE there; the peer addresses its
    // destination slot), else the peer only reads it (its source slot).
    bool lands_at_target = false;
    // READ data and an atomic's original value come back: LOCAL_WRITE at the initiator, whose
    // WR names its destination slot; the responder answers with data (max_rd_atomic credits).
    bool lands_at_initiator = false;
    bool carries_immediate = false;  // imm_data in every WR: the bench sends the sequence number
    bool atomic = false;             // the WR's remote half is wr.atomic; needs atomic_cap
    // An atomic's compare_add: fetch-add's addend (1: the counter counts the adds), or
    // compare-and-swap's compare value (0, with swap 0: it succeeds and changes nothing).
    std::uint64_t atomic_compare_add = 0;
    std::uint32_t fixed_size = 0;  // the size every message has, in one SGE; 0: any size
    bool can_inline = false;    // IBV_SEND_INLINE: only where the initiator's memory is the source
    bool runs_over_uc = false;  // UC has no responder: no READ or atomics
    bool runs_over_ud = false;  // a datagram carries no rkey: send only

    constexpr bool target_receives() const { return target_completion.has_value(); }
    // A send's receive holds the payload; a write-imm's has no SGE (the data goes where written).
    constexpr bool data_in_receive() const { return target_completion == IBV_WC_RECV; }
};

inline constexpr std::array<Operation, 6> kOperations{{
    {.op = Op::kWrite,
     .name = "write",
     .opcode = IBV_WR_RDMA_WRITE,
     .extended_flag = IBV_QP_EX_WITH_RDMA_WRITE,
     .extended_call =
         [](ibv_qp_ex* qpx, const ibv_send_wr& wr, std::uint32_t) {
             ibv_wr_rdma_write(qpx, wr.wr.rdma.rkey, wr.wr.rdma.remote_addr);
         },
     .initiator_completion = IBV_WC_RDMA_WRITE,
     .target_access = IBV_ACCESS_REMOTE_WRITE,
     .reply = Reply::kStamp,
     .verify = Verify::kTargetPattern,
     .lands_at_target = true,
     .can_inline = true,
     .runs_over_uc = true},
    {.op = Op::kRead,
     .name = "read",
     .opcode = IBV_WR_RDMA_READ,
     .extended_flag = IBV_QP_EX_WITH_RDMA_READ,
     .extended_call =
         [](ibv_qp_ex* qpx, const ibv_send_wr& wr, std::uint32_t) {
             ibv_wr_rdma_read(qpx, wr.wr.rdma.rkey, wr.wr.rdma.remote_addr);
         },
     .initiator_completion = IBV_WC_RDMA_READ,
     .target_access = IBV_ACCESS_REMOTE_READ,
     .reply = Reply::kCompletion,
     .verify = Verify::kInitiatorPattern,
     .lands_at_initiator = true},
    {.op = Op::kSend,
     .name = "send",
     .opcode = IBV_WR_SEND,
     .extended_flag = IBV_QP_EX_WITH_SEND,
     .extended_call = [](ibv_qp_ex* qpx, const ibv_send_wr&, std::uint32_t) { ibv_wr_send(qpx); },
     .initiator_completion = IBV_WC_SEND,
     .target_access = 0,
     .reply = Reply::kReceive,
     .verify = Verify::kTargetPattern,
     .target_completion = IBV_WC_RECV,
     .lands_at_target = true,
     .can_inline = true,
     .runs_over_uc = true,
     .runs_over_ud = true},
    {.op = Op::kWriteImm,
     .name = "write-imm",
     .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
     .extended_flag = IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM,
     .extended_call =
         [](ibv_qp_ex* qpx, const ibv_send_wr& wr, std::uint32_t imm) {
             ibv_wr_rdma_write_imm(qpx, wr.wr.rdma.rkey, wr.wr.rdma.remote_addr, imm);
         },
     .initiator_completion = IBV_WC_RDMA_WRITE,
     .target_access = IBV_ACCESS_REMOTE_WRITE,
     .reply = Reply::kReceive,
     .verify = Verify::kTargetPattern,
     .target_completion = IBV_WC_RECV_RDMA_WITH_IMM,
     .lands_at_target = true,
     .carries_immediate = true,
     .can_inline = true,
     .runs_over_uc = true},
    {.op = Op::kFetchAdd,
     .name = "fetch-add",
     .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
     .extended_flag = IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
     .extended_call =
         [](ibv_qp_ex* qpx, const ibv_send_wr& wr, std::uint32_t) {
             ibv_wr_atomic_fetch_add(qpx, wr.wr.atomic.rkey, wr.wr.atomic.remote_addr,
                                     wr.wr.atomic.compare_add);
         },
     .initiator_completion = IBV_WC_FETCH_ADD,
     .target_access = IBV_ACCESS_REMOTE_ATOMIC,
     .reply = Reply::kCompletion,
     .verify = Verify::kTargetCounter,
     .lands_at_target = true,
     .lands_at_initiator = true,
     .atomic = true,
     .atomic_compare_add = 1,
     .fixed_size = kAtomicBytes},
    {.op = Op::kCompareSwap,
     .name = "cmp-swap",
     .opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
     .extended_flag = IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP,
     .extended_call =
         [](ibv_qp_ex* qpx, const ibv_send_wr& wr, std::uint32_t) {
             ibv_wr_atomic_cmp_swp(qpx, wr.wr.atomic.rkey, wr.wr.atomic.remote_addr,
                                   wr.wr.atomic.compare_add, wr.wr.atomic.swap);
         },
     .initiator_completion = IBV_WC_COMP_SWAP,
     .target_access = IBV_ACCESS_REMOTE_ATOMIC,
     .reply = Reply::kCompletion,
     .verify = Verify::kNothing,
     .lands_at_target = true,
     .lands_at_initiator = true,
     .atomic = true,
     .fixed_size = kAtomicBytes},
}};

// The rows follow the enumerators, so a lookup is an index.
static_assert(
    [] {
        for (std::size_t i = 0; i < kOperations.size(); ++i)
            if (static_cast<std::size_t>(kOperations[i].op) != i) return false;
        return true;
    }(),
    "kOperations: one row per Op, in the enum's order");

constexpr const Operation& operation(Op op) {
    return kOperations[static_cast<std::size_t>(op)];
}

// "write", "read", "send", "write-imm", "fetch-add", "cmp-swap"; "?" for no operation.
constexpr const char* op_name(Op op) {
    return static_cast<std::size_t>(op) < kOperations.size() ? operation(op).name : "?";
}

inline std::optional<Op> parse_op(const std::string& text) {
    for (const Operation& row : kOperations)
        if (text == row.name) return row.op;
    return std::nullopt;
}

// The names of the rows where keep (a bool field, a predicate) holds, for help texts and
// refusals: "a, b, c", or with last = " and ", "a, b and c".
template <typename Keep>
std::string op_names(Keep keep, const char* last = ", ") {
    std::vector<const char*> names;
    for (const Operation& row : kOperations)
        if (std::invoke(keep, row)) names.push_back(row.name);
    std::string text;
    for (std::size_t i = 0; i < names.size(); ++i)
        text += (i == 0 ? "" : i + 1 == names.size() ? last : ", ") + std::string(names[i]);
    return text;
}
inline std::string op_names() {
    return op_names([](const Operation&) { return true; });
}

}  // namespace rdmalab::bench
