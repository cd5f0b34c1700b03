// Exercise 11 — post lists: one doorbell for sixteen WRs (the reference solution).
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

    for (std::uint32_t first = 0; first < kWrites; first += kList) {
        // Step 1: kList WRITEs chained through wr.next, only the last signaled.
        ibv_sge sges[kList];
        ibv_send_wr wrs[kList]{};
        for (std::uint32_t k = 0; k < kList; ++k) {
            const std::uint32_t i = first + k;
            sges[k] = {reinterpret_cast<std::uintptr_t>(data.data()) + i * kChunk, kChunk,
                       data_mr->lkey};
            wrs[k].wr_id = i;
            wrs[k].sg_list = &sges[k];
            wrs[k].num_sge = 1;
            wrs[k].opcode = IBV_WR_RDMA_WRITE;
            wrs[k].wr.rdma.remote_addr = target.address + i * kChunk;
            wrs[k].wr.rdma.rkey = target.rkey;
            wrs[k].next = k + 1 < kList ? &wrs[k + 1] : nullptr;
            wrs[k].send_flags = k + 1 == kList ? IBV_SEND_SIGNALED : 0;
        }
        // Step 2: one call posts the list; on failure, bad names the first WR not posted.
        ibv_send_wr* bad = nullptr;
        exercise::check(ibv_post_send(peer.qp, &wrs[0], &bad), "ibv_post_send(list)");
        // Step 3: the list's one completion frees the queue for the next list.
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
