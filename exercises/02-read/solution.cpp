// Exercise 2 — RDMA READ of the peer's buffer (the reference solution).
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

    // Step 1: register `data`. A READ's response is written into it by your own NIC: LOCAL_WRITE.
    ibv_mr* data_mr = ibv_reg_mr(peer.pd, data.data(), data.size(), IBV_ACCESS_LOCAL_WRITE);
    if (data_mr == nullptr) exercise::fail("ibv_reg_mr(data) failed");

    // Step 2: one signaled RDMA READ of the whole remote buffer into `data`.
    ibv_sge sge{};
    sge.addr = reinterpret_cast<std::uintptr_t>(data.data());
    sge.length = static_cast<std::uint32_t>(data.size());
    sge.lkey = data_mr->lkey;
    ibv_send_wr wr{};
    wr.wr_id = 1;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_READ;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = source.address;
    wr.wr.rdma.rkey = source.rkey;
    ibv_send_wr* bad = nullptr;
    exercise::check(ibv_post_send(peer.qp, &wr, &bad), "ibv_post_send(RDMA READ)");

    // Step 3: its completion. Only then are the bytes in `data`.
    const ibv_wc wc = exercise::wait_for_completion(peer.cq);
    if (wc.status != IBV_WC_SUCCESS)
        exercise::fail(std::string("the RDMA READ failed: ") + ibv_wc_status_str(wc.status));

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
