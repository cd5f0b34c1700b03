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
    ibv_send_wr* bad = nullptr;
    // EXERCISE

    // Step 3: wait for its completion and check its status: only then are the bytes in `data`.
    // EXERCISE

    // Step 4: check what arrived against the pattern.
    for (std::size_t i = 0; i < data.size(); ++i)
        if (data[i] != exercise::pattern_byte(i))
            exercise::fail("byte " + std::to_string(i) + " is not the pattern");

    // Tell the peer what you read: a 4-byte SEND with its checksum (big-endian).
    std::uint32_t done = htonl(exercise::checksum(data.data(), data.size()));
    ibv_mr* done_mr = ibv_reg_mr(peer.pd, &done, sizeof done, 0);
    if (done_mr == nullptr) exercise::fail("ibv_reg_mr(done) failed");
    ibv_sge done_sge{reinterpret_cast<std::uintptr_t>(&done), sizeof done, done_mr->lkey};
    ibv_send_wr done_wr{};
    done_wr.wr_id = 2;
    done_wr.sg_list = &done_sge;
    done_wr.num_sge = 1;
    done_wr.opcode = IBV_WR_SEND;
    done_wr.send_flags = IBV_SEND_SIGNALED;
    exercise::check(ibv_post_send(peer.qp, &done_wr, &bad), "ibv_post_send(done)");
    if (exercise::wait_for_completion(peer.cq).status != IBV_WC_SUCCESS)
        exercise::fail("the done message failed");

    ibv_dereg_mr(done_mr);
    ibv_dereg_mr(data_mr);
    std::printf("read %zu bytes from the peer's memory with one RDMA READ, all verified\n",
                data.size());
    return 0;
}
