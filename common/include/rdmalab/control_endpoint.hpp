// An rdma_cm connection with small control messages beside the operations a lesson teaches: a
// 4-byte word or a record (a buffer advertisement) SENT over the connection's own QP, into
// receives posted before it connects. Sends and receives share one CQ, and their completions
// interleave (a SEND completes when its acknowledgement arrives, which may be after the peer's
// answer to it), so each wait takes the next completion of the kind it expects and keeps others.
#pragma once

#include "rdmalab/connection.hpp"
#include "rdmalab/receive_slots.hpp"
#include "rdmalab/send_slots.hpp"
#include "rdmalab/verbs.hpp"

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace rdmalab {

class ControlEndpoint {
  public:
    // create_queues(sizes), then one send slot and `receive_slots` receives of slot_size bytes,
    // posted now: make it before connect or accept. Each receive slot takes one message (they are
    // not posted again). Registered memory lives on the heap, so the endpoint may be moved; only
    // our own NIC touches it (LOCAL_WRITE at most).
    ControlEndpoint(Connection connection, const QueueSizes& sizes, std::size_t slot_size,
                    std::size_t receive_slots);

    Connection& connection() { return connection_; }

    // The next completion with this opcode (an error status throws, as in
    // Connection::wait_for_completion); completions of other kinds that come first are kept for
    // the wait that expects them (at most 8).
    ibv_wc expect_completion(ibv_wc_opcode opcode, std::string_view what);

    // A signaled SEND of message (at most slot_size bytes), waited for.
    void send(std::span<const std::byte> message, std::string_view what);
    void send_word(std::uint32_t word);  // a 4-byte big-endian word
    // The next message received: its bytes, for the caller to validate.
    std::span<const std::byte> receive(std::string_view what);
    // Throws, naming what, unless the next message is exactly the 4-byte word `expected`.
    void expect_word(std::uint32_t expected, std::string_view what);

  private:
    Connection connection_;  // first: the queues exist before anything is registered or posted
    SendSlots sends_;        // one slot: each send waits for its completion
    ReceiveSlots receives_;
    std::vector<ibv_wc> early_;  // completions that came before the one being waited for
};

}  // namespace rdmalab
