// The rings of the proxy lesson (lessons/proxy): what a producer — a GPU kernel, or a host
// thread standing in for one — shares with the CPU proxy thread that drives the NIC for it.
// Plain structs in memory both can reach (pinned host memory mapped into the GPU), read and
// written with loads, stores and fences only: no atomic read-modify-write crosses PCIe. Kept to
// C++17 and free of host-only headers: nvcc compiles this file into the CUDA producer too.
#pragma once

#include <cstdint>

namespace rdmalab::gpu {

// #region ring-layout
// Slots in each ring. The producer keeps at most this many requests outstanding, so the
// completion ring can never be overwritten before the producer has read it.
inline constexpr std::uint32_t kProxySlots = 16;

// One transfer request. The producer fills offset, length and sequence, then rings the slot's
// doorbell (1) last, with release order; the proxy reads the fields only after an acquire load
// has seen the doorbell, copies them out and clears the doorbell (0): the slot is free again.
// One slot is one 64-byte cache line, so a slot never shares a line with its neighbours.
struct alignas(64) ProxyRequest {
    std::uint64_t offset;    // bytes into the data buffer: the source here, the target there
    std::uint32_t length;    // bytes to move
    std::uint32_t doorbell;  // 0: free, 1: full. Written last by the producer, cleared by the proxy
    std::uint64_t sequence;  // 1, 2, 3, …: the proxy checks it is the request it expects
};

// One completion, written by the proxy when the NIC has finished the request's WRITE.
struct alignas(64) ProxyCompletion {
    std::uint64_t sequence;  // the request this completes
    std::int32_t status;     // 0: the WRITE succeeded; else the ibv_wc_status it failed with
};
// #endregion ring-layout

// The producer's own times for request k (its clock: steady_clock for a host thread, the GPU's
// %globaltimer for a kernel), kept in the shared memory so the CPU can read a kernel's.
struct ProducerSample {
    std::uint64_t enqueued_ns;         // just before the doorbell was rung
    std::uint64_t completion_seen_ns;  // when the producer saw the completion
};

// How a producer ended (ProxyRings::producer_state).
enum ProducerState : std::uint32_t {
    kProducerRunning = 0,
    kProducerDone = 1,           // every completion seen, every one successful
    kProducerNoRoom = 2,         // timed out waiting for a free slot
    kProducerNoCompletion = 3,   // timed out waiting for a completion
    kProducerBadCompletion = 4,  // a completion out of order, or one that failed
    kProducerProxyStopped = 5,   // the proxy said it stopped (ProxyRings::proxy_stopped)
};

struct ProxyRings {
    ProxyRequest requests[kProxySlots];        // producer → proxy
    ProxyCompletion completions[kProxySlots];  // proxy → producer
    // The completion ring's head: completions written so far. The proxy writes the completion,
    // then this index (release); the producer reads the index (acquire), then the completion.
    alignas(64) std::uint64_t completions_published;
    alignas(64) std::uint32_t producer_state;  // ProducerState, written by the producer
    std::uint32_t proxy_stopped;               // 1: the proxy gave up; the producer stops too
    std::uint64_t producer_clock_step_ns;      // the smallest tick of the producer's clock seen
};

// What the producer is asked to do: requests 1..requests, each `length` bytes at offset
// (k - 1) * length of the data buffer, filled with the rdmalab pattern for seed + k.
struct ProducerPlan {
    std::uint64_t requests;
    std::uint32_t length;
    std::uint32_t in_flight;  // 1..kProxySlots requests outstanding at once
    std::uint64_t seed;
    std::uint64_t timeout_ns;  // each wait of the producer gives up after this long
};

}  // namespace rdmalab::gpu
