// Exercise 13 — The capstone: a key-value service over RC. A server, from an empty file.
// Clients connect with rdma_cm and SEND requests (kv.hpp); the server moves every value with
// one-sided operations — an RDMA READ from the client's buffer for PUT, an RDMA WRITE into it
// for GET — and answers each request with a SEND. Several clients at once, one request each in
// flight; a request is checked before it is trusted, a value before it is stored; a client may
// vanish at any moment; SHUTDOWN ends the service with everything released.
// Build and judge: ./rdmalab exercise check 13
#include "exercise.hpp"
#include "kv.hpp"

#include <fcntl.h>

#include <array>
#include <memory>
#include <vector>

constexpr std::uint32_t kReceives = 4;     // requests posted for per client: room to spare
constexpr std::uint32_t kMaxClients = 16;  // connections at once; more are rejected
constexpr double kIdleLimitS = 60;         // no event for this long: something is wrong

// What a work request was for, in the low byte of its wr_id; the client's slot above it.
enum Purpose : std::uint64_t { kRecv = 0, kRead = 8, kWrite = 9, kReply = 10 };
std::uint64_t wr_id(std::uint32_t slot, std::uint64_t purpose) {
    return std::uint64_t{slot} << 8 | purpose;
}

// The table: every value, registered once. The NIC only reads it (the source of a GET's WRITE),
// and no client ever touches it directly: access 0.
struct Table {
    std::array<std::uint8_t, kv::kKeys * kv::kValueBytes> bytes{};
    std::array<std::uint32_t, kv::kKeys> length{};  // 0: nothing stored
    ibv_mr* mr = nullptr;
};

// One connected client: its rdma_cm id (and the QP on it) and its own buffers.
struct Client {
    rdma_cm_id* id = nullptr;
    std::array<std::uint8_t, kReceives * kv::kRequestBytes> requests{};  // the NIC writes here
    std::array<std::uint8_t, kv::kValueBytes> staging{};  // a PUT's value lands here first
    std::array<std::uint8_t, kv::kReplyBytes> reply{};
    ibv_mr* requests_mr = nullptr;
    ibv_mr* staging_mr = nullptr;
    ibv_mr* reply_mr = nullptr;
    kv::Request put;       // the PUT whose READ is in flight
    int posted = 0;        // work requests not yet completed: released only at 0
    bool leaving = false;  // disconnected (or failed): its work requests flush, then it goes
};

struct Server {
    rdma_event_channel* events = nullptr;
    rdma_cm_id* listener = nullptr;
    ibv_pd* pd = nullptr;
    ibv_cq* cq = nullptr;
    Table table;
    std::array<std::unique_ptr<Client>, kMaxClients> clients;
    bool shutting_down = false;
};

void post_receive(Client& c, std::uint32_t slot, std::uint32_t index) {
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(&c.requests[index * kv::kRequestBytes]),
                kv::kRequestBytes, c.requests_mr->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = wr_id(slot, kRecv + index);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    exercise::check(ibv_post_recv(c.id->qp, &wr, &bad), "ibv_post_recv");
    ++c.posted;
}

// One work request on the client's send queue: a SEND of the reply, or a READ or WRITE of
// `length` bytes between `local` and the client's (address, rkey). Every one signaled: its
// completion tells when the buffer is free and keeps the count of what is in flight.
void post_send(Client& c, std::uint32_t slot, std::uint64_t purpose, ibv_wr_opcode opcode,
               void* local, std::uint32_t length, std::uint32_t lkey,
               const kv::Request* remote = nullptr) {
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(local), length, lkey};
    ibv_send_wr wr{};
    wr.wr_id = wr_id(slot, purpose);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = opcode;
    wr.send_flags = IBV_SEND_SIGNALED;
    if (remote != nullptr) {
        wr.wr.rdma.remote_addr = remote->address;
        wr.wr.rdma.rkey = remote->rkey;
    }
    ibv_send_wr* bad = nullptr;
    exercise::check(ibv_post_send(c.id->qp, &wr, &bad), "ibv_post_send");
    ++c.posted;
}

void send_reply(Client& c, std::uint32_t slot, const kv::Reply& reply) {
    kv::encode_reply(reply, c.reply.data());
    post_send(c, slot, kReply, IBV_WR_SEND, c.reply.data(), kv::kReplyBytes, c.reply_mr->lkey);
}

