// Lesson: rendezvous — how large transfers are arranged: (a) the client SENDs {address, rkey,
// length}, the server RDMA-READs the data and answers FIN; (b) a ring of slots the client fills
// with RDMA WRITE and the server consumes by polling, with credits flowing back.
// Run: rendezvous server [-s MAX] [--slots S] | rendezvous client ADDR [-s SIZE] [-n MSGS]
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
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <utility>

using namespace rdmalab;

namespace {

struct RendezvousOptions : ConnectionOptions {
    std::string mode = "both";           // client: read, ring, or both over one connection
    std::uint32_t messages = 64;         // client: -n ring messages
    std::uint32_t slots = 8;             // server: ring slots
    std::uint32_t consume_delay_us = 0;  // server: slow consumer; the producer runs out of credits
    bool ignore_credits = false;         // client: overwrite slots anyway (the server must notice)
};

constexpr std::uint64_t kPayloadSeed = 0x8d;
constexpr std::uint64_t kRingSeed = 0x1000;  // ring message i carries pattern kRingSeed + i
constexpr std::uint32_t kMaxRingMessages = 1'000'000;

// A ring slot is one 64-byte cache line: payload, then an 8-byte sequence word (message number
// + 1, big-endian; 0 = never written) at the END, so the slot's last bytes are written last.
constexpr std::size_t kSlotBytes = 64;
constexpr std::size_t kSlotPayload = kSlotBytes - sizeof(std::uint64_t);

// Control messages, client → server, 32 bytes: a tag, a buffer advertisement (private_data.hpp's
// wire format), a count. Server → client, 8 bytes: "FIN\0" and the number of bytes verified.
// Big-endian (codec.hpp), so the tags read as their letters on the wire.
constexpr std::size_t kControlBytes = 4 + kRemoteBufferWireSize + 4;
constexpr std::size_t kFinBytes = 8;
constexpr std::uint32_t kRendezvousTag = 0x524e4456;  // "RNDV": read my buffer (kReadSource)
constexpr std::uint32_t kRingTag = 0x52494e47;  // "RING": my credit word (kWriteTarget), a count
constexpr std::uint32_t kDoneTag = 0x444f4e45;  // "DONE"
constexpr std::uint32_t kFinTag = 0x46494e00;   // "FIN\0"

using ControlMessage = std::array<std::byte, kControlBytes>;
using FinMessage = std::array<std::byte, kFinBytes>;

// A control message as the server reads it: the received bytes, checked before use. The buffer
// advertisement is decoded where it is used, for the use its tag implies.
struct ControlRequest {
    std::uint32_t tag = 0;
    std::span<const std::byte> buffer;
    std::uint32_t count = 0;
};
ControlRequest read_control(std::span<const std::byte> received) {
    if (received.size() != kControlBytes)
        fail(fmt::format("expected a {}-byte control message, got {} bytes", kControlBytes,
                         received.size()));
    ByteReader in(received, "the client's control message");
    ControlRequest request;
    request.tag = in.u32();
    request.buffer = in.bytes(kRemoteBufferWireSize);
    request.count = in.u32();
    if (request.tag != kRendezvousTag && request.tag != kRingTag && request.tag != kDoneTag)
        fail(fmt::format("unknown control message tag {:#010x}", request.tag));
    return request;
}

// The server's FIN as the client reads it: the number of bytes the server verified.
std::uint32_t read_fin(std::span<const std::byte> received) {
    if (received.size() != kFinBytes)
        fail(fmt::format("expected an {}-byte FIN, got {} bytes", kFinBytes, received.size()));
    ByteReader in(received, "the server's FIN");
    if (const std::uint32_t tag = in.u32(); tag != kFinTag)
        fail(fmt::format("expected the FIN tag {:#010x}, got {:#010x}", kFinTag, tag));
    return in.u32();
}

ControlMessage make_control(std::uint32_t tag, const RemoteBuffer& buffer, std::uint32_t count) {
    ControlMessage message{};
    ByteWriter out(message, "the control message");
    out.u32(tag);
    out.bytes(encode_remote_buffer(buffer));
    out.u32(count);
    out.expect_end();
    return message;
}

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

// One CQ carries both the completions of our own operations and the peer's messages. A message
// can complete before the operation we wait for (the peer may answer before our NIC has polled
// the acknowledgement), so a receive that comes early is kept for later, never mistaken.
class Completions {
  public:
    explicit Completions(Connection& connection) : connection_(connection) {}

