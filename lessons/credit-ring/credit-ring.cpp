// Lesson: credit-ring — a stream of small messages without a receive per message: the client
// RDMA-WRITEs them into a ring of slots in the server's memory, the server consumes them by
// polling each slot's last word, and writes back credits (how many it has consumed) so the
// client never overwrites a slot that is still unread.
// Run: credit-ring server [--slots S] [--consume-delay-us US] | credit-ring client ADDR [-n MSGS]
#include "credit_ring_messages.hpp"
#include "rdmalab/codec.hpp"
#include "rdmalab/connection.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/private_data.hpp"
#include "rdmalab/trace.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string_view>
#include <thread>

using namespace rdmalab;
using namespace rdmalab::credit_ring;  // the ring request: credit_ring_messages.hpp

namespace {

struct RingOptions : ConnectionOptions {
    std::uint32_t messages = 64;         // client: -n ring messages
    std::uint32_t slots = 8;             // server: ring slots
    std::uint32_t consume_delay_us = 0;  // server: slow consumer; the producer runs out of credits
    bool ignore_credits = false;         // client: overwrite slots anyway (the server must notice)
};

constexpr std::uint64_t kRingSeed = 0x1000;  // ring message i carries pattern kRingSeed + i

// A ring slot is one 64-byte cache line: payload, then an 8-byte sequence word (message number
// + 1, big-endian; 0 = never written) at the END, so the slot's last bytes are written last.
constexpr std::size_t kSlotBytes = 64;
constexpr std::size_t kSlotPayload = kSlotBytes - sizeof(std::uint64_t);

// An 8-byte big-endian word that the peer's NIC writes while this CPU polls it: load with acquire
// ordering, so what we read after seeing a new value is not older than the value itself.
std::uint64_t load_acquire(std::byte* word) {
    return from_be64(std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(word))
                         .load(std::memory_order_acquire));
}

std::chrono::steady_clock::time_point deadline_after(double seconds) {
    return std::chrono::steady_clock::now() +
           std::chrono::milliseconds(static_cast<long>(seconds * 1000));
}

// Polling: spin a while, then sleep briefly so a long wait does not take a whole core.
void pause_polling(std::uint64_t& spins) {
    if (++spins > 1000) std::this_thread::sleep_for(std::chrono::microseconds(20));
}

void post_one(ibv_qp* qp, ibv_send_wr& wr, std::string_view call) {
    ibv_send_wr* bad_send = nullptr;
    trace::post_send(qp, &wr);  // --trace records the WR (else: nothing)
    check_ibv(ibv_post_send(qp, &wr, &bad_send), call);
}

// The completion of our own operation `what`: nothing else is on this CQ at that moment.
void wait_for(Connection& connection, ibv_wc_opcode expected, std::string_view what) {
    ibv_wc wc = connection.wait_for_completion(what);
    if (wc.opcode != expected)
        fail(fmt::format("{}: unexpected completion (opcode {})", what,
                         static_cast<int>(wc.opcode)));
}

// ---------------------------------------------------------------------------------------------
// The server: consumes the ring in order, returning credits.

// Why slot `index` does not hold the message due: a producer that ignored credits, or disorder.
int order_broken(std::uint32_t index, std::uint64_t sequence, std::uint32_t slots) {
    if (sequence > index + 1)
        fmt::print(
            "server: ring check FAILED: slot {} holds message {} while message {} was due: the "
            "producer overwrote a slot that was not consumed yet\n",
            index % slots, sequence - 1, index);
    else
        fmt::print(
            "server: ring check FAILED: slot {} holds sequence word {}, expected message {}: out "
            "of order\n",
            index % slots, sequence, index);
    return 1;
}

