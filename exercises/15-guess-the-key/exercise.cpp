// Exercise 15 — Find the key: you write the attacker. The server (exercises/peer/key-server.cpp,
// read it) gives every client its board's (address, rkey) and keeps a secret 64-byte vault, open
// to RDMA READ, whose key it never sends. This program connects and READs the board; from what
// it was given and what you know of Soft-RoCE's keys, find the vault's key and READ the secret.
// The task says what is judged (./rdmalab exercise task 15).
// Your program is started as:  ./program SERVER_ADDRESS PORT
// Build and judge: ./rdmalab exercise check 15
#include "exercise.hpp"

#include <array>
#include <string>

constexpr std::uint32_t kBoardBytes = 256;  // the server's layout (its Memory struct)
constexpr std::uint32_t kVaultBytes = 64;

// One RDMA READ of `length` bytes at (address, rkey) into `into`, over c; its completion's
// status, whatever it is (the caller decides what a refusal means).
ibv_wc_status read_remote(exercise::Connection& c, std::uint64_t address, std::uint32_t rkey,
                          std::uint8_t* into, std::uint32_t length) {
    ibv_mr* mr = ibv_reg_mr(c.pd, into, length, IBV_ACCESS_LOCAL_WRITE);
    if (mr == nullptr) exercise::fail("ibv_reg_mr failed");
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(into), length, mr->lkey};
    ibv_send_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_READ;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = address;
    wr.wr.rdma.rkey = rkey;
    ibv_send_wr* bad = nullptr;
    exercise::check(ibv_post_send(c.qp, &wr, &bad), "ibv_post_send(READ)");
    const ibv_wc wc = exercise::wait_for_completion(c.cq);
    ibv_dereg_mr(mr);
    return wc.status;
}

int main(int argc, char** argv) {
    const auto args = exercise::parse_arguments(argc, argv);
    // What any client is given: the board's address and key, in the accept. READ it once.
    exercise::RemoteBuffer board;
    {
        exercise::Connection c = exercise::prepare(args.address, args.port);
        exercise::connect(c);
        board = c.peer_buffer;
        std::array<std::uint8_t, kBoardBytes + 1> text{};
        const ibv_wc_status status =
            read_remote(c, board.address, board.rkey, text.data(), kBoardBytes);
        if (status != IBV_WC_SUCCESS)
            exercise::fail(std::string("the READ of the board failed: ") +
                           ibv_wc_status_str(status));
        std::printf("board at 0x%llx, rkey 0x%08x: \"%s\"\n",
                    static_cast<unsigned long long>(board.address), board.rkey,
                    reinterpret_cast<const char*>(text.data()));
    }
    // Your attack: find the vault's key (see the task), READ the vault with it, and print
    // "secret " and its 64 bytes in hex on one line.
    exercise::fail("the vault's key is not found yet");
}
