// 4-byte control messages: see control_word.hpp.
#include "rdmalab/control_word.hpp"

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/signaled_send.hpp"
#include "rdmalab/trace.hpp"

#include <fmt/core.h>

namespace rdmalab {

ControlWord::ControlWord(ibv_pd* pd, Direction direction)
    : mr_(ibv_reg_mr(pd, bytes_.data(), bytes_.size(),
                     direction == Direction::kReceive ? IBV_ACCESS_LOCAL_WRITE : 0)) {
    check_ptr(mr_.get(), "ibv_reg_mr(control word)");
}

void ControlWord::post_send(ibv_qp* qp, std::uint32_t value, std::uint64_t wr_id) {
    store_be32(bytes_, value);
    post_signaled_send(qp, bytes_, mr_->lkey, wr_id, "control word");
}

void ControlWord::post_receive(ibv_qp* qp, std::uint64_t wr_id) {
    ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(bytes_.data()),
                .length = kSize,
                .lkey = mr_->lkey};
    ibv_recv_wr receive{.wr_id = wr_id, .next = nullptr, .sg_list = &sge, .num_sge = 1};
    ibv_recv_wr* bad = nullptr;
    trace::post_recv(qp, &receive);
    check_ibv(ibv_post_recv(qp, &receive, &bad), "ibv_post_recv(control word)");
}

std::uint32_t ControlWord::received_value(const ibv_wc& wc, std::string_view what) const {
    // It came from the peer: the right kind of completion, exactly 4 bytes.
    if (wc.opcode != IBV_WC_RECV || wc.byte_len != kSize)
        fail(fmt::format("{}: expected a {}-byte message, got opcode {} with {} bytes", what, kSize,
                         static_cast<int>(wc.opcode), wc.byte_len));
    return load_be32(bytes_);
}

}  // namespace rdmalab
