// Registered slots for outgoing messages: see send_slots.hpp.
#include "rdmalab/send_slots.hpp"

#include "rdmalab/error.hpp"
#include "rdmalab/signaled_send.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace rdmalab {

SendSlots::SendSlots(ibv_pd* pd, std::size_t slot_size, std::size_t count)
    : slot_size_(slot_size), count_(count), buffer_(slot_size * count) {
    mr_.reset(
        check_ptr(ibv_reg_mr(pd, buffer_.data(), buffer_.size(), 0), "ibv_reg_mr(send slots)"));
}

std::span<std::byte> SendSlots::slot(std::size_t slot) {
    if (slot >= count_) fail(fmt::format("send slot {} of {}", slot, count_));
    return buffer_.bytes().subspan(slot * slot_size_, slot_size_);
}

void SendSlots::send(ibv_qp* qp, std::size_t slot, std::size_t length, std::uint64_t wr_id) {
    const auto bytes = this->slot(slot);
    if (length > bytes.size())
        fail(fmt::format("a {}-byte message does not fit a {}-byte send slot", length,
                         bytes.size()));
    post_signaled_send(qp, bytes.first(length), mr_->lkey, wr_id, "SEND");
}

void SendSlots::send(ibv_qp* qp, std::size_t slot, std::span<const std::byte> message,
                     std::uint64_t wr_id) {
    const auto bytes = this->slot(slot);
    if (message.size() > bytes.size())
        fail(fmt::format("a {}-byte message does not fit a {}-byte send slot", message.size(),
                         bytes.size()));
    std::ranges::copy(message, bytes.begin());
    send(qp, slot, message.size(), wr_id);
}

}  // namespace rdmalab
