// Exercise 5 — a remote counter, with atomic FETCH AND ADD (the reference solution).
// The peer advertised one 8-byte counter, starting at 0, open only to atomics. Add 1 to it ten
// times with IBV_WR_ATOMIC_FETCH_AND_ADD, one at a time: each returns the value the counter held
// before the add, which must be 0, 1, ..., 9. Then tell the peer how many you checked.
// Build and judge: ./rdmalab exercise check 5
#include "exercise.hpp"

constexpr std::uint32_t kAdds = 10;

int main(int argc, char** argv) {
    const auto args = exercise::parse_arguments(argc, argv);
    exercise::Connection peer = exercise::prepare(args.address, args.port);
    exercise::connect(peer);
    const exercise::RemoteBuffer counter = peer.peer_buffer;
    if (counter.length != 8 || counter.address % 8 != 0)
        exercise::fail("the peer's counter is not an aligned 8-byte word");

    // Step 1: where each add's old value lands: 8 bytes your NIC writes (LOCAL_WRITE).
    alignas(8) std::uint64_t old_value = 0;
    ibv_mr* old_mr = ibv_reg_mr(peer.pd, &old_value, sizeof old_value, IBV_ACCESS_LOCAL_WRITE);
    if (old_mr == nullptr) exercise::fail("ibv_reg_mr(old value) failed");

    std::uint32_t checked = 0;
    for (std::uint32_t i = 0; i < kAdds; ++i) {
        // Step 2: one signaled FETCH AND ADD of 1 on the peer's counter.
        ibv_sge sge{reinterpret_cast<std::uintptr_t>(&old_value), sizeof old_value, old_mr->lkey};
        ibv_send_wr wr{};
        wr.wr_id = i;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.wr.atomic.remote_addr = counter.address;
        wr.wr.atomic.rkey = counter.rkey;
        wr.wr.atomic.compare_add = 1;
        ibv_send_wr* bad = nullptr;
        exercise::check(ibv_post_send(peer.qp, &wr, &bad), "ibv_post_send(FETCH AND ADD)");

        // Step 3: its completion; then old_value holds what the counter was before this add.
        const ibv_wc wc = exercise::wait_for_completion(peer.cq);
        if (wc.status != IBV_WC_SUCCESS)
            exercise::fail(std::string("FETCH AND ADD failed: ") + ibv_wc_status_str(wc.status));
        if (old_value == i) ++checked;
    }

    // Tell the peer how many old values were right: a 4-byte SEND (big-endian).
    exercise::send_word(peer, checked);

    ibv_dereg_mr(old_mr);
    std::printf("%u fetch-and-adds, %u old values as expected\n", kAdds, checked);
    return checked == kAdds ? 0 : 1;
}
