// Exercise 8 — UD: a datagram each way, an address handle, and the GRH. Fill in the steps marked
// EXERCISE. A UD QP has no connection: every send names its destination (an address handle, the
// remote QPN and its Q_Key), and every receive starts with 40 bytes the NIC reserves for the
// packet's Global Routing Header. Send the peer 64 bytes of the pattern; receive its 64-byte answer
// and check it where it really is. Build and judge: ./rdmalab exercise check 8
#include "by-hand.hpp"

#include <vector>

constexpr std::size_t kGrh = 40;      // what the NIC writes before a UD payload
constexpr std::size_t kPayload = 64;  // each side's datagram

int main(int argc, char** argv) {
    const auto args = exercise::parse_arguments(argc, argv);
    exercise::ManualConnection peer;
    exercise::open_by_hand(peer, args.address, args.port, IBV_QPT_UD);
    exercise::bring_up_ud(peer);

    // Step 1: room for the peer's 64-byte answer, and its receive. How large must it be?
    std::vector<std::uint8_t> inbox(kPayload, 0);  // EXERCISE
    ibv_mr* inbox_mr = ibv_reg_mr(peer.pd, inbox.data(), inbox.size(), IBV_ACCESS_LOCAL_WRITE);
    if (inbox_mr == nullptr) exercise::fail("ibv_reg_mr(inbox) failed");
    ibv_sge receive_sge{reinterpret_cast<std::uintptr_t>(inbox.data()),
                        static_cast<std::uint32_t>(inbox.size()), inbox_mr->lkey};
    ibv_recv_wr receive{};
    receive.sg_list = &receive_sge;
    receive.num_sge = 1;
    ibv_recv_wr* bad_receive = nullptr;
    exercise::check(ibv_post_recv(peer.qp, &receive, &bad_receive), "ibv_post_recv");
    exercise::wait_until_peer_ready(peer);

    // Step 2: an address handle for the peer (ibv_create_ah): its GID, our source GID index.
    ibv_ah* ah = nullptr;  // EXERCISE
    if (ah == nullptr) exercise::fail("step 2: no address handle yet");

    // Step 3: one datagram of 64 bytes to the peer's QP (wr.wr.ud: ah, remote_qpn, remote_qkey).
    std::vector<std::uint8_t> outgoing(kPayload);
    for (std::size_t i = 0; i < outgoing.size(); ++i) outgoing[i] = exercise::pattern_byte(i);
    ibv_mr* outgoing_mr = ibv_reg_mr(peer.pd, outgoing.data(), outgoing.size(), 0);
    if (outgoing_mr == nullptr) exercise::fail("ibv_reg_mr(outgoing) failed");
    ibv_sge send_sge{reinterpret_cast<std::uintptr_t>(outgoing.data()),
                     static_cast<std::uint32_t>(outgoing.size()), outgoing_mr->lkey};
    ibv_send_wr send{};
    send.sg_list = &send_sge;
    send.num_sge = 1;
    send.opcode = IBV_WR_SEND;
    send.send_flags = IBV_SEND_SIGNALED;
    // EXERCISE: where it goes
    ibv_send_wr* bad_send = nullptr;
    exercise::check(ibv_post_send(peer.qp, &send, &bad_send), "ibv_post_send(datagram)");

    // Two completions: our send's, and the receive of the peer's answer.
    bool received = false;
    for (int n = 0; n < 2; ++n) {
        const ibv_wc wc = exercise::wait_for_completion(peer.cq);
        if (wc.status != IBV_WC_SUCCESS)
            exercise::fail(std::string("a completion failed: ") + ibv_wc_status_str(wc.status));
        if (wc.opcode == IBV_WC_RECV) {
            // Step 4: how many bytes does a UD receive of a 64-byte datagram report?
            if (wc.byte_len != kPayload) exercise::fail("the answer is not 64 bytes");  // EXERCISE
            received = true;
        }
    }
    bool verified = received;
    for (std::size_t i = 0; i < kPayload && verified; ++i)
        verified = inbox[i] == exercise::pattern_byte(i);  // EXERCISE: where is the payload?
    exercise::send_verdict(peer, verified);

    ibv_dereg_mr(outgoing_mr);
    ibv_destroy_ah(ah);
    ibv_dereg_mr(inbox_mr);
    std::printf("sent one datagram, received one: %s\n", verified ? "verified" : "NOT the pattern");
    return verified ? 0 : 1;
}
