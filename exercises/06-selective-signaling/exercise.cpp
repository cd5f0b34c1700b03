// Exercise 6 — selective signaling without filling the send queue. Fill in the steps marked
// EXERCISE. Fill the peer's 16 KiB buffer with 64 RDMA WRITEs of 256 bytes through a send queue
// only 8 deep, asking for a completion on every 4th WRITE only. A WR stays in the send queue until
// a completion at or after it has been polled: wait for one whenever 8 are outstanding. Build and
// judge: ./rdmalab exercise check 6
#include "exercise.hpp"

#include <vector>

constexpr std::uint32_t kWrites = 64;
constexpr std::uint32_t kChunk = 256;
constexpr std::uint32_t kQueueDepth = 8;   // the send queue's max_send_wr
constexpr std::uint32_t kSignalEvery = 4;  // one completion per 4 WRITEs

int main(int argc, char** argv) {
    const auto args = exercise::parse_arguments(argc, argv);
    exercise::Connection peer = exercise::prepare(args.address, args.port, {.send = kQueueDepth});
    exercise::connect(peer);
    const exercise::RemoteBuffer target = peer.peer_buffer;
    if (target.length != kWrites * kChunk) exercise::fail("the peer's buffer is not 16 KiB");

    std::vector<std::uint8_t> data(target.length);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = exercise::pattern_byte(i);
    ibv_mr* data_mr = ibv_reg_mr(peer.pd, data.data(), data.size(), 0);
    if (data_mr == nullptr) exercise::fail("ibv_reg_mr(data) failed");

    std::uint32_t outstanding = 0;  // posted, and not yet known to be complete
    for (std::uint32_t i = 0; i < kWrites; ++i) {
        // Step 1: when kQueueDepth WRs are outstanding the queue is full: what must happen
        // before the next post, and how many WRs does it free?
        // EXERCISE

        ibv_sge sge{reinterpret_cast<std::uintptr_t>(data.data()) + i * kChunk, kChunk,
                    data_mr->lkey};
        ibv_send_wr wr{};
        wr.wr_id = i;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_RDMA_WRITE;
        wr.wr.rdma.remote_addr = target.address + i * kChunk;
        wr.wr.rdma.rkey = target.rkey;
        // Step 2: ask for a completion on every kSignalEvery-th WRITE only.
        wr.send_flags = 0;  // EXERCISE
        ibv_send_wr* bad = nullptr;
        exercise::check(ibv_post_send(peer.qp, &wr, &bad), "ibv_post_send(RDMA WRITE)");
        ++outstanding;
    }
    // Step 3: collect the completions still owed before telling the peer.
    // EXERCISE

    // Tell the peer: a 4-byte SEND with the number of bytes written (big-endian).
    exercise::send_word(peer, static_cast<std::uint32_t>(data.size()));

    ibv_dereg_mr(data_mr);
    std::printf("%u WRITEs through an %u-deep send queue, %u completions\n", kWrites, kQueueDepth,
                kWrites / kSignalEvery);
    return 0;
}
