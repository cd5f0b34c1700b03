// Receives posted ahead of the peer's SENDs: `count` slots of `slot_size` bytes in one
// registered buffer, each posted with its slot number as wr_id. A receive completion names its
// slot; message(wc) returns the bytes it delivered, post(slot) gives the slot back to the QP.
#pragma once

#include "rdmalab/verbs.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace rdmalab {

class ReceiveSlots {
  public:
    // Registers the buffer (LOCAL_WRITE: only our own NIC writes here) and posts every slot.
    ReceiveSlots(ibv_pd* pd, ibv_qp* qp, std::size_t slot_size, std::size_t count);

    // Posts one slot's receive (again).
    void post(std::uint64_t slot);
    // The bytes a receive completion delivered. wr_id and byte_len come from our NIC, but are
    // still checked against the slot they claim: throws if they do not fit.
    std::span<const std::byte> message(const ibv_wc& wc) const;

  private:
    ibv_qp* qp_;
    std::size_t slot_size_;
    std::size_t count_;
    Buffer buffer_;
    MemoryRegion mr_;
};

}  // namespace rdmalab
