// Exercise 15's server: the leaky one the reader attacks. It holds a 256-byte public board, whose
// (address, rkey) every client gets in the accept's private data, and right after it in memory a
// 64-byte vault: its secret, drawn at random, registered for REMOTE_READ because a replica READs
// it (that is the leak), and registered just before the board. The vault's key is never sent;
// but on Soft-RoCE an rkey is the region's index in the device's pool (handed out in sequence)
// << 8 | 8 random bits, so the vault's index is the board's minus one, and only 256 keys remain.
// A READ with a wrong key is refused with a NAK that ends its connection, so the server accepts
// connection after connection, each on a QP of its own.
//   exercise-key-server --address A --port P [--timeout S] [--key-byte-min N] [--key-byte-max M]
// It prints "peer: listening on A port P", then the vault (where, its key, what it holds) for the
// checker, and serves until it is stopped (the checker stops it once the attacker has ended), or
// gives up when no client has come within --timeout s.
// --key-byte-min N, --key-byte-max M: register the vault again until its key's random byte is
// between N and M (each try takes the next index, so the board still follows it): the checker's
// runs then need N + 1 to M + 1 tries from an attacker that counts up from 0.
#include "exercise.hpp"
#include "rdmalab/error.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/random.h>
#include <CLI/CLI.hpp>

#include <array>
#include <chrono>
#include <set>
#include <thread>

using namespace rdmalab;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::uint32_t kBoardBytes = 256;
constexpr std::uint32_t kVaultBytes = 64;

// #region memory
// The server's memory: the board every client may READ, and right after it the vault.
struct Memory {
    std::array<std::uint8_t, kBoardBytes> board{};
    std::array<std::uint8_t, kVaultBytes> vault{};
};
// #endregion memory

std::string hex(const std::uint8_t* bytes, std::size_t size) {
    std::string out;
    for (std::size_t i = 0; i < size; ++i) out += fmt::format("{:02x}", bytes[i]);
    return out;
}

struct Options {
    std::string address;
    std::uint16_t port = 0;
    double timeout_s = 10;
    unsigned key_byte_min = 0;
    unsigned key_byte_max = 255;
};