    ibv_wc wait_for(ibv_wc_opcode expected, std::string_view what) {
        if (expected == IBV_WC_RECV && early_receive_)
            return *std::exchange(early_receive_, std::nullopt);
        for (;;) {
            ibv_wc wc = connection_.wait_for_completion(what);
            if (wc.opcode == expected) return wc;
            if (wc.opcode == IBV_WC_RECV && !early_receive_) {
                early_receive_ = wc;  // only one receive is ever posted: at most one comes early
                continue;
            }
            fail(fmt::format("{}: unexpected completion (opcode {})", what,
                             static_cast<int>(wc.opcode)));
        }
    }

  private:
    Connection& connection_;
    std::optional<ibv_wc> early_receive_;
};

// ---------------------------------------------------------------------------------------------
// The server: serves whatever the client's control messages ask for, until DONE.

class Server {
  public:
    Server(Connection& connection, Completions& completions, const RendezvousOptions& options,
           Buffer& ring)
        : connection_(connection), completions_(completions), options_(options), ring_(ring) {}

    // #region rendezvous-read
    // (a) The client's buffer, advertised in a SEND: validate, RDMA READ it, verify, FIN.
    bool serve_rendezvous(std::span<const std::byte> advertisement) {
        RemoteBuffer source = decode_remote_buffer_or_throw(advertisement, BufferUse::kReadSource);
        if (source.length > options_.size)
            fail(fmt::format("the client offers {} bytes; this server accepts at most {} (-s)",
                             source.length, options_.size));
        // The landing buffer is written by our own NIC with the READ response: LOCAL_WRITE. (A real
        // server keeps registered buffers in a pool: registering per transfer is slow.)
        Buffer landing(source.length);
        MemoryRegion landing_mr{
            ibv_reg_mr(connection_.pd(), landing.data(), landing.size(), IBV_ACCESS_LOCAL_WRITE)};
        check_ptr(landing_mr.get(), "ibv_reg_mr(landing buffer)");
        ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(landing.data()),
                    .length = source.length,
                    .lkey = landing_mr->lkey};
        ibv_send_wr read{};
        read.sg_list = &sge;
        read.num_sge = 1;
        read.opcode = IBV_WR_RDMA_READ;
        read.send_flags = IBV_SEND_SIGNALED;
        read.wr.rdma.remote_addr = source.address;
        read.wr.rdma.rkey = source.rkey;
        post_one(connection_.qp(), read, "ibv_post_send(RDMA_READ)");
        completions_.wait_for(IBV_WC_RDMA_READ, "RDMA READ of the client's buffer");
        // #endregion rendezvous-read
        if (auto mismatch = find_pattern_mismatch(landing.bytes(), kPayloadSeed)) {
            fmt::print("server: data check FAILED: byte {} of the client's {} bytes differs\n",
                       *mismatch, source.length);
            return false;
        }
        fmt::print(
            "server: rendezvous: read {} bytes from {:#x} (rkey {:#x}) with one RDMA READ, "
            "verified\n",
            source.length, source.address, source.rkey);

        // FIN: until it arrives the client must keep its buffer registered and unchanged.
        FinMessage fin{};
        ByteWriter out(fin, "the FIN message");
        out.u32(kFinTag);
        out.u32(source.length);
        MemoryRegion fin_mr{ibv_reg_mr(connection_.pd(), fin.data(), fin.size(), 0)};
        check_ptr(fin_mr.get(), "ibv_reg_mr(FIN)");
        ibv_sge fin_sge{.addr = reinterpret_cast<std::uintptr_t>(fin.data()),
                        .length = static_cast<std::uint32_t>(fin.size()),
                        .lkey = fin_mr->lkey};
        ibv_send_wr send{};
        send.sg_list = &fin_sge;
        send.num_sge = 1;
        send.opcode = IBV_WR_SEND;
        send.send_flags = IBV_SEND_SIGNALED;
        post_one(connection_.qp(), send, "ibv_post_send(SEND FIN)");
        completions_.wait_for(IBV_WC_SEND, "the FIN message");
        rendezvous_bytes_ += source.length;
        return true;
    }

