// What rdma-victim's server and every client of it agree on (the legitimate client, and the
// attacker's probe, which behaves like one): a 64-byte slot per client, and the "done" message —
// a 4-byte SEND of the slot's checksum (FNV-1a, big-endian) once the client has written it.
#pragma once

#include "rdmalab/control_word.hpp"
#include "rdmalab/verbs.hpp"

#include <infiniband/verbs.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>

namespace rdmalab::security {

inline constexpr std::uint32_t kSlotBytes = 64;

inline std::uint32_t slot_checksum(std::span<const std::uint8_t> bytes) {
    std::uint32_t hash = 2166136261u;
    for (std::uint8_t byte : bytes) hash = (hash ^ byte) * 16777619u;
    return hash;
}

// SENDs the checksum (a control word) and waits for the SEND's completion; returns its status.
inline ibv_wc_status send_done(ibv_qp* qp, ibv_pd* pd, ibv_cq* cq, std::uint32_t checksum,
                               std::chrono::milliseconds timeout) {
    ControlWord word(pd, ControlWord::Direction::kSend);
    word.post_send(qp, checksum, 0);
    return wait_for_any_completion(cq, timeout, "the done SEND").status;
}

}  // namespace rdmalab::security
