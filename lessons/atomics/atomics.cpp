// Lesson: atomics — remote fetch-and-add and compare-and-swap: several clients count on one server
// word, then share a second word under a spin lock built from CAS. Run: atomics server
// [--clients N] [-n ITERS] | atomics client ADDR [-n ITERS] (once per client, all at once)
#include "rdmalab/codec.hpp"
#include "rdmalab/connection.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/private_data.hpp"
#include "rdmalab/trace.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

using namespace rdmalab;

namespace {

struct AtomicsOptions : ConnectionOptions {
    std::uint32_t iterations = 100;  // -n: fetch-and-adds, then locked increments, per client
    std::uint32_t clients = 2;       // server: how many clients to accept
    bool no_lock = false;            // client: skip the lock, to see updates get lost
};

// The server's words. Atomics work on 8-byte words at 8-byte-aligned addresses: the NIC does the
// read-modify-write on one aligned word (a misaligned address fails the operation).
constexpr std::size_t kCounter = 0;  // target of fetch-and-add
constexpr std::size_t kLock = 1;     // 0 = free, otherwise the id of the client holding it
constexpr std::size_t kAtomicWords = 2;

// Private data of the accept: the atomic words, the lock-protected word, this client's lock id.
constexpr std::size_t kGreetingSize = 2 * kRemoteBufferWireSize + 4;

// Bounds on acquiring the lock: attempts, and backoff between them (doubling) up to a ceiling.
constexpr std::uint32_t kMaxAcquireAttempts = 1'000'000;
constexpr auto kFirstBackoff = std::chrono::microseconds(1);
constexpr auto kMaxBackoff = std::chrono::microseconds(500);

// Atomics need a device that supports them at all; ATOMIC_HCA (Soft-RoCE, most NICs) means
// atomic only against other atomics through the NIC, not against this host's CPU.
void require_atomics(ibv_context* context, std::string_view side) {
    ibv_device_attr device{};
    check_ibv(ibv_query_device(context, &device), "ibv_query_device");
    if (device.atomic_cap == IBV_ATOMIC_NONE)
        fail(fmt::format("{} does not support RDMA atomics (atomic_cap is IBV_ATOMIC_NONE)",
                         ibv_get_device_name(context->device)));
    fmt::print("{}: {} atomic_cap: {}\n", side, ibv_get_device_name(context->device),
               device.atomic_cap == IBV_ATOMIC_GLOB
                   ? "ATOMIC_GLOB (atomic against the CPU too)"
                   : "ATOMIC_HCA (atomic among NIC operations only)");
}

int run_server(const AtomicsOptions& options) {
    Listener listener(options);
    Connection first = listener.next_client();
    require_atomics(first.context(), "server");

    // One PD for all clients (they must all reach the same words), created on the first
    // client's device; each connection gets its own CQ and QP in it.
    ProtectionDomain pd{ibv_alloc_pd(first.context())};
    check_ptr(pd.get(), "ibv_alloc_pd");
    // #region register-atomic-words
    // Least privilege, two regions. The atomic words: REMOTE_ATOMIC only, plus LOCAL_WRITE,
    // which verbs demands with any remote write access because the NIC writes the memory.
    Buffer atomic_words(kAtomicWords * sizeof(std::uint64_t));
    MemoryRegion atomic_mr{ibv_reg_mr(pd.get(), atomic_words.data(), atomic_words.size(),
                                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC)};
    check_ptr(atomic_mr.get(), "ibv_reg_mr(atomic words)");
    // The lock-protected word is read and written with plain RDMA READ/WRITE, never atomically.
    Buffer shared_word(sizeof(std::uint64_t));
    MemoryRegion shared_mr{
        ibv_reg_mr(pd.get(), shared_word.data(), shared_word.size(),
                   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE)};
    check_ptr(shared_mr.get(), "ibv_reg_mr(lock-protected word)");
    // #endregion register-atomic-words
    // The "go" message that starts every client at once, so they really compete.
    std::array<std::byte, 4> go{};
    store_be32(go, options.clients);
    MemoryRegion go_mr{ibv_reg_mr(pd.get(), go.data(), go.size(), 0)};
    check_ptr(go_mr.get(), "ibv_reg_mr(go)");

    auto atomic_ad =
        encode_remote_buffer({.address = reinterpret_cast<std::uintptr_t>(atomic_words.data()),
                              .rkey = atomic_mr->rkey,
                              .length = static_cast<std::uint32_t>(atomic_words.size()),
                              .use = BufferUse::kAtomicTarget});
    auto shared_ad =
        encode_remote_buffer({.address = reinterpret_cast<std::uintptr_t>(shared_word.data()),
                              .rkey = shared_mr->rkey,
                              .length = static_cast<std::uint32_t>(shared_word.size()),
                              .use = BufferUse::kWriteTarget});

    // Accept every client: same device (the PD belongs to one), queues in the shared PD,
    // and a lock id of its own (1, 2, …: never 0, which means "free").
    std::vector<Connection> clients;
    clients.reserve(options.clients);
    clients.push_back(std::move(first));
    for (std::uint32_t id = 1; id <= options.clients; ++id) {
        if (id > 1) clients.push_back(listener.next_client());
        Connection& client = clients.back();
        if (client.context() != pd->context)
            fail(fmt::format("client {} arrived on device {}, the others on {}", id,
                             ibv_get_device_name(client.context()->device),
                             ibv_get_device_name(pd->context->device)));
        client.create_queues({.send = 1, .recv = 1, .completions = 2, .shared_pd = pd.get()});
        std::array<std::byte, kGreetingSize> greeting{};
        ByteWriter out(greeting, "the greeting");
        out.bytes(atomic_ad);
        out.bytes(shared_ad);
        out.u32(id);
        out.expect_end();
        client.accept(greeting);
        fmt::print("server: client {} of {} connected over {}\n", id, options.clients,
                   client.path_description());
    }

    ibv_sge go_sge{.addr = reinterpret_cast<std::uintptr_t>(go.data()),
                   .length = static_cast<std::uint32_t>(go.size()),
                   .lkey = go_mr->lkey};
    // A client that disconnected before the start (it died, or gave up) is left out: it has
    // touched neither word, so the others' run can still be checked exactly. (One that goes
    // after the start cannot be told from one that finished: its share of the counter is
    // unknown, and the check below says so.)
    std::uint32_t started = 0;
    for (std::uint32_t id = 1; id <= clients.size(); ++id) {
        Connection& client = clients[id - 1];
        bool gone = client.peer_disconnected();
        if (!gone) {
            ibv_send_wr send{};
            send.sg_list = &go_sge;
            send.num_sge = 1;
            send.opcode = IBV_WR_SEND;
            send.send_flags = IBV_SEND_SIGNALED;
            ibv_send_wr* bad_send = nullptr;
            trace::post_send(client.qp(), &send);  // --trace records the WR (else: nothing)
            check_ibv(ibv_post_send(client.qp(), &send, &bad_send), "ibv_post_send(SEND go)");
            try {
                client.wait_for_completion("the go message");
            } catch (const Error&) {
                if (!client.peer_disconnected()) throw;
                gone = true;
            }
        }
        if (gone)
            fmt::print(
                "server: client {} disconnected before the start: left out; serving the "
                "others\n",
                id);
        else
            ++started;
    }
    if (started == 0) fail("every client disconnected before the start");
    fmt::print("server: {} clients started; this CPU leaves the words alone until they are done\n",
               started == options.clients ? fmt::format("all {}", started)
                                          : fmt::format("{} of {}", started, options.clients));

    // A client that has disconnected has had every operation acknowledged: its updates are in.
    // Only then does this CPU read the words: with ATOMIC_HCA its accesses would not be atomic
    // against the NIC's.
    for (Connection& client : clients) client.wait_for_disconnect();
    const auto* words = reinterpret_cast<const std::uint64_t*>(atomic_words.data());
    const std::uint64_t counter = words[kCounter];
    const std::uint64_t lock = words[kLock];
    const std::uint64_t shared = *reinterpret_cast<const std::uint64_t*>(shared_word.data());
    const std::uint64_t expected = std::uint64_t{started} * options.iterations;
    fmt::print(
        "server: counter = {}, lock-protected word = {}, lock word = {} (expected {}, {}, 0)\n",
        counter, shared, lock, expected, expected);
    if (counter != expected) {
        fmt::print("server: check FAILED: the counter is {}, not {} clients x {} fetch-and-adds\n",
                   counter, started, options.iterations);
        return 1;
    }
    if (lock != 0) {
        fmt::print("server: check FAILED: the lock is still held by client {}\n", lock);
        return 1;
    }
    if (shared != expected) {
        fmt::print(
            "server: check FAILED: the lock-protected word is {}, not {}: {} updates were lost\n",
            shared, expected, shared < expected ? expected - shared : 0);
        return 1;
    }
    fmt::print(
        "server: verified: {} clients x {} fetch-and-adds = {}, and {} increments under the "
        "remote CAS lock, none lost\n",
        started, options.iterations, counter, shared);
    if (started < options.clients)
        fail(
            fmt::format("{} of {} clients disconnected before the start; the other {} were "
                        "served and verified",
                        options.clients - started, options.clients, started));
    return 0;
}

int run_client(const AtomicsOptions& options) {
    auto connection = Connection::resolve(options);
    connection.create_queues({.send = 1, .recv = 1, .completions = 2});
    require_atomics(connection.context(), "client");

    // An atomic returns the word's original value into a local 8-byte buffer: our NIC writes it
    // there, hence LOCAL_WRITE. The same buffer receives RDMA READs and sources RDMA WRITEs.
    // (Soft-RoCE stores the value in host byte order; a few older NICs returned it big-endian.)
    Buffer local_word(sizeof(std::uint64_t));
    MemoryRegion local_mr{
        ibv_reg_mr(connection.pd(), local_word.data(), local_word.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(local_mr.get(), "ibv_reg_mr(local word)");
    auto* local = reinterpret_cast<std::uint64_t*>(local_word.data());
    std::array<std::byte, 4> go{};
    MemoryRegion go_mr{ibv_reg_mr(connection.pd(), go.data(), go.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(go_mr.get(), "ibv_reg_mr(go)");
    ibv_sge go_sge{.addr = reinterpret_cast<std::uintptr_t>(go.data()),
                   .length = static_cast<std::uint32_t>(go.size()),
                   .lkey = go_mr->lkey};
    ibv_recv_wr receive{.wr_id = 0, .next = nullptr, .sg_list = &go_sge, .num_sge = 1};
    ibv_recv_wr* bad_receive = nullptr;
    trace::post_recv(connection.qp(), &receive);  // --trace records the WR (else: nothing)
    check_ibv(ibv_post_recv(connection.qp(), &receive, &bad_receive), "ibv_post_recv");

    // The server's greeting: two buffers and our lock id, checked before any use.
    auto greeting = connection.connect();
    if (greeting.size() < kGreetingSize)
        fail(fmt::format("the server's private data has {} bytes, expected {}", greeting.size(),
                         kGreetingSize));
    ByteReader in(greeting, "the server's greeting");  // what follows it is the CM's padding
    RemoteBuffer atomics =
        decode_remote_buffer_or_throw(in.bytes(kRemoteBufferWireSize), BufferUse::kAtomicTarget);
    RemoteBuffer shared =
        decode_remote_buffer_or_throw(in.bytes(kRemoteBufferWireSize), BufferUse::kWriteTarget);
    const std::uint32_t id = in.u32();
    if (atomics.length < kAtomicWords * sizeof(std::uint64_t) ||
        atomics.address % sizeof(std::uint64_t) != 0)
        fail(fmt::format(
            "the server's atomic words are {} bytes at {:#x}: need {} bytes, 8-byte aligned",
            atomics.length, atomics.address, kAtomicWords * sizeof(std::uint64_t)));
    if (shared.length < sizeof(std::uint64_t) || shared.address % sizeof(std::uint64_t) != 0)
        fail(fmt::format(
            "the server's shared word is {} bytes at {:#x}: need 8 bytes, 8-byte aligned",
            shared.length, shared.address));
    if (id == 0) fail("the server gave this client lock id 0, which means 'free'");
    const std::uint64_t counter_address = atomics.address + kCounter * sizeof(std::uint64_t);
    const std::uint64_t lock_address = atomics.address + kLock * sizeof(std::uint64_t);
    fmt::print("client {}: connected over {}; counter at {:#x}, lock at {:#x}, rkey {:#x}\n", id,
               connection.path_description(), counter_address, lock_address, atomics.rkey);

    ibv_wc go_wc = connection.wait_for_completion("the server's go message");
    if (go_wc.opcode != IBV_WC_RECV || go_wc.byte_len != go.size())
        fail(fmt::format("expected a {}-byte go message, got opcode {} with {} bytes", go.size(),
                         static_cast<int>(go_wc.opcode), go_wc.byte_len));

    // One operation on an 8-byte remote word through local_word, waited for: the value the
    // operation returned (atomics, READ) is then in *local.
    ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(local_word.data()),
                .length = sizeof(std::uint64_t),
                .lkey = local_mr->lkey};
    auto post_and_wait = [&](ibv_send_wr& wr, std::string_view what) {
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.send_flags = IBV_SEND_SIGNALED;
        ibv_send_wr* bad_send = nullptr;
        trace::post_send(connection.qp(), &wr);  // --trace records the WR (else: nothing)
        check_ibv(ibv_post_send(connection.qp(), &wr, &bad_send), what);
        connection.wait_for_completion(what);
    };
    // #region atomic-ops
    auto fetch_and_add = [&](std::uint64_t address, std::uint64_t add) {
        ibv_send_wr wr{};
        wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
        wr.wr.atomic.remote_addr = address;
        wr.wr.atomic.rkey = atomics.rkey;
        wr.wr.atomic.compare_add = add;  // operands are host-order numbers; the NIC converts them
        post_and_wait(wr, "ibv_post_send(ATOMIC_FETCH_AND_ADD)");
        return *local;
    };
    auto compare_and_swap = [&](std::uint64_t address, std::uint64_t compare, std::uint64_t swap) {
        ibv_send_wr wr{};
        wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
        wr.wr.atomic.remote_addr = address;
        wr.wr.atomic.rkey = atomics.rkey;
        wr.wr.atomic.compare_add = compare;
        wr.wr.atomic.swap = swap;  // written only if the word equals compare; returns the old word
        post_and_wait(wr, "ibv_post_send(ATOMIC_CMP_AND_SWP)");
        return *local;
    };
    // #endregion atomic-ops
    auto read_or_write = [&](ibv_wr_opcode opcode, std::string_view what) {
        ibv_send_wr wr{};
        wr.opcode = opcode;
        wr.wr.rdma.remote_addr = shared.address;
        wr.wr.rdma.rkey = shared.rkey;
        post_and_wait(wr, what);
    };

    // Part 1: fetch-and-add. Each returns the counter's value before our add; since every add
    // is atomic, no two operations (of any client) see the same value, and ours increase.
    std::uint64_t first_seen = 0;
    std::uint64_t last_seen = 0;
    for (std::uint32_t i = 0; i < options.iterations; ++i) {
        const std::uint64_t before = fetch_and_add(counter_address, 1);
        if (i > 0 && before <= last_seen)
            fail(fmt::format("fetch-and-add {} returned {} after {}: the counter went backwards", i,
                             before, last_seen));
        if (i == 0) first_seen = before;
        last_seen = before;
    }
    fmt::print("client {}: {} fetch-and-adds returned increasing values from {} to {}\n", id,
               options.iterations, first_seen, last_seen);

    // Part 2: a spin lock on the lock word. Acquire = CAS 0 → id (it worked if the old value
    // was 0); the critical section is a READ, an add on this CPU and a WRITE: not atomic, so
    // without the lock two clients can read the same value and one update is lost.
    std::uint64_t contended = 0;
    const auto deadline_length = options.timeout();
    for (std::uint32_t i = 0; i < options.iterations; ++i) {
        if (!options.no_lock) {
            // #region spin-lock
            const auto deadline = std::chrono::steady_clock::now() + deadline_length;
            auto backoff = kFirstBackoff;
            for (std::uint32_t attempt = 1;; ++attempt) {
                const std::uint64_t holder = compare_and_swap(lock_address, 0, id);
                if (holder == 0) break;
                if (holder == id)
                    fail(fmt::format("the lock is already held by this client ({})", id));
                ++contended;
                if (attempt == kMaxAcquireAttempts || std::chrono::steady_clock::now() > deadline)
                    fail(fmt::format(
                        "no remote lock after {} attempts in {:.1f} s: client {} has it", attempt,
                        options.timeout_s, holder));
                std::this_thread::sleep_for(backoff);
                backoff = std::min(backoff * 2, kMaxBackoff);
            }
            // #endregion spin-lock
        }
        read_or_write(IBV_WR_RDMA_READ, "ibv_post_send(RDMA_READ)");
        *local += 1;
        read_or_write(IBV_WR_RDMA_WRITE, "ibv_post_send(RDMA_WRITE)");
        // Release = CAS id → 0, which also proves we still held it. The WRITE has completed, so
        // the next holder's READ sees it.
        if (!options.no_lock) {
            const std::uint64_t holder = compare_and_swap(lock_address, id, 0);
            if (holder != id)
                fail(fmt::format("releasing the lock: it was held by {}, not by us ({})", holder,
                                 id));
        }
    }
    connection.disconnect();
    fmt::print("client {}: {} increments of the shared word {}; found the lock taken {} times\n",
               id, options.iterations,
               options.no_lock ? "WITHOUT the lock" : "under the remote CAS lock", contended);
    fmt::print(
        "client {}: done: {} fetch-and-adds and {} read-modify-writes on the server's memory\n", id,
        options.iterations, options.iterations);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("atomics", [&] {
        CommandLine cli{
            "RDMA atomics: remote fetch-and-add, and a spin lock built on compare-and-swap",
            "atomics"};
        AtomicsOptions options;
        cli.add_connection_options(options);
        cli.option("-n,--iters", options.iterations,
                   "fetch-and-adds and locked increments per client")
            .range(1, 1'000'000)
            .show_default();
        cli.option("--clients", options.clients, "server: number of clients to accept")
            .range(1, 64)
            .show_default();
        cli.flag("--no-lock", options.no_lock,
                 "client: update the shared word without the lock (to see updates get lost)");
        cli.parse_or_exit(argc, argv);
        return options.server ? run_server(options) : run_client(options);
    });
}
