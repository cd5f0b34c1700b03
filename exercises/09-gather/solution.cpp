// Exercise 9 — one RDMA WRITE gathered from three buffers (the reference solution).
// The 8 KiB the peer expects live in three separate buffers of yours: a 64-byte header, the body,
// and a 64-byte trailer. Send them as ONE RDMA WRITE whose scatter/gather list names all three;
// the NIC reads them in order and the peer's buffer receives them back to back.
// Build and judge: ./rdmalab exercise check 9
#include "exercise.hpp"

#include <vector>

constexpr std::size_t kHeader = 64;
constexpr std::size_t kTrailer = 64;

int main(int argc, char** argv) {
    const auto args = exercise::parse_arguments(argc, argv);
    // Step 1: a QP whose send WRs may carry three scatter/gather entries.
    exercise::Connection peer = exercise::prepare(args.address, args.port, {.send_sge = 3});
    exercise::connect(peer);
    const exercise::RemoteBuffer target = peer.peer_buffer;
    if (target.length <= kHeader + kTrailer) exercise::fail("the peer's buffer is too small");

    // The pattern, cut in three: header, body, trailer, each its own buffer and registration.
    std::vector<std::uint8_t> pieces[3] = {
        std::vector<std::uint8_t>(kHeader),
        std::vector<std::uint8_t>(target.length - kHeader - kTrailer),
        std::vector<std::uint8_t>(kTrailer)};
    ibv_mr* regions[3] = {};
    std::size_t offset = 0;
    for (int p = 0; p < 3; ++p) {
        for (auto& byte : pieces[p]) byte = exercise::pattern_byte(offset++);
        regions[p] = ibv_reg_mr(peer.pd, pieces[p].data(), pieces[p].size(), 0);
        if (regions[p] == nullptr) exercise::fail("ibv_reg_mr(piece) failed");
    }

    // Step 2: one WRITE whose gather list names the three pieces, in order.
    ibv_sge list[3];
    for (int p = 0; p < 3; ++p)
        list[p] = {reinterpret_cast<std::uintptr_t>(pieces[p].data()),
                   static_cast<std::uint32_t>(pieces[p].size()), regions[p]->lkey};
    ibv_send_wr wr{};
    wr.sg_list = list;
    wr.num_sge = 3;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = target.address;
    wr.wr.rdma.rkey = target.rkey;
    ibv_send_wr* bad = nullptr;
    exercise::check(ibv_post_send(peer.qp, &wr, &bad), "ibv_post_send(gathered WRITE)");
    const ibv_wc wc = exercise::wait_for_completion(peer.cq);
    if (wc.status != IBV_WC_SUCCESS)
        exercise::fail(std::string("the WRITE failed: ") + ibv_wc_status_str(wc.status));

    // Tell the peer: a 4-byte SEND with the number of bytes written (big-endian).
    exercise::send_word(peer, target.length);

    for (ibv_mr* region : regions) ibv_dereg_mr(region);
    std::printf("one RDMA WRITE gathered %u bytes from three buffers\n", target.length);
    return 0;
}
