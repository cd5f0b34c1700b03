// Exercise 1 — RDMA WRITE into the peer's advertised buffer (the reference solution).
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

    // Step 1: register `data`. The NIC only reads a WRITE's source: no access flag is needed.
    ibv_mr* data_mr = ibv_reg_mr(peer.pd, data.data(), data.size(), 0);
    if (data_mr == nullptr) exercise::fail("ibv_reg_mr(data) failed");

    // Step 2: one signaled RDMA WRITE of all of `data` into the peer's buffer.
    ibv_sge sge{};
    sge.addr = reinterpret_cast<std::uintptr_t>(data.data());
    sge.length = static_cast<std::uint32_t>(data.size());
    sge.lkey = data_mr->lkey;
    ibv_send_wr wr{};
    wr.wr_id = 1;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = target.address;
    wr.wr.rdma.rkey = target.rkey;
    ibv_send_wr* bad = nullptr;
    exercise::check(ibv_post_send(peer.qp, &wr, &bad), "ibv_post_send(RDMA WRITE)");

    // Step 3: its completion, which must be a success.
    const ibv_wc wc = exercise::wait_for_completion(peer.cq);
    if (wc.status != IBV_WC_SUCCESS)
        exercise::fail(std::string("the RDMA WRITE failed: ") + ibv_wc_status_str(wc.status));

    // Tell the peer: a 4-byte SEND with the number of bytes written (big-endian). RC delivers
    // in order, so when it arrives the WRITE before it has landed.
    exercise::send_word(peer, static_cast<std::uint32_t>(data.size()));

    // Step 4: release what you registered (the connection releases the rest).
    ibv_dereg_mr(data_mr);
    std::printf("wrote %zu bytes into the peer's buffer with one RDMA WRITE\n", data.size());
    return 0;
}
