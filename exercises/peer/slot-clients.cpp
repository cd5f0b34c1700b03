// Exercise 14's judges: reference clients of the reader's slot server (slots.hpp), each case on
// its own line — "peer: case NAME: ok …" or "… FAILED: …" — then one verdict: "peer: verified …"
// (exit 0) or "peer: FAILED: …" (exit 1).
//   exercise-slot-clients --address SERVER --port P [--timeout S]
// The cases, in order. own-slot: clients A and B each WRITE their slot and have the server
// CHECK it. Then four attacks, each with only what a client is legitimately given, each
// expected to end in IBV_WC_REM_ACCESS_ERR with the server's memory unchanged:
//   neighbour-slot  A WRITEs past the end of its slot (where the starter keeps B's)
//   read-secret     B READs the 64 bytes before the first slot (where the starter keeps its
//                   secret: B is the second client, and the starter's layout is no secret)
//   leaked-key      D WRITEs C's slot with C's key, leaked to it, over D's own QP
//   after-end       C, its session ended (END answered), WRITEs its slot with its old key
// and shutdown: E sends SHUTDOWN and is disconnected by the server. An attack's line names the
// attacker's QP number, so the judge finds the NAK the server sent it in the capture.
#include "exercise.hpp"
#include "rdmalab/connection.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/verbs.hpp"
#include "slots.hpp"

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace rdmalab;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::uint64_t kSendId = 1;
constexpr std::uint64_t kRecvId = 2;
constexpr std::uint64_t kRdmaId = 3;
// Every completion comes in milliseconds, refused or not: a wait runs out only when something
// is wrong, and it runs on the guest's clock, which under emulation can run many times fast.
double g_wait_s = 10;

// Bytes a client writes: they follow from a seed, so the server's CHECK can be predicted.
std::array<std::uint8_t, slots::kSlotBytes> bytes_of(std::uint32_t seed) {
    std::array<std::uint8_t, slots::kSlotBytes> b{};
    for (std::uint32_t i = 0; i < b.size(); ++i) b[i] = exercise::pattern_byte(i + seed * 977);
    return b;
}

// One client: its connection, the slot the server advertised, a receive always posted for the
// next reply, and a buffer its WRITEs come from (and its READs land in).
struct SlotClient {
    std::string name;
    std::unique_ptr<Connection> connection;
    exercise::RemoteBuffer slot;
    std::array<std::uint8_t, slots::kMessageBytes> message{};
    std::array<std::uint8_t, slots::kReplyBytes> reply{};
    std::array<std::uint8_t, slots::kSlotBytes> data{};
    MemoryRegion message_mr, reply_mr, data_mr;  // released before the connection

    ~SlotClient() {
        message_mr.reset();
        reply_mr.reset();
        data_mr.reset();
    }
    std::string qpn() const { return fmt::format("{:#08x}", connection->qp()->qp_num); }

    void post_reply_receive() {
        ibv_sge sge{reinterpret_cast<std::uintptr_t>(reply.data()), slots::kReplyBytes,
                    reply_mr->lkey};
        ibv_recv_wr wr{};
        wr.wr_id = kRecvId;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        ibv_recv_wr* bad = nullptr;
        check_ibv(ibv_post_recv(connection->qp(), &wr, &bad), "ibv_post_recv(reply)");
    }
};