    // (b) Consume `count` messages from the ring, in order, returning credits to the client's
    // credit word with RDMA WRITE every half ring.
    bool consume_ring(std::span<const std::byte> credit_advertisement, std::uint32_t count) {
        RemoteBuffer credit =
            decode_remote_buffer_or_throw(credit_advertisement, BufferUse::kWriteTarget);
        if (credit.length < sizeof(std::uint64_t) || credit.address % sizeof(std::uint64_t) != 0)
            fail(fmt::format(
                "the client's credit word is {} bytes at {:#x}: need 8 bytes, 8-byte aligned",
                credit.length, credit.address));
        if (count == 0 || count > kMaxRingMessages)
            fail(fmt::format("the client announces {} ring messages; 1 to {} are allowed", count,
                             kMaxRingMessages));
        // The value we write is read from this word by our NIC: no access flags needed.
        Buffer consumed_word(sizeof(std::uint64_t));
        MemoryRegion consumed_mr{
            ibv_reg_mr(connection_.pd(), consumed_word.data(), consumed_word.size(), 0)};
        check_ptr(consumed_mr.get(), "ibv_reg_mr(consumed count)");
        ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(consumed_word.data()),
                    .length = sizeof(std::uint64_t),
                    .lkey = consumed_mr->lkey};
        const std::uint32_t batch = std::max<std::uint32_t>(1, options_.slots / 2);

        // #region ring-poll
        for (std::uint32_t i = 0; i < count; ++i) {
            std::byte* slot = ring_.data() + (i % options_.slots) * kSlotBytes;
            std::byte* sequence_word = slot + kSlotPayload;
            // Poll the slot's LAST 8 bytes. On RC a WRITE's bytes are placed in order on the NICs
            // people use with host memory, so when the sequence word is new the payload before it
            // is too. The InfiniBand spec does not promise this ordering: with relaxed-ordering
            // PCIe or GPU memory the payload may appear after the last bytes. Portable signals:
            // WRITE WITH IMMEDIATE (lesson write-imm) or a second WRITE for the flag.
            const std::uint64_t expected = i + 1;
            const std::uint64_t previous = i >= options_.slots ? i + 1 - options_.slots : 0;
            const auto deadline = deadline_after(options_.timeout_s);
            std::uint64_t spins = 0;
            for (;;) {
                const std::uint64_t sequence = load_acquire(sequence_word);
                if (sequence == expected) break;
                if (sequence != previous) return order_broken(i, sequence);
                if (std::chrono::steady_clock::now() > deadline)
                    fail(fmt::format("ring message {} did not arrive within {:.1f} s", i,
                                     options_.timeout_s));
                pause_polling(spins);
            }
            // #endregion ring-poll
            if (options_.consume_delay_us > 0)
                std::this_thread::sleep_for(std::chrono::microseconds(options_.consume_delay_us));
            auto mismatch = find_pattern_mismatch({slot, kSlotPayload}, kRingSeed + i);
            // Still message i? A producer that ignores credits may have overwritten it meanwhile.
            if (const std::uint64_t sequence = load_acquire(sequence_word); sequence != expected)
                return order_broken(i, sequence);
            if (mismatch) {
                fmt::print("server: data check FAILED: ring message {} differs at byte {}\n", i,
                           *mismatch);
                return false;
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
                post_one(connection_.qp(), write, "ibv_post_send(RDMA_WRITE credits)");
                // Waited for, so consumed_word can be changed for the next update.
                completions_.wait_for(IBV_WC_RDMA_WRITE, "RDMA WRITE of the credit count");
            }
        }
        fmt::print(
            "server: ring: consumed {} messages through {} slots in order, each verified; credits "
            "returned after every {} consumed\n",
            count, options_.slots, batch);
        ring_messages_ += count;
        return true;
    }

    std::uint64_t rendezvous_bytes() const { return rendezvous_bytes_; }
    std::uint64_t ring_messages() const { return ring_messages_; }

  private:
    bool order_broken(std::uint32_t index, std::uint64_t sequence) {
        if (sequence > index + 1)
            fmt::print(
                "server: ring check FAILED: slot {} holds message {} while message {} was due: the "
                "producer overwrote a slot that was not consumed yet\n",
                index % options_.slots, sequence - 1, index);
        else
            fmt::print(
                "server: ring check FAILED: slot {} holds sequence word {}, expected "
                "message {}: out of order\n",
                index % options_.slots, sequence, index);
        return false;
    }

    Connection& connection_;
    Completions& completions_;
    const RendezvousOptions& options_;
    Buffer& ring_;
    std::uint64_t rendezvous_bytes_ = 0;
    std::uint64_t ring_messages_ = 0;
};

