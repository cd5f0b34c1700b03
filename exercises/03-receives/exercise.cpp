// Exercise 3 — SEND and RECV, with the receives posted in time. Fill in the steps marked EXERCISE.
// The peer SENDs 4 messages of 64 bytes the moment the connection is up. A SEND that finds no
// receive posted is refused with an RNR NAK and tried again later: post your receives before
// you connect, and none is refused. Check each message, then tell the peer how many you checked.
// Build and judge: ./rdmalab exercise check 3
#include "exercise.hpp"

#include <vector>

constexpr std::uint32_t kMessages = 4;
constexpr std::uint32_t kMessageBytes = 64;

int main(int argc, char** argv) {
    const auto args = exercise::parse_arguments(argc, argv);
    exercise::Connection peer = exercise::prepare(args.address, args.port);

    // Step 1: room for the 4 messages, one 64-byte slot each, registered with only the access
    // the NIC needs to place a message in it.
    std::vector<std::uint8_t> inbox(std::size_t{kMessages} * kMessageBytes, 0);
    ibv_mr* inbox_mr = nullptr;  // EXERCISE
    if (inbox_mr == nullptr) exercise::fail("step 1: the inbox is not registered yet");

    // Step 2: one receive per message (ibv_post_recv), slot m for message m. When must they be
    // posted, given that the peer sends as soon as the connection is up?
    // EXERCISE

    exercise::connect(peer, exercise::Advertisement::kNone);

    // Step 3: the 4 receive completions; each must be a successful 64-byte receive. Receives
    // are used in the order they were posted, so message m lands in slot m.
    for (std::uint32_t m = 0; m < kMessages; ++m) {
        const ibv_wc wc = exercise::wait_for_completion(peer.cq);
        if (wc.status != IBV_WC_SUCCESS)
            exercise::fail(std::string("a receive failed: ") + ibv_wc_status_str(wc.status));
        if (wc.opcode != IBV_WC_RECV || wc.byte_len != kMessageBytes)
            exercise::fail("completion " + std::to_string(m) + " is not a 64-byte receive");
    }
    std::uint32_t verified = 0;
    for (std::uint32_t m = 0; m < kMessages; ++m) {
        bool ok = true;
        for (std::uint32_t i = 0; i < kMessageBytes; ++i)
            ok =
                ok && inbox[m * kMessageBytes + i] == exercise::pattern_byte(m * kMessageBytes + i);
        if (ok) ++verified;
    }

    // Tell the peer how many messages you verified: a 4-byte SEND (big-endian).
    exercise::send_word(peer, verified);

    ibv_dereg_mr(inbox_mr);
    std::printf("received and verified %u of %u messages\n", verified, kMessages);
    return verified == kMessages ? 0 : 1;
}
