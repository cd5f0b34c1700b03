// A 4-byte control message — a count, a "done", an acknowledgement — sent and received as a
// SEND into a posted receive, big-endian on the wire. Lessons use it for the bookkeeping
// around the operation they teach.
#pragma once

#include "rdmalab/verbs.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace rdmalab {

class ControlWord {
  public:
    static constexpr std::uint32_t kSize = 4;

    // Registers the 4 bytes: LOCAL_WRITE for a word that is received, nothing for one sent.
    enum class Direction { kSend, kReceive };
    ControlWord(ibv_pd* pd, Direction direction);

    // A signaled SEND of value; the caller waits for its completion.
    void post_send(ibv_qp* qp, std::uint32_t value, std::uint64_t wr_id);
    // A receive for the peer's word; post it before the peer can send.
    void post_receive(ibv_qp* qp, std::uint64_t wr_id);
    // Checks a receive completion for this word (opcode, length) and returns the value, or
    // throws naming `what`.
    std::uint32_t received_value(const ibv_wc& wc, std::string_view what) const;

  private:
    std::array<std::byte, kSize> bytes_{};
    MemoryRegion mr_;
};

}  // namespace rdmalab
