// Exercise 11 — post lists: one doorbell for sixteen WRs. Rewrite the loop marked EXERCISE.
// Each ibv_post_send call ends with a doorbell: a write to the NIC's MMIO page (on hardware; a
// system call on Soft-RoCE) telling it there is work. Chain WRs through wr.next and one call
// posts them all, behind one doorbell. Fill the peer's 16 KiB with 64 WRITEs of 256 bytes,
// posted as 4 lists of 16, each list's last WR signaled.
// Build and judge: ./rdmalab exercise check 11
#include "exercise.hpp"

#include <vector>

constexpr std::uint32_t kWrites = 64;
constexpr std::uint32_t kChunk = 256;
constexpr std::uint32_t kList = 16;  // WRs per ibv_post_send call, and the send queue's depth

int main(int argc, char** argv) {
    const auto args = exercise::parse_arguments(argc, argv);
    exercise::Connection peer = exercise::prepare(args.address, args.port, {.send = kList});
    exercise::connect(peer);
    const exercise::RemoteBuffer target = peer.peer_buffer;
    if (target.length != kWrites * kChunk) exercise::fail("the peer's buffer is not 16 KiB");

    std::vector<std::uint8_t> data(target.length);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = exercise::pattern_byte(i);
    ibv_mr* data_mr = ibv_reg_mr(peer.pd, data.data(), data.size(), 0);
    if (data_mr == nullptr) exercise::fail("ibv_reg_mr(data) failed");

    // EXERCISE: this loop posts one WRITE per call and waits for each: 64 doorbells, 64
    // completions. Post them as 4 lists of kList WRs chained through wr.next, one
    // ibv_post_send call and one signaled WR (the last) per list.
    for (std::uint32_t i = 0; i < kWrites; ++i) {
        ibv_sge sge{reinterpret_cast<std::uintptr_t>(data.data()) + i * kChunk, kChunk,
                    data_mr->lkey};
        ibv_send_wr wr{};
        wr.wr_id = i;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_RDMA_WRITE;
        wr.wr.rdma.remote_addr = target.address + i * kChunk;
        wr.wr.rdma.rkey = target.rkey;
        wr.send_flags = IBV_SEND_SIGNALED;
        ibv_send_wr* bad = nullptr;
        exercise::check(ibv_post_send(peer.qp, &wr, &bad), "ibv_post_send(WRITE)");
        const ibv_wc wc = exercise::wait_for_completion(peer.cq);
        if (wc.status != IBV_WC_SUCCESS)
            exercise::fail(std::string("a WRITE failed: ") + ibv_wc_status_str(wc.status));
    }

    // Tell the peer: a 4-byte SEND with the number of bytes written (big-endian).
    exercise::send_word(peer, static_cast<std::uint32_t>(data.size()));

    ibv_dereg_mr(data_mr);
    std::printf("%u WRITEs in %u ibv_post_send calls\n", kWrites, kWrites / kList);
    return 0;
}
