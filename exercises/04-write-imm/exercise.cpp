// Exercise 4 — RDMA WRITE WITH IMMEDIATE as the notification. Fill in the steps marked EXERCISE.
// As in exercise 1, place 8 KiB of the pattern in the peer's buffer with one RDMA WRITE — but
// this time the WRITE itself tells the peer: its immediate value (the byte count, big-endian)
// arrives in a receive completion on the peer's side. No separate "done" SEND.
// Build and judge: ./rdmalab exercise check 4
#include "exercise.hpp"

#include <vector>

int main(int argc, char** argv) {
    const auto args = exercise::parse_arguments(argc, argv);
    exercise::Connection peer = exercise::prepare(args.address, args.port);
    exercise::connect(peer);
    const exercise::RemoteBuffer target = peer.peer_buffer;

    std::vector<std::uint8_t> data(target.length);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = exercise::pattern_byte(i);
    ibv_mr* data_mr = ibv_reg_mr(peer.pd, data.data(), data.size(), 0);
    if (data_mr == nullptr) exercise::fail("ibv_reg_mr(data) failed");

    ibv_sge sge{};
    sge.addr = reinterpret_cast<std::uintptr_t>(data.data());
    sge.length = static_cast<std::uint32_t>(data.size());
    sge.lkey = data_mr->lkey;
    ibv_send_wr wr{};
    wr.wr_id = 1;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.wr.rdma.remote_addr = target.address;
    wr.wr.rdma.rkey = target.rkey;
    wr.send_flags = IBV_SEND_SIGNALED;
    // Step 1: make the WRITE carry its notification: its opcode, and the immediate value — the
    // byte count, in the byte order the peer expects (it reads it with ntohl).
    wr.opcode = IBV_WR_RDMA_WRITE;  // EXERCISE

    ibv_send_wr* bad = nullptr;
    exercise::check(ibv_post_send(peer.qp, &wr, &bad), "ibv_post_send(RDMA WRITE WITH IMMEDIATE)");
    const ibv_wc wc = exercise::wait_for_completion(peer.cq);
    if (wc.status != IBV_WC_SUCCESS)
        exercise::fail(std::string("the WRITE failed: ") + ibv_wc_status_str(wc.status));

    ibv_dereg_mr(data_mr);
    std::printf("wrote %zu bytes with one RDMA WRITE WITH IMMEDIATE; it was the notification\n",
                data.size());
    return 0;
}
