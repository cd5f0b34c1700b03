// The capstone's judges: several reference clients of the reader's key-value server (exercise 13,
// kv.hpp's protocol), each case on its own line — "peer: case NAME: ok …" or "… FAILED: …" —
// then one verdict: "peer: verified …" (exit 0) or "peer: FAILED: …" (exit 1).
//   exercise-kv-clients --address SERVER --port P [--timeout S]
// The cases, in order: basic (PUT then GET, one client), shared (another client reads it),
// concurrent (two clients' requests in flight at once), bad-requests (each refused, the server
// still serving), corrupt-put (a value that does not match its checksum is not stored),
// slow-client (a client idle since it connected is served like the others), disconnect (a
// client whose buffer vanishes mid-request, and who leaves; the others still served), shutdown
// (every client disconnected by the server).
#include "exercise.hpp"
#include "kv.hpp"
#include "rdmalab/connection.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace rdmalab;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::uint64_t kSendId = 1;
constexpr std::uint64_t kRecvId = 2;
double g_reply_wait_s = 3;

// A value the cases PUT: its bytes follow from a seed, so any client can check it.
std::vector<std::uint8_t> value_of(std::uint32_t seed, std::uint32_t length) {
    std::vector<std::uint8_t> v(length);
    for (std::uint32_t i = 0; i < length; ++i) v[i] = exercise::pattern_byte(i + seed * 977);
    return v;
}

// One client: its connection, a receive always posted for the next reply, and a room a GET's
// value is written into.
struct KvClient {
    std::string name;
    std::unique_ptr<Connection> connection;
    std::array<std::uint8_t, kv::kRequestBytes> request{};
    std::array<std::uint8_t, kv::kReplyBytes> reply{};
    std::array<std::uint8_t, kv::kValueBytes> room{};
    MemoryRegion request_mr, reply_mr, room_mr;  // released before the connection (declared after)
    std::uint32_t next_id = 1;
    std::optional<std::uint32_t> reply_bytes;  // a reply that completed before take_reply
    Clock::time_point connected_at;

    ~KvClient() {
        request_mr.reset();
        reply_mr.reset();
        room_mr.reset();
    }

    void post_reply_receive() {
        ibv_sge sge{reinterpret_cast<std::uintptr_t>(reply.data()), kv::kReplyBytes,
                    reply_mr->lkey};
        ibv_recv_wr wr{};
        wr.wr_id = kRecvId;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        ibv_recv_wr* bad = nullptr;
        check_ibv(ibv_post_recv(connection->qp(), &wr, &bad), "ibv_post_recv(reply)");
    }
};