// Connects, trying again while the server is not listening yet (it starts beside us), and keeps
// the slot the server's accept advertised.
std::unique_ptr<SlotClient> connect_client(const ConnectionOptions& options, std::string name) {
    const auto give_up = Clock::now() + std::chrono::seconds(10);
    for (;;) {
        try {
            auto c = std::make_unique<SlotClient>();
            c->name = name;
            c->connection = std::make_unique<Connection>(Connection::resolve(options));
            c->connection->create_queues({.send = 4, .recv = 2, .completions = 8});
            ibv_pd* pd = c->connection->pd();
            c->message_mr.reset(ibv_reg_mr(pd, c->message.data(), c->message.size(), 0));
            c->reply_mr.reset(
                ibv_reg_mr(pd, c->reply.data(), c->reply.size(), IBV_ACCESS_LOCAL_WRITE));
            c->data_mr.reset(
                ibv_reg_mr(pd, c->data.data(), c->data.size(), IBV_ACCESS_LOCAL_WRITE));
            check_ptr(c->message_mr.get(), "ibv_reg_mr(message)");
            check_ptr(c->reply_mr.get(), "ibv_reg_mr(reply)");
            check_ptr(c->data_mr.get(), "ibv_reg_mr(data)");
            c->post_reply_receive();
            const auto advertised = c->connection->connect();
            c->slot = exercise::decode_remote_buffer(advertised.data(), advertised.size());
            return c;
        } catch (const std::exception& e) {
            if (Clock::now() > give_up)
                fail(fmt::format("client {} could not connect within 10 s: {}", name, e.what()));
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
    }
}

// The next completion of `wr_id` on the client's CQ, whatever its status; nullopt (with `why`)
// when none came in time. A reply's receive that completes meanwhile is set aside in `reply`.
std::optional<ibv_wc> completion_of(SlotClient& c, std::uint64_t wr_id, std::string& why,
                                    std::optional<ibv_wc>* reply = nullptr) {
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(g_wait_s));
    for (;;) {
        ibv_wc wc{};
        const int n = ibv_poll_cq(c.connection->cq(), 1, &wc);
        if (n < 0) fail("ibv_poll_cq failed");
        if (n == 1 && wc.wr_id == wr_id) return wc;
        if (n == 1 && reply != nullptr) *reply = wc;
        if (Clock::now() > deadline) {
            why = fmt::format("{}: no completion within {:.0f} s", c.name, g_wait_s);
            return std::nullopt;
        }
        if (n == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

// One RDMA WRITE (of `length` bytes of data) or READ (into data) at (address, rkey); its
// completion, whatever its status.
std::optional<ibv_wc> one_sided(SlotClient& c, ibv_wr_opcode opcode, std::uint64_t address,
                                std::uint32_t rkey, std::uint32_t length, std::string& why) {
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(c.data.data()), length, c.data_mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = kRdmaId;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = opcode;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = address;
    wr.wr.rdma.rkey = rkey;
    ibv_send_wr* bad = nullptr;
    check_ibv(ibv_post_send(c.connection->qp(), &wr, &bad), "ibv_post_send(rdma)");
    return completion_of(c, kRdmaId, why);
}

// A message to the server and its reply.
std::optional<slots::Reply> call(SlotClient& c, const slots::Message& m, std::string& why) {
    slots::encode_message(m, c.message.data());
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(c.message.data()), slots::kMessageBytes,
                c.message_mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = kSendId;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    check_ibv(ibv_post_send(c.connection->qp(), &wr, &bad), "ibv_post_send(message)");
    std::optional<ibv_wc> reply;
    const auto sent = completion_of(c, kSendId, why, &reply);
    if (!sent) return std::nullopt;
    if (sent->status != IBV_WC_SUCCESS) {
        why = fmt::format("{}: our message failed: {}", c.name, ibv_wc_status_str(sent->status));
        return std::nullopt;
    }
    if (!reply) reply = completion_of(c, kRecvId, why);
    if (!reply) return std::nullopt;
    if (reply->status != IBV_WC_SUCCESS || reply->byte_len != slots::kReplyBytes) {
        why = fmt::format("{}: the reply's receive: {}, {} bytes", c.name,
                          ibv_wc_status_str(reply->status), reply->byte_len);
        return std::nullopt;
    }
    const slots::Reply r = slots::decode_reply(c.reply.data());
    c.post_reply_receive();
    return r;
}

// The server CHECKs that the client's slot holds `expected` (the whole slot).
bool slot_holds(SlotClient& c, const std::array<std::uint8_t, slots::kSlotBytes>& expected,
                std::string& why) {
    const std::uint32_t sum = exercise::checksum(expected.data(), expected.size());
    const auto reply = call(c, {slots::kCheck, slots::kSlotBytes, sum}, why);
    if (!reply) return false;
    if (reply->status == slots::kOk) return true;
    why =
        fmt::format("{}: CHECK of its slot answered status {} (checksum {:#010x}, wrote {:#010x})",
                    c.name, reply->status, reply->checksum, sum);
    return false;
}

// The client WRITEs `bytes` to its own slot, and the server CHECKs it.
bool write_own(SlotClient& c, const std::array<std::uint8_t, slots::kSlotBytes>& bytes,
               std::string& why) {
    if (c.slot.length != slots::kSlotBytes) {
        why = fmt::format("{}: the server advertised a slot of {} bytes, not {}", c.name,
                          c.slot.length, slots::kSlotBytes);
        return false;
    }
    c.data = bytes;
    const auto wc =
        one_sided(c, IBV_WR_RDMA_WRITE, c.slot.address, c.slot.rkey, slots::kSlotBytes, why);
    if (!wc) return false;
    if (wc->status != IBV_WC_SUCCESS) {
        why = fmt::format("{}: the WRITE of its own slot failed: {}", c.name,
                          ibv_wc_status_str(wc->status));
        return false;
    }
    return slot_holds(c, bytes, why);
}

// An attack's one work request: refused (IBV_WC_REM_ACCESS_ERR) is what a closed server does.
bool refused(SlotClient& attacker, const char* what, std::optional<ibv_wc> wc, std::string& why) {
    if (!wc) return false;
    if (wc->status == IBV_WC_REM_ACCESS_ERR) return true;
    why = fmt::format("{}'s {} completed with {}, not remote access error", attacker.name, what,
                      ibv_wc_status_str(wc->status));
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("exercise-slot-clients", [&] {
        CLI::App app{"Exercise 14's reference clients: judge a slot server (slots.hpp)"};
        ConnectionOptions options;
        app.add_option("--address", options.server_address, "the server's address")->required();
        app.add_option("-p,--port", options.port, "its rdma_cm port")
            ->required()
            ->check(CLI::Range(1, 65535));
        app.add_option("--timeout", g_wait_s, "seconds to wait for each completion")
            ->check(CLI::Range(0.5, 60.0));
        try {
            app.parse(argc, argv);
        } catch (const CLI::ParseError& e) {
            std::exit(app.exit(e));
        }
        options.timeout_s = 10;

        int failed = 0, cases = 0;
        std::string first_failure;
        auto case_result = [&](const char* name, bool ok, const std::string& detail) {
            ++cases;
            if (ok) {
                fmt::print("peer: case {}: ok ({})\n", name, detail);
            } else {
                ++failed;
                fmt::print("peer: case {}: FAILED: {}\n", name, detail);
                if (first_failure.empty()) first_failure = name;
            }
            std::fflush(stdout);
        };
        std::string why;
        const auto bytes_a = bytes_of(1), bytes_b = bytes_of(2), bytes_c = bytes_of(3);
        const std::array<std::uint8_t, slots::kSlotBytes> rogue = bytes_of(99);

        auto a = connect_client(options, "client A");
        auto b = connect_client(options, "client B");
        bool ok = write_own(*a, bytes_a, why) && write_own(*b, bytes_b, why) &&
                  slot_holds(*a, bytes_a, why);
        case_result("own-slot", ok, ok ? "A and B each wrote its slot; both checked" : why);

        // A's WRITE of 64 bytes just past its slot; then B's slot must still hold B's bytes.
        a->data = rogue;
        ok = refused(*a, "WRITE past its slot",
                     one_sided(*a, IBV_WR_RDMA_WRITE, a->slot.address + slots::kSlotBytes,
                               a->slot.rkey, 64, why),
                     why) &&
             slot_holds(*b, bytes_b, why);
        case_result("neighbour-slot", ok,
                    ok ? fmt::format("A's WRITE past its slot refused; B's slot unchanged; qpn {}",
                                     a->qpn())
                       : why);

        // B's READ of the 64 bytes before the first slot; nothing may land in its buffer.
        b->data.fill(0);
        ok = refused(*b, "READ of the server's secret",
                     one_sided(*b, IBV_WR_RDMA_READ,
                               b->slot.address - slots::kSlotBytes - slots::kSecretBytes,
                               b->slot.rkey, slots::kSecretBytes, why),
                     why);
        for (std::uint32_t i = 0; ok && i < slots::kSecretBytes; ++i)
            if (b->data[i] != 0) {
                ok = false;
                why = "B's READ failed, yet bytes landed in its buffer";
            }
        case_result("read-secret", ok,
                    ok ? fmt::format("B's READ outside its slot refused; qpn {}", b->qpn()) : why);

        auto c = connect_client(options, "client C");
        auto d = connect_client(options, "client D");
        d->data = rogue;
        ok = write_own(*c, bytes_c, why) &&
             refused(*d, "WRITE with C's key",
                     one_sided(*d, IBV_WR_RDMA_WRITE, c->slot.address, c->slot.rkey, 64, why),
                     why) &&
             slot_holds(*c, bytes_c, why);
        case_result(
            "leaked-key", ok,
            ok ? fmt::format("D's WRITE with C's key refused; C's slot unchanged; qpn {}", d->qpn())
               : why);

        // C says END; its key must be dead before the reply comes.
        auto reply = call(*c, {slots::kEnd, 0, 0}, why);
        ok = reply && reply->status == slots::kOk;
        if (reply && !ok) why = fmt::format("END answered status {}", reply->status);
        c->data = rogue;
        ok = ok &&
             refused(*c, "WRITE with its key after END",
                     one_sided(*c, IBV_WR_RDMA_WRITE, c->slot.address, c->slot.rkey, 64, why), why);
        case_result("after-end", ok,
                    ok ? fmt::format("C's WRITE after its END refused; qpn {}", c->qpn()) : why);

        auto e = connect_client(options, "client E");
        reply = call(*e, {slots::kShutdown, 0, 0}, why);
        ok = reply && reply->status == slots::kOk;
        if (reply && !ok) why = fmt::format("SHUTDOWN answered status {}", reply->status);
        const auto deadline = Clock::now() + std::chrono::seconds(10);
        while (ok && !e->connection->peer_disconnected() && Clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (ok && !e->connection->peer_disconnected()) {
            ok = false;
            why = "client E not disconnected by the server within 10 s of SHUTDOWN";
        }
        case_result("shutdown", ok, ok ? "answered; E disconnected by the server" : why);

        if (failed == 0) {
            fmt::print("peer: verified: all {} cases held, 5 clients\n", cases);
            return 0;
        }
        fmt::print("peer: FAILED: {} of {} cases failed (the first: {})\n", failed, cases,
                   first_failure);
        return 1;
    });
}
