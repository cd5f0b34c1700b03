// Exercise 14 — Close a server's exposure: a key per client.
// The slot server of the starter registered all it held — every client's slot and its own
// secret — as one region any client could READ and WRITE, with one rkey for everyone. Here each
// client gets a protection domain of its own and a region over its slot alone, WRITE only, which
// is deregistered when the client says END: a key leaked to another client, used past the slot,
// or kept after the session opens nothing. The secret is registered nowhere.
// Build and judge: ./rdmalab exercise check 14
#include "exercise.hpp"
#include "slots.hpp"

#include <fcntl.h>
#include <sys/random.h>

#include <array>
#include <memory>

constexpr double kIdleLimitS = 60;  // no event for this long: something is wrong

// What a work request was for, in the low byte of its wr_id; the client's slot above it.
enum Purpose : std::uint64_t { kRecv = 0, kReply = 1 };
std::uint64_t wr_id(std::uint32_t slot, std::uint64_t purpose) {
    return std::uint64_t{slot} << 8 | purpose;
}

// Everything the server holds, in one piece: its secret (the tokens it gives its operators),
// then a slot per client.
struct Memory {
    std::array<std::uint8_t, slots::kSecretBytes> secret{};
    std::array<std::array<std::uint8_t, slots::kSlotBytes>, slots::kSlots> slot{};
};

// One connected client: its rdma_cm id (and the QP on it) and its message buffers.
struct Client {
    rdma_cm_id* id = nullptr;
    ibv_pd* pd = nullptr;  // its own: no other client's QP can use a key of this one's
    std::array<std::uint8_t, slots::kMessageBytes> message{};  // the NIC writes here
    std::array<std::uint8_t, slots::kReplyBytes> reply{};
    ibv_mr* message_mr = nullptr;
    ibv_mr* reply_mr = nullptr;
    ibv_mr* slot_mr = nullptr;  // its slot, WRITE only; null once the client said END
    int posted = 0;             // work requests not yet completed: released only at 0
    bool leaving = false;       // disconnected (or failed): its work requests flush, then it goes
};

struct Server {
    rdma_event_channel* events = nullptr;
    rdma_cm_id* listener = nullptr;
    ibv_cq* cq = nullptr;  // shared: a CQ belongs to the device, not to a PD
    Memory memory;         // registered a slot at a time, never whole
    std::array<std::unique_ptr<Client>, slots::kSlots> clients;
    bool shutting_down = false;
};

void post_receive(Client& c, std::uint32_t slot) {
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(c.message.data()), slots::kMessageBytes,
                c.message_mr->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = wr_id(slot, kRecv);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    exercise::check(ibv_post_recv(c.id->qp, &wr, &bad), "ibv_post_recv");
    ++c.posted;
}

void send_reply(Client& c, std::uint32_t slot, const slots::Reply& reply) {
    slots::encode_reply(reply, c.reply.data());
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(c.reply.data()), slots::kReplyBytes,
                c.reply_mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = wr_id(slot, kReply);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    exercise::check(ibv_post_send(c.id->qp, &wr, &bad), "ibv_post_send");
    ++c.posted;
}

// A message, checked before it is trusted: it comes from the network.
void handle_message(Server& s, Client& c, std::uint32_t slot, const slots::Message& m) {
    slots::Reply reply{.status = slots::kBadRequest};
    if (m.op == slots::kCheck && m.length <= slots::kSlotBytes) {
        reply.checksum = exercise::checksum(s.memory.slot[slot].data(), m.length);
        reply.status = reply.checksum == m.checksum ? slots::kOk : slots::kMismatch;
    } else if (m.op == slots::kEnd) {
        // The session is over: its key must open nothing from now on (a rereg would keep it).
        if (c.slot_mr != nullptr) exercise::check(ibv_dereg_mr(c.slot_mr), "ibv_dereg_mr(slot)");
        c.slot_mr = nullptr;
        reply.status = slots::kOk;
    } else if (m.op == slots::kShutdown) {
        reply.status = slots::kOk;
        s.shutting_down = true;
    }
    send_reply(c, slot, reply);
}

// The QP to ERROR — what it still had posted comes back flushed — and the client told we are
// done (rdma_disconnect; it may be gone already: then nothing is sent).
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
    if (c.slot_mr != nullptr) ibv_dereg_mr(c.slot_mr);
    ibv_dereg_mr(c.reply_mr);
    ibv_dereg_mr(c.message_mr);
    ibv_dealloc_pd(c.pd);  // last: nothing of the client's is left in it
    rdma_destroy_id(c.id);
    s.clients[slot].reset();
}

