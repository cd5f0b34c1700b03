// Exercise 2 — RDMA READ of the peer's buffer. Fill in the steps marked EXERCISE.
// The peer advertised a buffer holding the pattern, readable by you; fetch all of it with one
// RDMA READ — the peer's CPU takes no part — check it, and send the peer its checksum.
// Build and judge: ./rdmalab exercise check 2
#include "exercise.hpp"

#include <vector>

int main(int argc, char** argv) {
    const auto args = exercise::parse_arguments(argc, argv);
    exercise::Connection peer = exercise::prepare(args.address, args.port);
    exercise::connect(peer);
    const exercise::RemoteBuffer source = peer.peer_buffer;
    std::vector<std::uint8_t> data(source.length, 0);

    // Step 1: register `data` (ibv_reg_mr) with only the access a READ's destination needs.
    ibv_mr* data_mr = nullptr;  // EXERCISE
    if (data_mr == nullptr) exercise::fail("step 1: data is not registered yet");

    // Step 2: post one signaled RDMA READ of the whole remote buffer (`source`) into `data`.
    // EXERCISE

    // Step 3: wait for its completion and check its status: only then are the bytes in `data`.
    // EXERCISE

    // Step 4: check what arrived against the pattern.
    for (std::size_t i = 0; i < data.size(); ++i)
        if (data[i] != exercise::pattern_byte(i))
            exercise::fail("byte " + std::to_string(i) + " is not the pattern");

    // Tell the peer what you read: a 4-byte SEND with its checksum (big-endian).
    exercise::send_word(peer, exercise::checksum(data.data(), data.size()));

    ibv_dereg_mr(data_mr);
    std::printf("read %zu bytes from the peer's memory with one RDMA READ, all verified\n",
                data.size());
    return 0;
}