// Connects, trying again while the server is not listening yet (it starts beside us).
std::unique_ptr<KvClient> connect_client(const ConnectionOptions& options, std::string name) {
    const auto give_up = Clock::now() + std::chrono::seconds(10);
    for (;;) {
        try {
            auto c = std::make_unique<KvClient>();
            c->name = name;
            c->connection = std::make_unique<Connection>(Connection::resolve(options));
            c->connection->create_queues({.send = 4, .recv = 2, .completions = 8});
            ibv_pd* pd = c->connection->pd();
            c->request_mr.reset(ibv_reg_mr(pd, c->request.data(), c->request.size(), 0));
            c->reply_mr.reset(
                ibv_reg_mr(pd, c->reply.data(), c->reply.size(), IBV_ACCESS_LOCAL_WRITE));
            c->room_mr.reset(ibv_reg_mr(pd, c->room.data(), c->room.size(),
                                        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
            check_ptr(c->request_mr.get(), "ibv_reg_mr(request)");
            check_ptr(c->reply_mr.get(), "ibv_reg_mr(reply)");
            check_ptr(c->room_mr.get(), "ibv_reg_mr(room)");
            c->post_reply_receive();
            c->connection->connect();
            c->connected_at = Clock::now();
            return c;
        } catch (const std::exception& e) {
            if (Clock::now() > give_up)
                fail(fmt::format("client {} could not connect within 10 s: {}", name, e.what()));
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
    }
}

Clock::time_point reply_deadline() {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(g_reply_wait_s));
}

// The next completion on the client's CQ before `deadline`; nullopt with `why` set when none
// came or it failed (`waiting_for` names what was awaited).
std::optional<ibv_wc> next_completion(KvClient& c, Clock::time_point deadline,
                                      const std::string& waiting_for, std::string& why) {
    for (;;) {
        ibv_wc wc{};
        const int n = ibv_poll_cq(c.connection->cq(), 1, &wc);
        if (n < 0) fail("ibv_poll_cq failed");
        if (n == 1 && wc.status == IBV_WC_SUCCESS) return wc;
        if (n == 1) {
            why = fmt::format("{}: our {} failed: {} (the server's QP is gone?)", c.name,
                              wc.wr_id == kSendId ? "request" : "receive",
                              ibv_wc_status_str(wc.status));
            return std::nullopt;
        }
        if (Clock::now() > deadline) {
            why = fmt::format("{}: {} within {:.0f} s", c.name, waiting_for, g_reply_wait_s);
            return std::nullopt;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

// Posts the request as a SEND and waits for the SEND's completion; returns the request's id. A
// reply that completes meanwhile is kept for take_reply.
std::optional<std::uint32_t> send_request(KvClient& c, kv::Request r, std::string& why) {
    r.id = c.next_id++;
    kv::encode_request(r, c.request.data());
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(c.request.data()), kv::kRequestBytes,
                c.request_mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = kSendId;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    if (ibv_post_send(c.connection->qp(), &wr, &bad) != 0) {
        why = fmt::format("{}: ibv_post_send failed", c.name);
        return std::nullopt;
    }
    const auto deadline = reply_deadline();
    const std::string waiting_for =
        fmt::format("our request's SEND did not complete (request {})", r.id);
    for (;;) {
        const auto wc = next_completion(c, deadline, waiting_for, why);
        if (!wc) return std::nullopt;
        if (wc->wr_id == kSendId) return r.id;
        c.reply_bytes = wc->byte_len;  // the reply, before our SEND's own completion
    }
}

// Waits for the reply to request `id` and returns it, its receive posted again.
std::optional<kv::Reply> take_reply(KvClient& c, std::uint32_t id, std::string& why) {
    if (!c.reply_bytes) {
        const auto deadline = reply_deadline();
        const auto wc = next_completion(c, deadline, fmt::format("no reply (request {})", id), why);
        if (!wc) return std::nullopt;
        c.reply_bytes = wc->byte_len;
    }
    const std::uint32_t bytes = *std::exchange(c.reply_bytes, std::nullopt);
    if (bytes != kv::kReplyBytes) {
        why = fmt::format("{}: a reply of {} bytes, not {}", c.name, bytes, kv::kReplyBytes);
        return std::nullopt;
    }
    const kv::Reply reply = kv::decode_reply(c.reply.data());
    c.post_reply_receive();
    if (reply.id != id) {
        why = fmt::format("{}: the reply is to request {}, we sent {}", c.name, reply.id, id);
        return std::nullopt;
    }
    return reply;
}

// One request and its reply.
std::optional<kv::Reply> call(KvClient& c, const kv::Request& r, std::string& why) {
    const auto id = send_request(c, r, why);
    if (!id) return std::nullopt;
    return take_reply(c, *id, why);
}

const char* status_name(std::uint32_t status) {
    switch (status) {
        case kv::kOk:
            return "ok";
        case kv::kBadRequest:
            return "bad-request";
        case kv::kCorrupt:
            return "corrupt";
        case kv::kNotFound:
            return "not-found";
    }
    return "unknown";
}

// PUT `value` under key from a buffer registered for the server's READ only (exactly its
// length: a READ of more is refused). `checksum` overrides the value's own (corrupt-put).
std::optional<kv::Reply> put(KvClient& c, std::uint32_t key, const std::vector<std::uint8_t>& value,
                             std::string& why, std::optional<std::uint32_t> checksum = {}) {
    std::vector<std::uint8_t> source = value;
    source.resize(std::max<std::size_t>(source.size(), 1));  // a region of 0 bytes cannot be made
    MemoryRegion mr{
        ibv_reg_mr(c.connection->pd(), source.data(), source.size(), IBV_ACCESS_REMOTE_READ)};
    check_ptr(mr.get(), "ibv_reg_mr(value)");
    const std::uint32_t sum = checksum.value_or(exercise::checksum(value.data(), value.size()));
    return call(c,
                {kv::kPut, key, static_cast<std::uint32_t>(value.size()), sum,
                 reinterpret_cast<std::uintptr_t>(source.data()), mr->rkey, 0},
                why);
}

// GET key into the room (`room` bytes of it offered); the reply's status.
std::optional<kv::Reply> get(KvClient& c, std::uint32_t key, std::string& why,
                             std::uint32_t room = kv::kValueBytes) {
    c.room.fill(0);
    return call(c,
                {kv::kGet, key, room, 0, reinterpret_cast<std::uintptr_t>(c.room.data()),
                 c.room_mr->rkey, 0},
                why);
}

// The checks every case makes: a reply came with the status expected, and for a GET that
// succeeded, the bytes in the room are `expected`, matching the reply's length and checksum.
bool put_ok(KvClient& c, std::uint32_t key, const std::vector<std::uint8_t>& value,
            std::string& why) {
    auto reply = put(c, key, value, why);
    if (!reply) return false;
    if (reply->status != kv::kOk) {
        why = fmt::format("{}: PUT key {} ({} bytes) answered {}", c.name, key, value.size(),
                          status_name(reply->status));
        return false;
    }
    return true;
}

// A successful GET's reply and room hold `expected`: its length, its checksum, its bytes.
bool room_holds(KvClient& c, std::uint32_t key, const kv::Reply& reply,
                const std::vector<std::uint8_t>& expected, std::string& why) {
    if (reply.length != expected.size() ||
        reply.checksum != exercise::checksum(expected.data(), expected.size())) {
        why = fmt::format(
            "{}: GET key {}: the reply says {} bytes, checksum {:#010x}; stored were "
            "{} bytes, checksum {:#010x}",
            c.name, key, reply.length, reply.checksum, expected.size(),
            exercise::checksum(expected.data(), expected.size()));
        return false;
    }
    for (std::size_t i = 0; i < expected.size(); ++i)
        if (c.room[i] != expected[i]) {
            why = fmt::format(
                "{}: GET key {}: byte {} of the room is {:#04x}, the value's is "
                "{:#04x} (was it written by RDMA WRITE before the reply?)",
                c.name, key, i, c.room[i], expected[i]);
            return false;
        }
    return true;
}

bool get_is(KvClient& c, std::uint32_t key, const std::vector<std::uint8_t>& expected,
            std::string& why) {
    auto reply = get(c, key, why);
    if (!reply) return false;
    if (reply->status != kv::kOk) {
        why = fmt::format("{}: GET key {} answered {}", c.name, key, status_name(reply->status));
        return false;
    }
    return room_holds(c, key, *reply, expected, why);
}

bool status_is(KvClient& c, const char* what, std::optional<kv::Reply> reply, std::uint32_t want,
               std::string& why) {
    if (!reply) return false;
    if (reply->status == want) return true;
    why = fmt::format("{}: {} answered {}, not {}", c.name, what, status_name(reply->status),
                      status_name(want));
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("exercise-kv-clients", [&] {
        CLI::App app{"The capstone's reference clients: judge a key-value server (kv.hpp)"};
        ConnectionOptions options;
        app.add_option("--address", options.server_address, "the server's address")->required();
        app.add_option("-p,--port", options.port, "its rdma_cm port")
            ->required()
            ->check(CLI::Range(1, 65535));
        app.add_option("--timeout", g_reply_wait_s, "seconds to wait for each reply")
            ->check(CLI::Range(0.5, 60.0));
        try {
            app.parse(argc, argv);
        } catch (const CLI::ParseError& e) {
            std::exit(app.exit(e));
        }
        options.timeout_s = 10;

        int failed = 0, cases = 0;
        std::string first_failure;
        // case_result NAME OK WHY: one line for the case.
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

        // The slow client connects first and says nothing until the others are done.
        auto slow = connect_client(options, "client C");
        auto a = connect_client(options, "client A");
        auto b = connect_client(options, "client B");
        const auto v1 = value_of(1, 200), v2 = value_of(2, 10), v3 = value_of(3, 256);

        bool ok = put_ok(*a, 1, v1, why) && get_is(*a, 1, v1, why) && put_ok(*a, 2, v2, why) &&
                  get_is(*a, 2, v2, why);
        case_result("basic", ok, ok ? "client A: PUT and GET of 200 and 10 bytes" : why);

        ok = get_is(*b, 1, v1, why) && put_ok(*b, 3, v3, why) && get_is(*a, 3, v3, why);
        case_result("shared", ok, ok ? "B read A's value; A read B's" : why);

        // Both requests in flight before either reply is awaited.
        const auto v4 = value_of(4, 128), v5 = value_of(5, 64);
        {
            std::vector<std::uint8_t> source_a = v4, source_b = v5;
            MemoryRegion mr_a{ibv_reg_mr(a->connection->pd(), source_a.data(), source_a.size(),
                                         IBV_ACCESS_REMOTE_READ)};
            MemoryRegion mr_b{ibv_reg_mr(b->connection->pd(), source_b.data(), source_b.size(),
                                         IBV_ACCESS_REMOTE_READ)};
            check_ptr(mr_a.get(), "ibv_reg_mr(value)");
            check_ptr(mr_b.get(), "ibv_reg_mr(value)");
            std::string why_a, why_b;
            auto send_put = [&](KvClient& c, std::vector<std::uint8_t>& s, ibv_mr& mr,
                                std::uint32_t key) {
                return send_request(c,
                                    {kv::kPut, key, static_cast<std::uint32_t>(s.size()),
                                     exercise::checksum(s.data(), s.size()),
                                     reinterpret_cast<std::uintptr_t>(s.data()), mr.rkey, 0},
                                    why);
            };
            const auto id_a = send_put(*a, source_a, *mr_a, 4);
            const auto id_b = id_a ? send_put(*b, source_b, *mr_b, 5) : std::nullopt;
            // The two replies, now: each PUT was in flight while the other's was.
            ok =
                id_b &&
                status_is(*a, "PUT key 4, B's in flight", take_reply(*a, *id_a, why), kv::kOk,
                          why) &&
                status_is(*b, "PUT key 5, A's in flight", take_reply(*b, *id_b, why), kv::kOk, why);
        }
        ok = ok && get_is(*b, 4, v4, why) && get_is(*a, 5, v5, why);
        case_result("concurrent", ok,
                    ok ? "A's and B's PUTs in flight together, both stored" : why);

        ok =
            status_is(*b, "PUT key 99", put(*b, 99, value_of(11, 50), why), kv::kBadRequest, why) &&
            status_is(*b, "GET key 99", get(*b, 99, why), kv::kBadRequest, why) &&
            status_is(*b, "PUT of 0 bytes", put(*b, 6, {}, why), kv::kBadRequest, why) &&
            status_is(*b, "PUT of 1000 bytes", put(*b, 6, value_of(6, 1000), why), kv::kBadRequest,
                      why) &&
            status_is(*b, "op 9", call(*b, {9, 1, 8, 0, 0, 0, 0}, why), kv::kBadRequest, why) &&
            status_is(*b, "GET key 12 (never stored)", get(*b, 12, why), kv::kNotFound, why) &&
            status_is(*b, "GET key 1 into a 10-byte room (the value has 200)", get(*b, 1, why, 10),
                      kv::kBadRequest, why) &&
            get_is(*b, 1, v1, why);
        case_result("bad-requests", ok,
                    ok ? "PUT and GET of key 99, 0 and 1000 bytes, op 9, a room too small: "
                         "each refused; key 12 not found; then served"
                       : why);

        ok = status_is(*a, "PUT key 1 with a wrong checksum",
                       put(*a, 1, value_of(7, 200), why, 0x12345678u), kv::kCorrupt, why) &&
             get_is(*a, 1, v1, why);
        case_result("corrupt-put", ok,
                    ok ? "refused as corrupt; key 1 still holds the value before it" : why);

        const auto idle_for = Clock::now() - slow->connected_at;
        if (idle_for < std::chrono::milliseconds(1500))
            std::this_thread::sleep_for(std::chrono::milliseconds(1500) - idle_for);
        const auto v8 = value_of(8, 100);
        ok = put_ok(*slow, 8, v8, why) && get_is(*slow, 8, v8, why) && get_is(*slow, 3, v3, why);
        case_result(
            "slow-client", ok,
            ok ? fmt::format(
                     "client C, idle {:.1f} s since it connected, served",
                     std::chrono::duration<double>(Clock::now() - slow->connected_at).count())
               : why);

        // Client D asks for a PUT, then its buffer and its connection vanish before the reply.
        {
            auto d = connect_client(options, "client D");
            const auto v9 = value_of(9, 256);
            std::vector<std::uint8_t> source = v9;
            MemoryRegion mr{ibv_reg_mr(d->connection->pd(), source.data(), source.size(),
                                       IBV_ACCESS_REMOTE_READ)};
            check_ptr(mr.get(), "ibv_reg_mr(value)");
            std::string ignored;
            send_request(*d,
                         {kv::kPut, 9, 256, exercise::checksum(v9.data(), v9.size()),
                          reinterpret_cast<std::uintptr_t>(source.data()), mr->rkey, 0},
                         ignored);
            mr.reset();  // deregistered: a READ that comes now is refused
            try {
                d->connection->disconnect();
            } catch (const std::exception&) {
                // The server may have dropped D first: gone either way.
            }
        }
        const auto v10 = value_of(10, 50);
        ok = put_ok(*a, 10, v10, why) && get_is(*b, 10, v10, why);
        if (ok) {
            // Key 9 holds D's value (its READ came in time) or nothing; never anything else.
            auto reply = get(*a, 9, why);
            const auto v9 = value_of(9, 256);
            ok = reply && (reply->status == kv::kNotFound ||
                           (reply->status == kv::kOk && room_holds(*a, 9, *reply, v9, why)));
            if (reply && !ok && why.empty())
                why = fmt::format("GET key 9 answered {}", status_name(reply->status));
        }
        case_result(
            "disconnect", ok,
            ok ? "client D's buffer and connection gone mid-PUT; A and B still served" : why);

        auto reply = call(*a, {kv::kShutdown, 0, 0, 0, 0, 0, 0}, why);
        ok = status_is(*a, "SHUTDOWN", reply, kv::kOk, why);
        if (ok) {
            const auto deadline = Clock::now() + std::chrono::seconds(5);
            for (KvClient* c : {a.get(), b.get(), slow.get()}) {
                while (!c->connection->peer_disconnected() && Clock::now() < deadline)
                    std::this_thread::sleep_for(std::chrono::milliseconds(10));
                if (!c->connection->peer_disconnected()) {
                    ok = false;
                    why = fmt::format("{} not disconnected by the server within 5 s of SHUTDOWN",
                                      c->name);
                    break;
                }
            }
        }
        case_result("shutdown", ok, ok ? "answered; A, B and C disconnected by the server" : why);

        if (failed == 0) {
            fmt::print("peer: verified: all {} cases held, 4 clients\n", cases);
            return 0;
        }
        fmt::print("peer: FAILED: {} of {} cases failed (the first: {})\n", failed, cases,
                   first_failure);
        return 1;
    });
}
