// What rdma-victim's server and every client of it agree on (the legitimate client, and the
// attacker's probe, which behaves like one): a 64-byte slot per client, and the "done" message —
// a 4-byte SEND of the slot's checksum (FNV-1a, big-endian) once the client has written it.
#pragma once

#include "rdmalab/error.hpp"
#include "rdmalab/signaled_send.hpp"
#include "rdmalab/verbs.hpp"

#include <arpa/inet.h>
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

// SENDs the checksum and waits for the SEND's completion; returns its status.
inline ibv_wc_status send_done(ibv_qp* qp, ibv_pd* pd, ibv_cq* cq, std::uint32_t checksum,
                               std::chrono::milliseconds timeout) {
    const std::uint32_t word = htonl(checksum);
    const MemoryRegion word_mr{check_ptr(
        ibv_reg_mr(pd, const_cast<std::uint32_t*>(&word), sizeof word, 0), "ibv_reg_mr(done)")};
    post_signaled_send(qp, std::as_bytes(std::span(&word, 1)), word_mr->lkey, 0, "done");
    return wait_for_any_completion(cq, timeout, "the done SEND").status;
}

}  // namespace rdmalab::security
