// Exercise 10 — small SENDs with inline data, and no registration at all. Fill in the steps marked
// EXERCISE. Eight 32-byte messages to the peer. With IBV_SEND_INLINE, ibv_post_send copies the
// bytes into the work request itself: the NIC never reads your buffer, so it needs no registration,
// and you may refill it the moment ibv_post_send returns. One buffer serves all eight messages.
// Build and judge: ./rdmalab exercise check 10
#include "exercise.hpp"

constexpr std::uint32_t kMessages = 8;
constexpr std::uint32_t kMessageBytes = 32;

int main(int argc, char** argv) {
    const auto args = exercise::parse_arguments(argc, argv);
    // Step 1: a QP whose send WRs may carry the messages inline (QueueSizes::inline_bytes).
    exercise::Connection peer = exercise::prepare(args.address, args.port);  // EXERCISE
    exercise::connect(peer, exercise::Advertisement::kNone);

    std::uint8_t message[kMessageBytes];  // one buffer, refilled for every message
    for (std::uint32_t m = 0; m < kMessages; ++m) {
        for (std::uint32_t i = 0; i < kMessageBytes; ++i)
            message[i] = exercise::pattern_byte(m * kMessageBytes + i);
        // Step 2: a SEND of the 32 bytes, inline, from this unregistered buffer.
        ibv_sge sge{reinterpret_cast<std::uintptr_t>(message), kMessageBytes, 0};
        ibv_send_wr wr{};
        wr.wr_id = m;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_SEND;
        wr.send_flags = m + 1 == kMessages ? IBV_SEND_SIGNALED : 0;  // EXERCISE: inline
        ibv_send_wr* bad = nullptr;
        exercise::check(ibv_post_send(peer.qp, &wr, &bad), "ibv_post_send(inline SEND)");
        // The bytes are in the WR now: the next round may overwrite `message` at once.
    }
    // One completion covers the eight (the last was signaled).
    const ibv_wc wc = exercise::wait_for_completion(peer.cq);
    if (wc.status != IBV_WC_SUCCESS)
        exercise::fail(std::string("a SEND failed: ") + ibv_wc_status_str(wc.status));
    std::printf("%u inline SENDs of %u bytes from one unregistered buffer\n", kMessages,
                kMessageBytes);
    return 0;
}
