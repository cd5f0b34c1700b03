// Exercise 9 — one RDMA WRITE gathered from three buffers. Fill in the steps marked EXERCISE.
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
    // Step 1: a QP whose send WRs may carry as many scatter/gather entries as you need.
    exercise::Connection peer =
        exercise::prepare(args.address, args.port, {.send_sge = 1});  // EXERCISE
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

    // Step 2: ONE signaled RDMA WRITE whose gather list (sg_list, num_sge) names the three
    // pieces, in order, into the peer's buffer.
    // EXERCISE
    const ibv_wc wc = exercise::wait_for_completion(peer.cq);
    if (wc.status != IBV_WC_SUCCESS)
        exercise::fail(std::string("the WRITE failed: ") + ibv_wc_status_str(wc.status));

    // Tell the peer: a 4-byte SEND with the number of bytes written (big-endian).
    exercise::send_word(peer, target.length);

    for (ibv_mr* region : regions) ibv_dereg_mr(region);
    std::printf("one RDMA WRITE gathered %u bytes from three buffers\n", target.length);
    return 0;
}
