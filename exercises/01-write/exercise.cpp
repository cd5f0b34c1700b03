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
    ibv_send_wr* bad = nullptr;
    // EXERCISE

    // Step 3: wait for its completion (exercise::wait_for_completion) and check its status.
    // EXERCISE

    // Tell the peer: a 4-byte SEND with the number of bytes written (big-endian). RC delivers
    // in order, so when it arrives the WRITE before it has landed.
    std::uint32_t done = htonl(static_cast<std::uint32_t>(data.size()));
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

    // Step 4: release what you registered (the connection releases the rest).
    ibv_dereg_mr(done_mr);
    // EXERCISE
    std::printf("wrote %zu bytes into the peer's buffer with one RDMA WRITE\n", data.size());
    return 0;
}