void accept_client(Server& s, rdma_cm_id* id) {
    std::uint32_t slot = 0;
    while (slot < slots::kSlots && s.clients[slot]) ++slot;
    if (slot == slots::kSlots || s.shutting_down) {
        rdma_reject(id, nullptr, 0);
        rdma_destroy_id(id);
        return;
    }
    auto c = std::make_unique<Client>();
    c->id = id;
    c->pd = ibv_alloc_pd(id->verbs);
    if (c->pd == nullptr) exercise::fail("ibv_alloc_pd failed");
    ibv_qp_init_attr init{};
    init.send_cq = s.cq;
    init.recv_cq = s.cq;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = 2;
    init.cap.max_recv_wr = 1;  // one message at a time per client
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    if (rdma_create_qp(id, c->pd, &init) != 0) exercise::fail("rdma_create_qp failed");
    c->message_mr = ibv_reg_mr(c->pd, c->message.data(), c->message.size(), IBV_ACCESS_LOCAL_WRITE);
    c->reply_mr = ibv_reg_mr(c->pd, c->reply.data(), c->reply.size(), 0);
    s.memory.slot[slot].fill(0);  // a new client's slot starts empty
    // Its slot and nothing around it, for WRITE (which needs LOCAL_WRITE too) and not READ.
    c->slot_mr = ibv_reg_mr(c->pd, s.memory.slot[slot].data(), slots::kSlotBytes,
                            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (!c->message_mr || !c->reply_mr || !c->slot_mr) exercise::fail("ibv_reg_mr failed");
    s.clients[slot] = std::move(c);
    post_receive(*s.clients[slot], slot);  // before the accept: the client may SEND at once
    // The client's slot, with its own key: it is told where to WRITE.
    std::uint8_t advertisement[exercise::kRemoteBufferBytes];
    Client& client = *s.clients[slot];
    exercise::encode_remote_buffer({reinterpret_cast<std::uintptr_t>(s.memory.slot[slot].data()),
                                    client.slot_mr->rkey, slots::kSlotBytes},
                                   advertisement);
    rdma_conn_param param{};
    param.private_data = advertisement;
    param.private_data_len = sizeof advertisement;
    param.responder_resources = 1;  // harmless: no region of ours grants a READ
    param.rnr_retry_count = 6;
    if (rdma_accept(id, &param) != 0) exercise::fail("rdma_accept failed");
}

Client* client_of(Server& s, rdma_cm_id* id, std::uint32_t& slot) {
    for (slot = 0; slot < slots::kSlots; ++slot)
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
        Client& c = *s.clients[slot];
        --c.posted;
        if (wc.status != IBV_WC_SUCCESS || c.leaving) {
            leave(c);
            continue;
        }
        if ((wc.wr_id & 0xff) == kRecv) {
            if (wc.byte_len != slots::kMessageBytes) {
                leave(c);  // not a message of this protocol
                continue;
            }
            const slots::Message m = slots::decode_message(c.message.data());
            post_receive(c, slot);
            handle_message(s, c, slot, m);
        } else if (s.shutting_down) {
            for (auto& other : s.clients)  // SHUTDOWN answered: everyone goes
                if (other) leave(*other);
        }
    }
    for (std::uint32_t slot = 0; slot < slots::kSlots; ++slot)
        if (s.clients[slot] && s.clients[slot]->leaving && s.clients[slot]->posted == 0)
            release(s, slot);
    return n > 0;
}

int main(int argc, char** argv) {
    const auto args = exercise::parse_arguments(argc, argv);  // our address and port
    Server s;
    if (getrandom(s.memory.secret.data(), s.memory.secret.size(), 0) !=
        static_cast<ssize_t>(s.memory.secret.size()))
        exercise::fail("getrandom failed");
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
    // Bound to an address, the listener knows its device: one CQ; a PD per client as it comes.
    s.cq = ibv_create_cq(s.listener->verbs, slots::kSlots * 3, nullptr, nullptr, 0);
    if (s.cq == nullptr) exercise::fail("ibv_create_cq failed");
    std::printf("slots: listening on %s port %s\n", args.address, args.port);
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
    ibv_destroy_cq(s.cq);
    rdma_destroy_id(s.listener);
    rdma_destroy_event_channel(s.events);
    std::printf("slots: shut down; every client gone, everything released\n");
    return 0;
}