int run_server(const RingOptions& options) {
    auto connection = Connection::wait_for_client(options);
    connection.create_queues({.send = 2, .recv = 1, .completions = 4});

    // The ring: the client writes it (REMOTE_WRITE, with the LOCAL_WRITE that requires); this CPU
    // reads it. It is advertised in the accept's private data.
    Buffer ring(options.slots * kSlotBytes);
    MemoryRegion ring_mr{ibv_reg_mr(connection.pd(), ring.data(), ring.size(),
                                    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)};
    check_ptr(ring_mr.get(), "ibv_reg_mr(ring)");
    // The receive for the client's ring request, posted before accepting.
    RequestMessage request{};
    MemoryRegion request_mr{
        ibv_reg_mr(connection.pd(), request.data(), request.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(request_mr.get(), "ibv_reg_mr(request)");
    ibv_sge request_sge{.addr = reinterpret_cast<std::uintptr_t>(request.data()),
                        .length = static_cast<std::uint32_t>(request.size()),
                        .lkey = request_mr->lkey};
    ibv_recv_wr receive{.wr_id = 0, .next = nullptr, .sg_list = &request_sge, .num_sge = 1};
    ibv_recv_wr* bad_receive = nullptr;
    trace::post_recv(connection.qp(), &receive);  // --trace records the WR (else: nothing)
    check_ibv(ibv_post_recv(connection.qp(), &receive, &bad_receive), "ibv_post_recv");

    connection.accept(
        encode_remote_buffer({.address = reinterpret_cast<std::uintptr_t>(ring.data()),
                              .rkey = ring_mr->rkey,
                              .length = static_cast<std::uint32_t>(ring.size()),
                              .use = BufferUse::kWriteTarget}));
    fmt::print("server: connected over {}; ring of {} slots of {} bytes at {:#x}, rkey {:#x}\n",
               connection.path_description(), options.slots, kSlotBytes,
               reinterpret_cast<std::uintptr_t>(ring.data()), ring_mr->rkey);

    // The request: where to write credits, and how many messages come. byte_len is at most the
    // 32 bytes posted (a longer SEND fails the receive instead).
    ibv_wc wc = connection.wait_for_completion("the client's ring request");
    if (wc.opcode != IBV_WC_RECV) fail("expected the client's ring request");
    const auto [credit_advertisement, count] =
        read_request(std::span<const std::byte>(request).first(
            std::min<std::size_t>(wc.byte_len, kRequestBytes)));
    RemoteBuffer credit =
        decode_remote_buffer_or_throw(credit_advertisement, BufferUse::kWriteTarget);
    if (credit.length < sizeof(std::uint64_t) || credit.address % sizeof(std::uint64_t) != 0)
        fail(fmt::format(
            "the client's credit word is {} bytes at {:#x}: need 8 bytes, 8-byte aligned",
            credit.length, credit.address));

    // The value we write is read from this word by our NIC: no access flags needed.
    Buffer consumed_word(sizeof(std::uint64_t));
    MemoryRegion consumed_mr{
        ibv_reg_mr(connection.pd(), consumed_word.data(), consumed_word.size(), 0)};
    check_ptr(consumed_mr.get(), "ibv_reg_mr(consumed count)");
    ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(consumed_word.data()),
                .length = sizeof(std::uint64_t),
                .lkey = consumed_mr->lkey};
    const std::uint32_t batch = std::max<std::uint32_t>(1, options.slots / 2);

    // #region ring-poll
    for (std::uint32_t i = 0; i < count; ++i) {
        std::byte* slot = ring.data() + (i % options.slots) * kSlotBytes;
        std::byte* sequence_word = slot + kSlotPayload;
        // Poll the slot's LAST 8 bytes. On one RC QP, rxe and most NICs place a WRITE's bytes
        // in order into host memory, so when the sequence word is new the payload before it is
        // too. The InfiniBand spec does not promise this ordering: with relaxed-ordering PCIe
        // or GPU memory the payload may appear after the last bytes, and a flag in a second
        // WRITE is no better. Portable signals: WRITE WITH IMMEDIATE (lesson write-imm) or a
        // SEND after the data.
        const std::uint64_t expected = i + 1;
        const std::uint64_t previous = i >= options.slots ? i + 1 - options.slots : 0;
        const auto deadline = deadline_after(options.timeout_s);
        std::uint64_t spins = 0;
        for (;;) {
            const std::uint64_t sequence = load_acquire(sequence_word);
            if (sequence == expected) break;
            if (sequence != previous) return order_broken(i, sequence, options.slots);
            if (std::chrono::steady_clock::now() > deadline)
                fail(fmt::format("ring message {} did not arrive within {:.1f} s", i,
                                 options.timeout_s));
            pause_polling(spins);
        }
        // #endregion ring-poll
        if (options.consume_delay_us > 0)
            std::this_thread::sleep_for(std::chrono::microseconds(options.consume_delay_us));
        auto mismatch = find_pattern_mismatch({slot, kSlotPayload}, kRingSeed + i);
        // Still message i? A producer that ignores credits may have overwritten it meanwhile.
        if (const std::uint64_t sequence = load_acquire(sequence_word); sequence != expected)
            return order_broken(i, sequence, options.slots);
        if (mismatch) {
            fmt::print("server: data check FAILED: ring message {} differs at byte {}\n", i,
                       *mismatch);
            return 1;
        }

        // Credits: tell the producer how many messages are consumed, so it may reuse slots.
        const std::uint32_t consumed = i + 1;
        if (consumed % batch == 0 || consumed == count) {
            store_be64(consumed_word.bytes(), consumed);
            ibv_send_wr write{};
            write.sg_list = &sge;
            write.num_sge = 1;
            write.opcode = IBV_WR_RDMA_WRITE;
            write.send_flags = IBV_SEND_SIGNALED;
            write.wr.rdma.remote_addr = credit.address;
            write.wr.rdma.rkey = credit.rkey;
            post_one(connection.qp(), write, "ibv_post_send(RDMA_WRITE credits)");
            // Waited for, so consumed_word can be changed for the next update.
            wait_for(connection, IBV_WC_RDMA_WRITE, "RDMA WRITE of the credit count");
        }
    }
    fmt::print(
        "server: ring: consumed {} messages through {} slots in order, each verified; credits "
        "returned after every {} consumed\n",
        count, options.slots, batch);
    // The last credits have arrived (their WRITE completed): this side hangs up.
    connection.disconnect();
    fmt::print("server: verified: ring, {} messages in content and order\n", count);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// The client: fills the server's ring, never overwriting a slot the server has not consumed.

int run_client(const RingOptions& options) {
    auto connection = Connection::resolve(options);
    connection.create_queues({.send = 2, .recv = 1, .completions = 4});
    RemoteBuffer ring =
        decode_remote_buffer_or_throw(connection.connect(), BufferUse::kWriteTarget);
    if (ring.length < kSlotBytes || ring.length % kSlotBytes != 0 ||
        ring.address % sizeof(std::uint64_t) != 0)
        fail(fmt::format(
            "the server's ring is {} bytes at {:#x}: need whole {}-byte slots, 8-byte aligned",
            ring.length, ring.address, kSlotBytes));
    const std::uint64_t slots = ring.length / kSlotBytes;
    fmt::print("client: connected over {}; server ring of {} slots at {:#x}, rkey {:#x}\n",
               connection.path_description(), slots, ring.address, ring.rkey);

    // The credit word: the server's NIC writes the consumed count here (REMOTE_WRITE, so also
    // LOCAL_WRITE); this CPU polls it.
    Buffer credit_word(sizeof(std::uint64_t));
    MemoryRegion credit_mr{ibv_reg_mr(connection.pd(), credit_word.data(), credit_word.size(),
                                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)};
    check_ptr(credit_mr.get(), "ibv_reg_mr(credit word)");
    // One slot's worth of staging, read by our NIC; each WRITE completes before it is refilled.
    Buffer staging(kSlotBytes);
    MemoryRegion staging_mr{ibv_reg_mr(connection.pd(), staging.data(), staging.size(), 0)};
    check_ptr(staging_mr.get(), "ibv_reg_mr(staging)");

    // The request: where the server writes credits, and how many messages come.
    RequestMessage request =
        make_request({.address = reinterpret_cast<std::uintptr_t>(credit_word.data()),
                      .rkey = credit_mr->rkey,
                      .length = sizeof(std::uint64_t),
                      .use = BufferUse::kWriteTarget},
                     options.messages);
    MemoryRegion request_mr{ibv_reg_mr(connection.pd(), request.data(), request.size(), 0)};
    check_ptr(request_mr.get(), "ibv_reg_mr(request)");
    ibv_sge request_sge{.addr = reinterpret_cast<std::uintptr_t>(request.data()),
                        .length = static_cast<std::uint32_t>(request.size()),
                        .lkey = request_mr->lkey};
    ibv_send_wr send{};
    send.sg_list = &request_sge;
    send.num_sge = 1;
    send.opcode = IBV_WR_SEND;
    send.send_flags = IBV_SEND_SIGNALED;
    post_one(connection.qp(), send, "ibv_post_send(SEND ring request)");
    wait_for(connection, IBV_WC_SEND, "the ring request");

    // The consumed count comes from the peer: it may only grow, and never past what we produced.
    std::uint64_t consumed = 0;
    auto read_credits = [&](std::uint64_t produced) {
        const std::uint64_t value = load_acquire(credit_word.data());
        if (value < consumed || value > produced)
            fail(fmt::format(
                "the server reports {} messages consumed; {} were produced, {} reported before",
                value, produced, consumed));
        consumed = value;
    };
    auto wait_for_credits = [&](std::uint64_t produced, std::uint64_t wanted,
                                std::string_view what) {
        const auto deadline = deadline_after(options.timeout_s);
        std::uint64_t spins = 0;
        for (read_credits(produced); consumed < wanted; read_credits(produced)) {
            if (std::chrono::steady_clock::now() > deadline)
                fail(
                    fmt::format("{}: no credit within {:.1f} s (the server consumed {} of {} "
                                "messages)",
                                what, options.timeout_s, consumed, produced));
            pause_polling(spins);
        }
    };

    std::uint32_t credit_waits = 0;
    ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(staging.data()),
                .length = static_cast<std::uint32_t>(kSlotBytes),
                .lkey = staging_mr->lkey};
    // #region ring-produce
    for (std::uint32_t i = 0; i < options.messages; ++i) {
        // Slot i % slots last held message i - slots: wait until the server has consumed it.
        read_credits(i);
        if (i - consumed >= slots && !options.ignore_credits) {
            ++credit_waits;
            wait_for_credits(i, i + 1 - slots, "waiting for a free ring slot");
        }
        fill_pattern(staging.bytes().first(kSlotPayload), kRingSeed + i);
        store_be64(staging.bytes().subspan(kSlotPayload), std::uint64_t{i} + 1);
        ibv_send_wr write{};
        write.sg_list = &sge;
        write.num_sge = 1;
        write.opcode = IBV_WR_RDMA_WRITE;
        write.send_flags = IBV_SEND_SIGNALED;
        write.wr.rdma.remote_addr = ring.address + (i % slots) * kSlotBytes;
        write.wr.rdma.rkey = ring.rkey;
        post_one(connection.qp(), write, "ibv_post_send(RDMA_WRITE slot)");
        wait_for(connection, IBV_WC_RDMA_WRITE, "RDMA WRITE into the ring");
    }
    // #endregion ring-produce
    wait_for_credits(options.messages, options.messages,
                     "waiting for the server to consume the ring");
    fmt::print(
        "client: ring: wrote {} messages into {} slots, all consumed; {} writes waited for "
        "credits\n",
        options.messages, slots, credit_waits);
    connection.wait_for_disconnect();  // the server hangs up after its last credits
    fmt::print(
        "client: done: {} ring messages through {} slots, consumed in order ({} writes waited "
        "for credits); the server verified every byte\n",
        options.messages, slots, credit_waits);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("credit-ring", [&] {
        CommandLine cli{
            "A ring of slots written with RDMA WRITE, consumed by polling, with credits",
            "credit-ring"};
        RingOptions options;
        cli.add_connection_options(options);
        cli.option("-n,--iters", options.messages, "client: ring messages")
            .range(std::uint32_t{1}, kMaxRingMessages)
            .show_default();
        cli.option("--slots", options.slots, "server: ring slots").range(1, 4096).show_default();
        cli.option("--consume-delay-us", options.consume_delay_us,
                   "server: pause before consuming each ring message (a slow consumer)")
            .range(0, 1'000'000)
            .show_default();
        cli.flag("--ignore-credits", options.ignore_credits,
                 "client: write slots without waiting for credits (the server must detect the "
                 "overwrite)");
        cli.parse_or_exit(argc, argv);
        return options.server ? run_server(options) : run_client(options);
    });
}
