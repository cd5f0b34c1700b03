// One signaled SEND of bytes already registered (lkey): what the common library's control
// messages post (ControlWord, SendSlots, a round's done word), traced under --trace. Lessons
// post their own work requests literally: this is for the library's plumbing beside them.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <span>
#include <string_view>

namespace rdmalab {

// Throws Error naming "ibv_post_send(WHAT)" if the post fails; the caller waits for the
// completion (wr_id names it) before reusing the bytes.
void post_signaled_send(ibv_qp* qp, std::span<const std::byte> bytes, std::uint32_t lkey,
                        std::uint64_t wr_id, std::string_view what);

}  // namespace rdmalab
