// Messages on their way out, the counterpart of receive_slots.hpp: `count` slots of `slot_size`
// bytes in one registered buffer, which only our own NIC reads (no access flags). A message's
// bytes must stay put until its SEND completes, so each message in flight has a slot of its own:
// write it into slot(i) (or hand it to send), then post a signaled SEND of it.
#pragma once

#include "rdmalab/verbs.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace rdmalab {

class SendSlots {
  public:
    SendSlots(ibv_pd* pd, std::size_t slot_size, std::size_t count);

    // The bytes of one slot, to write a message into.
    std::span<std::byte> slot(std::size_t slot);
    // A signaled SEND of the slot's first `length` bytes; the caller waits for its completion.
    void send(ibv_qp* qp, std::size_t slot, std::size_t length, std::uint64_t wr_id);
    // Copies message into the slot, then sends it.
    void send(ibv_qp* qp, std::size_t slot, std::span<const std::byte> message,
              std::uint64_t wr_id);

  private:
    std::size_t slot_size_;
    std::size_t count_;
    Buffer buffer_;
    MemoryRegion mr_;
};

}  // namespace rdmalab