int run_server(const RendezvousOptions& options) {
    auto connection = Connection::wait_for_client(options);
    connection.create_queues({.send = 2, .recv = 1, .completions = 4});
    connection.require_size_fits(options.size);

    // The ring: the client writes it (REMOTE_WRITE, with the LOCAL_WRITE that requires); this CPU
    // reads it. It is advertised in the accept's private data.
    Buffer ring(options.slots * kSlotBytes);
    MemoryRegion ring_mr{ibv_reg_mr(connection.pd(), ring.data(), ring.size(),
                                    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)};
    check_ptr(ring_mr.get(), "ibv_reg_mr(ring)");
    // One receive for control messages, re-posted after each.
    ControlMessage control{};
    MemoryRegion control_mr{
        ibv_reg_mr(connection.pd(), control.data(), control.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(control_mr.get(), "ibv_reg_mr(control)");
    ibv_sge control_sge{.addr = reinterpret_cast<std::uintptr_t>(control.data()),
                        .length = static_cast<std::uint32_t>(control.size()),
                        .lkey = control_mr->lkey};
    ibv_recv_wr receive{.wr_id = 0, .next = nullptr, .sg_list = &control_sge, .num_sge = 1};
    ibv_recv_wr* bad_receive = nullptr;
    trace::post_recv(connection.qp(), &receive);  // --trace records the WR (else: nothing)
    check_ibv(ibv_post_recv(connection.qp(), &receive, &bad_receive), "ibv_post_recv");

    auto advertisement =
        encode_remote_buffer({.address = reinterpret_cast<std::uintptr_t>(ring.data()),
                              .rkey = ring_mr->rkey,
                              .length = static_cast<std::uint32_t>(ring.size()),
                              .use = BufferUse::kWriteTarget});
    connection.accept(advertisement);
    fmt::print("server: connected over {}; ring of {} slots of {} bytes at {:#x}, rkey {:#x}\n",
               connection.path_description(), options.slots, kSlotBytes,
               reinterpret_cast<std::uintptr_t>(ring.data()), ring_mr->rkey);

    Completions completions(connection);
    Server server(connection, completions, options, ring);
    for (;;) {
        ibv_wc wc = completions.wait_for(IBV_WC_RECV, "a control message from the client");
        // Copied, so the receive can be posted again at once; byte_len is at most the 32 bytes
        // posted (a longer SEND fails the receive instead).
        const ControlMessage message = control;
        trace::post_recv(connection.qp(), &receive);  // --trace records the WR (else: nothing)
        check_ibv(ibv_post_recv(connection.qp(), &receive, &bad_receive), "ibv_post_recv");
        const auto [tag, buffer, count] = read_control(std::span<const std::byte>(message).first(
            std::min<std::size_t>(wc.byte_len, kControlBytes)));
        if (tag == kDoneTag) break;
        const bool verified = tag == kRendezvousTag ? server.serve_rendezvous(buffer)
                                                    : server.consume_ring(buffer, count);
        if (!verified) return 1;
    }
    connection.wait_for_disconnect();
    std::string summary;
    if (server.rendezvous_bytes() > 0)
        summary =
            fmt::format("rendezvous, {} bytes pulled with RDMA READ", server.rendezvous_bytes());
    if (server.ring_messages() > 0)
        summary += fmt::format("{}ring, {} messages in content and order",
                               summary.empty() ? "" : "; ", server.ring_messages());
    fmt::print("server: verified: {}\n",
               summary.empty() ? "nothing was asked of this server" : summary);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// The client.

struct ClientParts {
    Connection& connection;
    Completions& completions;
    const RendezvousOptions& options;
    ibv_sge control_sge;
    ControlMessage& control;
    FinMessage& fin;
};

void send_control(ClientParts& client, const ControlMessage& message) {
    client.control = message;
    ibv_send_wr send{};
    send.sg_list = &client.control_sge;
    send.num_sge = 1;
    send.opcode = IBV_WR_SEND;
    send.send_flags = IBV_SEND_SIGNALED;
    post_one(client.connection.qp(), send, "ibv_post_send(SEND control)");
    client.completions.wait_for(IBV_WC_SEND, "a control message");
}

// #region rendezvous-offer
// (a) Offer a large buffer; the server pulls it. The buffer lives only inside this function, and
// it returns only after FIN: freeing or reusing it earlier would let the server read garbage.
void rendezvous(ClientParts& client) {
    const std::size_t size = client.options.size;
    if (size > UINT32_MAX)
        fail(fmt::format("-s {}: a rendezvous advertises at most {} bytes", size, UINT32_MAX));
    Buffer payload(size);
    fill_pattern(payload.bytes(), kPayloadSeed);
    // The server's NIC reads it (REMOTE_READ); our own NIC never writes it.
    MemoryRegion payload_mr{
        ibv_reg_mr(client.connection.pd(), payload.data(), payload.size(), IBV_ACCESS_REMOTE_READ)};
    check_ptr(payload_mr.get(), "ibv_reg_mr(payload)");

    send_control(client, make_control(kRendezvousTag,
                                      {.address = reinterpret_cast<std::uintptr_t>(payload.data()),
                                       .rkey = payload_mr->rkey,
                                       .length = static_cast<std::uint32_t>(size),
                                       .use = BufferUse::kReadSource},
                                      0));
    fmt::print("client: rendezvous: offered {} bytes at {:#x}, rkey {:#x}; waiting for FIN\n", size,
               reinterpret_cast<std::uintptr_t>(payload.data()), payload_mr->rkey);
    ibv_wc wc = client.completions.wait_for(IBV_WC_RECV, "the server's FIN");
    const std::uint32_t verified =
        read_fin(std::span<const std::byte>(client.fin)
                     .first(std::min<std::size_t>(wc.byte_len, kFinBytes)));
    if (verified != size)
        fail(fmt::format("the server's FIN reports {} bytes, {} were offered", verified, size));
    fmt::print(
        "client: FIN: the server read and verified {} bytes; only now is the buffer released\n",
        size);
}
// #endregion rendezvous-offer

// (b) Fill the server's ring, never overwriting a slot the server has not consumed.
std::uint32_t produce_ring(ClientParts& client, const RemoteBuffer& ring) {
    const RendezvousOptions& options = client.options;
    const std::uint64_t slots = ring.length / kSlotBytes;
    // The credit word: the server's NIC writes the consumed count here (REMOTE_WRITE, so also
    // LOCAL_WRITE); this CPU polls it.
    Buffer credit_word(sizeof(std::uint64_t));
    MemoryRegion credit_mr{ibv_reg_mr(client.connection.pd(), credit_word.data(),
                                      credit_word.size(),
                                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)};
    check_ptr(credit_mr.get(), "ibv_reg_mr(credit word)");
    // One slot's worth of staging, read by our NIC; each WRITE completes before it is refilled.
    Buffer staging(kSlotBytes);
    MemoryRegion staging_mr{ibv_reg_mr(client.connection.pd(), staging.data(), staging.size(), 0)};
    check_ptr(staging_mr.get(), "ibv_reg_mr(staging)");

    send_control(client,
                 make_control(kRingTag,
                              {.address = reinterpret_cast<std::uintptr_t>(credit_word.data()),
                               .rkey = credit_mr->rkey,
                               .length = sizeof(std::uint64_t),
                               .use = BufferUse::kWriteTarget},
                              options.messages));

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
                fail(fmt::format("{}: the server consumed {} of {} messages in {:.1f} s", what,
                                 consumed, produced, options.timeout_s));
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
        post_one(client.connection.qp(), write, "ibv_post_send(RDMA_WRITE slot)");
        client.completions.wait_for(IBV_WC_RDMA_WRITE, "RDMA WRITE into the ring");
    }
    // #endregion ring-produce
    wait_for_credits(options.messages, options.messages,
                     "waiting for the server to consume the ring");
    fmt::print(
        "client: ring: wrote {} messages into {} slots, all consumed; {} writes waited for "
        "credits\n",
        options.messages, slots, credit_waits);
    return credit_waits;
}

int run_client(const RendezvousOptions& options) {
    auto connection = Connection::resolve(options);
    connection.create_queues({.send = 2, .recv = 1, .completions = 4});
    connection.require_size_fits(options.size);

    ControlMessage control{};
    MemoryRegion control_mr{ibv_reg_mr(connection.pd(), control.data(), control.size(), 0)};
    check_ptr(control_mr.get(), "ibv_reg_mr(control)");
    // The receive for FIN, posted before connecting (only one FIN ever comes).
    FinMessage fin{};
    MemoryRegion fin_mr{
        ibv_reg_mr(connection.pd(), fin.data(), fin.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(fin_mr.get(), "ibv_reg_mr(FIN)");
    ibv_sge fin_sge{.addr = reinterpret_cast<std::uintptr_t>(fin.data()),
                    .length = static_cast<std::uint32_t>(fin.size()),
                    .lkey = fin_mr->lkey};
    ibv_recv_wr receive{.wr_id = 0, .next = nullptr, .sg_list = &fin_sge, .num_sge = 1};
    ibv_recv_wr* bad_receive = nullptr;
    trace::post_recv(connection.qp(), &receive);  // --trace records the WR (else: nothing)
    check_ibv(ibv_post_recv(connection.qp(), &receive, &bad_receive), "ibv_post_recv");

    auto private_data = connection.connect();
    RemoteBuffer ring = decode_remote_buffer_or_throw(private_data, BufferUse::kWriteTarget);
    if (ring.length < kSlotBytes || ring.length % kSlotBytes != 0 ||
        ring.address % sizeof(std::uint64_t) != 0)
        fail(fmt::format(
            "the server's ring is {} bytes at {:#x}: need whole {}-byte slots, 8-byte aligned",
            ring.length, ring.address, kSlotBytes));
    fmt::print("client: connected over {}; server ring of {} slots at {:#x}, rkey {:#x}\n",
               connection.path_description(), ring.length / kSlotBytes, ring.address, ring.rkey);

    Completions completions(connection);
    ClientParts client{.connection = connection,
                       .completions = completions,
                       .options = options,
                       .control_sge = {.addr = reinterpret_cast<std::uintptr_t>(control.data()),
                                       .length = static_cast<std::uint32_t>(control.size()),
                                       .lkey = control_mr->lkey},
                       .control = control,
                       .fin = fin};
    std::string summary;
    if (options.mode != "ring") {
        rendezvous(client);
        summary = fmt::format("{} bytes by rendezvous, released after FIN", options.size);
    }
    if (options.mode != "read") {
        const std::uint32_t waits = produce_ring(client, ring);
        summary += fmt::format(
            "{}{} ring messages through {} slots, consumed in order ({} writes waited "
            "for credits)",
            summary.empty() ? "" : "; ", options.messages, ring.length / kSlotBytes, waits);
    }
    send_control(client,
                 make_control(kDoneTag, {.address = 0, .rkey = 0, .length = 0, .use = {}}, 0));
    connection.disconnect();
    fmt::print("client: done: {}; the server verified every byte\n", summary);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("rendezvous", [&] {
        CommandLine cli{"Rendezvous (SEND address, peer RDMA-READs, FIN) and a credited WRITE ring",
                        "rendezvous"};
        RendezvousOptions options;
        options.size = 1 << 20;  // a "large" transfer by default
        cli.add_connection_options(options);
        cli.option("--mode", options.mode, "client: read (rendezvous), ring, or both in sequence")
            .choices({"read", "ring", "both"})
            .show_default();
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
