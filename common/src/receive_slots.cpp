// Pre-posted receive slots: see receive_slots.hpp.
#include "rdmalab/receive_slots.hpp"

#include "rdmalab/error.hpp"

#include <fmt/core.h>

namespace rdmalab {

ReceiveSlots::ReceiveSlots(ibv_pd* pd, ibv_qp* qp, std::size_t slot_size, std::size_t count)
    : qp_(qp), slot_size_(slot_size), count_(count), buffer_(slot_size * count) {
    mr_.reset(check_ptr(ibv_reg_mr(pd, buffer_.data(), buffer_.size(), IBV_ACCESS_LOCAL_WRITE),
                        "ibv_reg_mr(receive slots)"));
    for (std::size_t slot = 0; slot < count_; ++slot) post(slot);
}

void ReceiveSlots::post(std::uint64_t slot) {
    if (slot >= count_) fail(fmt::format("receive slot {} of {}", slot, count_));
    ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(buffer_.data() + slot * slot_size_),
                .length = static_cast<std::uint32_t>(slot_size_),
                .lkey = mr_->lkey};
    ibv_recv_wr receive{.wr_id = slot, .next = nullptr, .sg_list = &sge, .num_sge = 1};
    ibv_recv_wr* bad = nullptr;
    check_ibv(ibv_post_recv(qp_, &receive, &bad), "ibv_post_recv");
}

std::span<const std::byte> ReceiveSlots::message(const ibv_wc& wc) const {
    if (wc.wr_id >= count_ || wc.byte_len > slot_size_)
        fail(fmt::format("receive completion for slot {} with {} bytes", wc.wr_id, wc.byte_len));
    return {buffer_.data() + wc.wr_id * slot_size_, wc.byte_len};
}

}  // namespace rdmalab
