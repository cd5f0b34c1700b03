// Exercise 5 — a remote counter, with atomic FETCH AND ADD. Fill in the steps marked EXERCISE.
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

    // Step 1: register where each add's old value lands, with only the access that needs.
    alignas(8) std::uint64_t old_value = 0;
    ibv_mr* old_mr = nullptr;  // EXERCISE
    if (old_mr == nullptr) exercise::fail("step 1: the old value's buffer is not registered yet");

    std::uint32_t checked = 0;
    for (std::uint32_t i = 0; i < kAdds; ++i) {
        // Step 2: post one signaled IBV_WR_ATOMIC_FETCH_AND_ADD of 1 on the peer's counter
        // (wr.wr.atomic: remote_addr, rkey, compare_add), its old value into old_value.
        // EXERCISE

        // Step 3: wait for its completion and check its status.
        // EXERCISE
        if (old_value == i) ++checked;
    }

    // Tell the peer how many old values were right: a 4-byte SEND (big-endian).
    exercise::send_word(peer, checked);

    ibv_dereg_mr(old_mr);
    std::printf("%u fetch-and-adds, %u old values as expected\n", kAdds, checked);
    return checked == kAdds ? 0 : 1;
}