// Every connection is accepted with the board's advertisement and a QP of its own; a client that
// leaves (or whose QP a wrong key killed, and which then disconnects) is released.
[[noreturn]] void serve(const Options& options) {
    rdma_event_channel* events =
        check_ptr(rdma_create_event_channel(), "rdma_create_event_channel");
    // Non-blocking: the loop below polls for events and ends on its own clock.
    check_errno(fcntl(events->fd, F_SETFL, fcntl(events->fd, F_GETFL) | O_NONBLOCK) == 0,
                "fcntl(O_NONBLOCK)");
    rdma_cm_id* listener = nullptr;
    check_errno(rdma_create_id(events, &listener, nullptr, RDMA_PS_TCP) == 0, "rdma_create_id");
    sockaddr_in local{};
    local.sin_family = AF_INET;
    local.sin_port = htons(options.port);
    if (inet_pton(AF_INET, options.address.c_str(), &local.sin_addr) != 1)
        fail("not an IPv4 address: " + options.address);
    check_errno(rdma_bind_addr(listener, reinterpret_cast<sockaddr*>(&local)) == 0,
                "rdma_bind_addr");
    // Bound to an address, the listener knows its device: the regions are registered on it
    // before anyone may connect.
    ibv_context* context = listener->verbs;
    ibv_pd* pd = check_ptr(ibv_alloc_pd(context), "ibv_alloc_pd");
    ibv_cq* cq = check_ptr(ibv_create_cq(context, 16, nullptr, nullptr, 0), "ibv_create_cq");
    static Memory memory;
    check_errno(getrandom(memory.vault.data(), kVaultBytes, 0) == kVaultBytes, "getrandom");
    const std::string notice = "The board: READ me. The vault is not for you.";
    std::copy(notice.begin(), notice.end(), memory.board.begin());

    // The vault first, then the board: two consecutive indexes in the device's pool.
    ibv_mr* vault = nullptr;
    const auto wanted = [&](const ibv_mr* mr) {
        return mr != nullptr && (mr->rkey & 0xff) >= options.key_byte_min &&
               (mr->rkey & 0xff) <= options.key_byte_max;
    };
    for (int tries = 0; !wanted(vault); ++tries) {
        if (tries == 4096) fail("no vault key with its byte in the range asked for in 4096 tries");
        if (vault != nullptr) check_ibv(ibv_dereg_mr(vault), "ibv_dereg_mr(vault)");
        vault = check_ptr(ibv_reg_mr(pd, memory.vault.data(), kVaultBytes, IBV_ACCESS_REMOTE_READ),
                          "ibv_reg_mr(vault)");
    }
    ibv_mr* board =
        check_ptr(ibv_reg_mr(pd, memory.board.data(), kBoardBytes, IBV_ACCESS_REMOTE_READ),
                  "ibv_reg_mr(board)");
    std::array<std::uint8_t, exercise::kRemoteBufferBytes> advertisement{};
    exercise::encode_remote_buffer(
        {reinterpret_cast<std::uintptr_t>(memory.board.data()), board->rkey, kBoardBytes},
        advertisement.data());

    check_errno(rdma_listen(listener, 16) == 0, "rdma_listen");
    fmt::print("peer: listening on {} port {}\n", options.address, options.port);
    fmt::print("peer: board at {:#x} rkey {:#010x}; vault at {:#x} rkey {:#010x}\n",
               reinterpret_cast<std::uintptr_t>(memory.board.data()), board->rkey,
               reinterpret_cast<std::uintptr_t>(memory.vault.data()), vault->rkey);
    fmt::print("peer: vault holds {}\n", hex(memory.vault.data(), kVaultBytes));
    std::fflush(stdout);

    std::set<rdma_cm_id*> clients;
    int accepted = 0;
    const auto started = Clock::now();
    for (;;) {
        rdma_cm_event* event = nullptr;
        bool any_event = false;
        while (rdma_get_cm_event(events, &event) == 0) {
            any_event = true;
            const rdma_cm_event_type type = event->event;
            rdma_cm_id* id = event->id;
            check_errno(rdma_ack_cm_event(event) == 0, "rdma_ack_cm_event");
            if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
                ibv_qp_init_attr init{};
                init.send_cq = cq;
                init.recv_cq = cq;
                init.qp_type = IBV_QPT_RC;
                init.cap.max_send_wr = 1;
                init.cap.max_recv_wr = 1;
                init.cap.max_send_sge = 1;
                init.cap.max_recv_sge = 1;
                check_errno(rdma_create_qp(id, pd, &init) == 0, "rdma_create_qp");
                rdma_conn_param param{};
                param.private_data = advertisement.data();
                param.private_data_len = advertisement.size();
                param.responder_resources = 1;  // one READ at a time from each client
                param.rnr_retry_count = 6;
                check_errno(rdma_accept(id, &param) == 0, "rdma_accept");
                clients.insert(id);
                ++accepted;
            } else if (clients.contains(id) &&
                       (type == RDMA_CM_EVENT_DISCONNECTED || type == RDMA_CM_EVENT_CONNECT_ERROR ||
                        type == RDMA_CM_EVENT_UNREACHABLE || type == RDMA_CM_EVENT_REJECTED)) {
                rdma_destroy_qp(id);
                check_errno(rdma_destroy_id(id) == 0, "rdma_destroy_id");
                clients.erase(id);
            }
        }
        // No end of its own once a client came: the attacker may need hundreds of connections,
        // and any quiet spell measured here would be on the guest's clock, which under emulation
        // can run many times fast. What it holds goes with the process.
        const double waited_s = std::chrono::duration<double>(Clock::now() - started).count();
        if (accepted == 0 && waited_s > options.timeout_s)
            fail(fmt::format("no client connected within {:.0f} s", options.timeout_s));
        if (!any_event) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("exercise-key-server", [&]() -> int {
        CLI::App app{"Exercise 15's leaky server: a board for everyone, a vault right before it"};
        Options options;
        app.add_option("--address", options.address, "the address to listen on")->required();
        app.add_option("-p,--port", options.port, "its rdma_cm port")
            ->required()
            ->check(CLI::Range(1, 65535));
        app.add_option("--timeout", options.timeout_s, "seconds to wait for the first client")
            ->check(CLI::Range(1.0, 600.0));
        app.add_option("--key-byte-min", options.key_byte_min,
                       "register the vault again until its key's random byte is at least this")
            ->check(CLI::Range(0, 255));
        app.add_option("--key-byte-max", options.key_byte_max,
                       "register the vault again until its key's random byte is at most this")
            ->check(CLI::Range(0, 255));
        try {
            app.parse(argc, argv);
        } catch (const CLI::ParseError& e) {
            std::exit(app.exit(e));
        }
        serve(options);
    });
}