// A request, checked field by field before anything is done with it: it comes from the network.
void handle_request(Server& s, Client& c, std::uint32_t slot, const kv::Request& r) {
    kv::Reply reply{.id = r.id, .status = kv::kBadRequest};
    if (r.op == kv::kShutdown) {
        reply.status = kv::kOk;
        s.shutting_down = true;
    } else if ((r.op == kv::kPut || r.op == kv::kGet) && r.key < kv::kKeys && r.length > 0) {
        if (r.op == kv::kPut && r.length <= kv::kValueBytes) {
            c.put = r;  // the value is READ into staging; the reply waits for it
            post_send(c, slot, kRead, IBV_WR_RDMA_READ, c.staging.data(), r.length,
                      c.staging_mr->lkey, &r);
            return;
        }
        const std::uint32_t stored = s.table.length[r.key];
        if (r.op == kv::kGet && stored == 0) reply.status = kv::kNotFound;
        if (r.op == kv::kGet && stored > 0 && stored <= r.length) {
            // The WRITE first, then the reply on the same QP: RC places the WRITE's bytes
            // before it delivers the later SEND, so the client may read them on the reply.
            std::uint8_t* value = &s.table.bytes[r.key * kv::kValueBytes];
            post_send(c, slot, kWrite, IBV_WR_RDMA_WRITE, value, stored, s.table.mr->lkey, &r);
            reply = {r.id, kv::kOk, stored, exercise::checksum(value, stored)};
        }
    }
    send_reply(c, slot, reply);
}

// A PUT's value has arrived in staging: stored only if it matches the client's checksum.
void finish_put(Server& s, Client& c, std::uint32_t slot) {
    const kv::Request& r = c.put;
    kv::Reply reply{r.id, kv::kCorrupt, r.length, exercise::checksum(c.staging.data(), r.length)};
    if (reply.checksum == r.checksum) {
        std::memcpy(&s.table.bytes[r.key * kv::kValueBytes], c.staging.data(), r.length);
        s.table.length[r.key] = r.length;
        reply.status = kv::kOk;
    }
    send_reply(c, slot, reply);
}

// The QP to ERROR — what it still had posted comes back flushed — and the client told we are
// done (rdma_disconnect; it may be gone already, or never connected: then nothing is sent).
void leave(Client& c) {
    if (c.leaving) return;
    c.leaving = true;
    ibv_qp_attr error{};
    error.qp_state = IBV_QPS_ERR;
    ibv_modify_qp(c.id->qp, &error, IBV_QP_STATE);
    rdma_disconnect(c.id);
}

void release(Server& s, std::uint32_t slot) {
    Client& c = *s.clients[slot];
    rdma_destroy_qp(c.id);
    ibv_dereg_mr(c.reply_mr);
    ibv_dereg_mr(c.staging_mr);
    ibv_dereg_mr(c.requests_mr);
    rdma_destroy_id(c.id);
    s.clients[slot].reset();
}

void accept_client(Server& s, rdma_cm_id* id) {
    std::uint32_t slot = 0;
    while (slot < kMaxClients && s.clients[slot]) ++slot;
    if (slot == kMaxClients || s.shutting_down) {
        rdma_reject(id, nullptr, 0);
        rdma_destroy_id(id);
        return;
    }
    auto c = std::make_unique<Client>();
    c->id = id;
    ibv_qp_init_attr init{};
    init.send_cq = s.cq;
    init.recv_cq = s.cq;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = 4;  // at most a WRITE and a reply (or a READ, then its reply)
    init.cap.max_recv_wr = kReceives;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    if (rdma_create_qp(id, s.pd, &init) != 0) exercise::fail("rdma_create_qp failed");
    // Requests and a READ's value are written by our NIC; a reply it only reads.
    c->requests_mr =
        ibv_reg_mr(s.pd, c->requests.data(), c->requests.size(), IBV_ACCESS_LOCAL_WRITE);
    c->staging_mr = ibv_reg_mr(s.pd, c->staging.data(), c->staging.size(), IBV_ACCESS_LOCAL_WRITE);
    c->reply_mr = ibv_reg_mr(s.pd, c->reply.data(), c->reply.size(), 0);
    if (!c->requests_mr || !c->staging_mr || !c->reply_mr) exercise::fail("ibv_reg_mr failed");
    s.clients[slot] = std::move(c);
    // The receives before the accept: a client may SEND the moment it is connected.
    for (std::uint32_t i = 0; i < kReceives; ++i) post_receive(*s.clients[slot], slot, i);
    rdma_conn_param param{};
    param.initiator_depth = 1;  // we READ from the client (one at a time); it READs nothing
    param.rnr_retry_count = 6;
    if (rdma_accept(id, &param) != 0) exercise::fail("rdma_accept failed");
}

Client* client_of(Server& s, rdma_cm_id* id, std::uint32_t& slot) {
    for (slot = 0; slot < kMaxClients; ++slot)
        if (s.clients[slot] && s.clients[slot]->id == id) return s.clients[slot].get();
    return nullptr;
}

