// Exercise 12 — a fence: SEND what a READ fetched, posted together. Fill in the step marked
// EXERCISE. Read the peer's 8-byte word with an RDMA READ, and send it straight back with a SEND
// from the same buffer — both WRs posted in one list, with no wait between them. RC executes a QP's
// WRs in order, but a READ completes only when its response arrives, and a later WR may read the
// buffer before that: IBV_SEND_FENCE makes the SEND wait until the READs before it are done.
// Build and judge: ./rdmalab exercise check 12
#include "exercise.hpp"

int main(int argc, char** argv) {
    const auto args = exercise::parse_arguments(argc, argv);
    exercise::Connection peer = exercise::prepare(args.address, args.port);
    exercise::connect(peer);
    const exercise::RemoteBuffer word = peer.peer_buffer;
    if (word.length != 8) exercise::fail("the peer's word is not 8 bytes");

    // One 8-byte buffer: the READ writes it (LOCAL_WRITE), then the SEND reads it.
    alignas(8) std::uint64_t value = 0;
    ibv_mr* value_mr = ibv_reg_mr(peer.pd, &value, sizeof value, IBV_ACCESS_LOCAL_WRITE);
    if (value_mr == nullptr) exercise::fail("ibv_reg_mr(value) failed");
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(&value), sizeof value, value_mr->lkey};

    ibv_send_wr read{}, echo{};
    read.sg_list = &sge;
    read.num_sge = 1;
    read.opcode = IBV_WR_RDMA_READ;
    read.wr.rdma.remote_addr = word.address;
    read.wr.rdma.rkey = word.rkey;
    read.next = &echo;
    echo.sg_list = &sge;
    echo.num_sge = 1;
    echo.opcode = IBV_WR_SEND;
    // Step 1: the SEND must not read `value` before the READ has filled it.
    echo.send_flags = IBV_SEND_SIGNALED;  // EXERCISE
    ibv_send_wr* bad = nullptr;
    exercise::check(ibv_post_send(peer.qp, &read, &bad), "ibv_post_send(READ, SEND)");
    const ibv_wc wc = exercise::wait_for_completion(peer.cq);
    if (wc.status != IBV_WC_SUCCESS)
        exercise::fail(std::string("the READ or the SEND failed: ") + ibv_wc_status_str(wc.status));

    ibv_dereg_mr(value_mr);
    std::printf("read %#llx and sent it back, fenced\n", static_cast<unsigned long long>(value));
    return 0;
}
