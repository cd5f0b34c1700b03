// Exercise 1 — RDMA WRITE into the peer's advertised buffer. Fill in the steps marked EXERCISE.
// The peer advertised one buffer (address, rkey, length) in its accept; fill the same number of
// bytes with the pattern, register them, RDMA-WRITE them into the peer's buffer, then tell the
// peer with a 4-byte SEND that the data is there. Build and judge: ./rdmalab exercise check 1
#include "exercise.hpp"

#include <vector>

int main(int argc, char** argv) {
    const auto args = exercise::parse_arguments(argc, argv);
    exercise::Connection peer = exercise::prepare(args.address, args.port);
    exercise::connect(peer);
    const exercise::RemoteBuffer target = peer.peer_buffer;

    std::vector<std::uint8_t> data(target.length);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = exercise::pattern_byte(i);

    // Step 1: register `data` (ibv_reg_mr) with only the access a WRITE's source needs.
    ibv_mr* data_mr = nullptr;  // EXERCISE
    if (data_mr == nullptr) exercise::fail("step 1: data is not registered yet");

    // Step 2: post one signaled RDMA WRITE of all of `data` into the peer's buffer (`target`): an
    // ibv_sge for your bytes, an ibv_send_wr with its opcode and wr.rdma's two fields.
    // EXERCISE

    // Step 3: wait for its completion (exercise::wait_for_completion) and check its status.
    // EXERCISE

    // Tell the peer: a 4-byte SEND with the number of bytes written (big-endian). RC delivers
    // in order, so when it arrives the WRITE before it has landed.
    exercise::send_word(peer, static_cast<std::uint32_t>(data.size()));

    // Step 4: release what you registered (the connection releases the rest).
    // EXERCISE
    std::printf("wrote %zu bytes into the peer's buffer with one RDMA WRITE\n", data.size());
    return 0;
}