// Every rdma_cm event waiting (none: returns at once): new clients, and clients that left.
bool handle_cm_events(Server& s) {
    bool any = false;
    rdma_cm_event* event = nullptr;
    while (rdma_get_cm_event(s.events, &event) == 0) {
        any = true;
        const rdma_cm_event_type type = event->event;
        rdma_cm_id* id = event->id;
        rdma_ack_cm_event(event);
        std::uint32_t slot = 0;
        if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
            accept_client(s, id);
        } else if (type == RDMA_CM_EVENT_DISCONNECTED || type == RDMA_CM_EVENT_REJECTED ||
                   type == RDMA_CM_EVENT_CONNECT_ERROR || type == RDMA_CM_EVENT_UNREACHABLE) {
            if (Client* c = client_of(s, id, slot)) leave(*c);
        }
    }
    return any;
}

// Every completion waiting. A failed one (flushed, or the client gone) ends that client only.
bool handle_completions(Server& s) {
    std::array<ibv_wc, 16> wcs{};
    const int n = ibv_poll_cq(s.cq, static_cast<int>(wcs.size()), wcs.data());
    if (n < 0) exercise::fail("ibv_poll_cq failed");
    for (int i = 0; i < n; ++i) {
        const ibv_wc& wc = wcs[i];
        const auto slot = static_cast<std::uint32_t>(wc.wr_id >> 8);
        const std::uint64_t purpose = wc.wr_id & 0xff;
        Client& c = *s.clients[slot];
        --c.posted;
        if (wc.status != IBV_WC_SUCCESS || c.leaving) {
            leave(c);
            continue;
        }
        if (purpose < kReceives) {
            if (wc.byte_len != kv::kRequestBytes) {
                leave(c);  // not a request of this protocol
                continue;
            }
            const kv::Request r = kv::decode_request(&c.requests[purpose * kv::kRequestBytes]);
            post_receive(c, slot, static_cast<std::uint32_t>(purpose));
            handle_request(s, c, slot, r);
        } else if (purpose == kRead) {
            finish_put(s, c, slot);
        } else if (purpose == kReply && s.shutting_down) {
            for (auto& other : s.clients)  // SHUTDOWN answered: everyone goes
                if (other) leave(*other);
        }
    }
    for (std::uint32_t slot = 0; slot < kMaxClients; ++slot)
        if (s.clients[slot] && s.clients[slot]->leaving && s.clients[slot]->posted == 0)
            release(s, slot);
    return n > 0;
}

int main(int argc, char** argv) {
    const auto args = exercise::parse_arguments(argc, argv);  // our address and port
    Server s;
    s.events = rdma_create_event_channel();
    if (s.events == nullptr) exercise::fail("rdma_create_event_channel failed");
    // Non-blocking: the loop below waits on completions and connection events in turn.
    fcntl(s.events->fd, F_SETFL, fcntl(s.events->fd, F_GETFL) | O_NONBLOCK);
    if (rdma_create_id(s.events, &s.listener, nullptr, RDMA_PS_TCP) != 0)
        exercise::fail("rdma_create_id failed");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(std::atoi(args.port)));
    if (inet_pton(AF_INET, args.address, &address.sin_addr) != 1)
        exercise::fail(std::string("not an IPv4 address: ") + args.address);
    if (rdma_bind_addr(s.listener, reinterpret_cast<sockaddr*>(&address)) != 0)
        exercise::fail("rdma_bind_addr failed");
    if (rdma_listen(s.listener, 8) != 0) exercise::fail("rdma_listen failed");
    // Bound to an address, the listener knows its device: one PD and one CQ for every client.
    s.pd = ibv_alloc_pd(s.listener->verbs);
    if (s.pd == nullptr) exercise::fail("ibv_alloc_pd failed");
    s.cq = ibv_create_cq(s.listener->verbs, kMaxClients * (kReceives + 4), nullptr, nullptr, 0);
    if (s.cq == nullptr) exercise::fail("ibv_create_cq failed");
    s.table.mr = ibv_reg_mr(s.pd, s.table.bytes.data(), s.table.bytes.size(), 0);
    if (s.table.mr == nullptr) exercise::fail("ibv_reg_mr(table) failed");
    std::printf("kv: listening on %s port %s\n", args.address, args.port);
    std::fflush(stdout);

    auto last_event = std::chrono::steady_clock::now();
    for (;;) {
        const bool busy = handle_cm_events(s) | handle_completions(s);
        bool anyone = false;
        for (const auto& c : s.clients) anyone = anyone || c != nullptr;
        if (s.shutting_down && !anyone) break;
        const auto now = std::chrono::steady_clock::now();
        if (busy) last_event = now;
        if (now - last_event > std::chrono::duration<double>(kIdleLimitS))
            exercise::fail("nothing happened for 60 s");
        if (!busy) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    ibv_dereg_mr(s.table.mr);
    ibv_destroy_cq(s.cq);
    ibv_dealloc_pd(s.pd);
    rdma_destroy_id(s.listener);
    rdma_destroy_event_channel(s.events);
    std::printf("kv: shut down; every client gone, everything released\n");
    return 0;
}
