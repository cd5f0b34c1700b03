// What every exercise program shares with the reference peer that judges it: the buffer the
// peer advertises, the data pattern, and a client connection over rdma_cm. Plain libibverbs and
// librdmacm, no project library: an exercise is a program the reader could lift out and keep.
// The connection steps are here so an exercise file holds only what it practises; the
// "Connecting" chapter and the cm-simple lesson teach them.
#pragma once

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <netdb.h>
#include <poll.h>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>

namespace exercise {

// One clear line on stderr and exit 1: what every failed call in an exercise does.
[[noreturn]] inline void fail(const std::string& what) {
    std::fprintf(stderr, "exercise: %s\n", what.c_str());
    std::exit(1);
}
// A verbs call that returns 0 or an errno value (ibv_post_send, ibv_modify_qp, ...).
inline void check(int rc, const char* call) {
    if (rc != 0) fail(std::string(call) + " failed: " + std::strerror(rc));
}

// The byte at offset i of every buffer an exercise moves: both sides compute it.
inline std::uint8_t pattern_byte(std::size_t i) {
    return static_cast<std::uint8_t>((i * 131 + 17) & 0xff);
}

// A 32-bit checksum (FNV-1a) of bytes: the read exercise reports what it read with it.
inline std::uint32_t checksum(const std::uint8_t* bytes, std::size_t size) {
    std::uint32_t hash = 2166136261u;
    for (std::size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 16777619u;
    return hash;
}

// The one buffer the peer advertises in the private data of its accept: address, rkey and
// length, 16 bytes, big-endian on the wire (a peer's byte order is not ours to assume).
struct RemoteBuffer {
    std::uint64_t address = 0;
    std::uint32_t rkey = 0;
    std::uint32_t length = 0;
};
constexpr std::size_t kRemoteBufferBytes = 16;

inline void encode_remote_buffer(const RemoteBuffer& buffer, std::uint8_t* out) {
    const std::uint32_t high = htonl(static_cast<std::uint32_t>(buffer.address >> 32));
    const std::uint32_t low = htonl(static_cast<std::uint32_t>(buffer.address));
    const std::uint32_t rkey = htonl(buffer.rkey);
    const std::uint32_t length = htonl(buffer.length);
    std::memcpy(out, &high, 4);
    std::memcpy(out + 4, &low, 4);
    std::memcpy(out + 8, &rkey, 4);
    std::memcpy(out + 12, &length, 4);
}

// Checked before use: a short or empty advertisement is refused, never read past its end.
inline RemoteBuffer decode_remote_buffer(const void* data, std::size_t size) {
    if (data == nullptr || size < kRemoteBufferBytes)
        fail("the peer's private data holds " + std::to_string(size) + " bytes, not the " +
             std::to_string(kRemoteBufferBytes) + " of a buffer advertisement");
    std::uint32_t words[4];
    std::memcpy(words, data, sizeof words);
    RemoteBuffer buffer;
    buffer.address = (std::uint64_t{ntohl(words[0])} << 32) | ntohl(words[1]);
    buffer.rkey = ntohl(words[2]);
    buffer.length = ntohl(words[3]);
    if (buffer.length == 0) fail("the peer advertised an empty buffer");
    return buffer;
}

// #region wait-for-completion
// Waits for one completion on cq, polling, for at most timeout_s seconds (in the lab a
// completion takes milliseconds: one that has not come in 5 s is not coming).
inline ibv_wc wait_for_completion(ibv_cq* cq, double timeout_s = 5) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    ibv_wc wc{};
    for (;;) {
        const int n = ibv_poll_cq(cq, 1, &wc);
        if (n < 0) fail("ibv_poll_cq failed");
        if (n == 1) return wc;
        if (std::chrono::steady_clock::now() > deadline)
            fail("no completion within " + std::to_string(static_cast<int>(timeout_s)) + " s");
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
}
// #endregion wait-for-completion

// #region connection
// A client's connection to the peer: rdma_cm id, protection domain, one CQ, one RC QP. Built
// in two steps, so that an exercise can act between them (post receives before connecting):
//   Connection c = prepare(address, port);   ...   connect(c);
// Released in reverse order of creation when it goes out of scope.
struct Connection {
    rdma_event_channel* events = nullptr;
    rdma_cm_id* id = nullptr;
    ibv_pd* pd = nullptr;
    ibv_cq* cq = nullptr;
    ibv_qp* qp = nullptr;
    RemoteBuffer peer_buffer;  // what the peer advertised (after connect)
    bool connected = false;
    // #endregion connection

    Connection() = default;
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;
    Connection(Connection&& other) noexcept { *this = std::move(other); }
    Connection& operator=(Connection&& other) noexcept {
        std::swap(events, other.events);
        std::swap(id, other.id);
        std::swap(pd, other.pd);
        std::swap(cq, other.cq);
        std::swap(qp, other.qp);
        std::swap(peer_buffer, other.peer_buffer);
        std::swap(connected, other.connected);
        return *this;
    }
    ~Connection() {
        if (connected) rdma_disconnect(id);
        if (qp != nullptr) rdma_destroy_qp(id);
        if (cq != nullptr) ibv_destroy_cq(cq);
        if (pd != nullptr) ibv_dealloc_pd(pd);
        if (id != nullptr) rdma_destroy_id(id);
        if (events != nullptr) rdma_destroy_event_channel(events);
    }
};

// The next rdma_cm event, which must be `expected`, within 10 s.
inline void expect_cm_event(rdma_event_channel* events, rdma_cm_event_type expected,
                            RemoteBuffer* advertised = nullptr) {
    pollfd waiting{.fd = events->fd, .events = POLLIN, .revents = 0};
    if (poll(&waiting, 1, 10000) != 1)
        fail(std::string("no rdma_cm event within 10 s (waiting for ") + rdma_event_str(expected) +
             ")");
    rdma_cm_event* event = nullptr;
    if (rdma_get_cm_event(events, &event) != 0) fail("rdma_get_cm_event failed");
    const rdma_cm_event_type got = event->event;
    const int status = event->status;
    if (got == expected && advertised != nullptr)
        *advertised = decode_remote_buffer(event->param.conn.private_data,
                                           event->param.conn.private_data_len);
    rdma_ack_cm_event(event);
    if (got != expected)
        fail(std::string("rdma_cm said ") + rdma_event_str(got) + " (status " +
             std::to_string(status) + "), expected " + rdma_event_str(expected));
}

// #region queue-sizes
// What prepare() builds the QP with.
struct QueueSizes {
    std::uint32_t send = 16;         // max_send_wr
    std::uint32_t recv = 16;         // max_recv_wr
    std::uint32_t completions = 32;  // the CQ's entries
    std::uint32_t send_sge = 1;      // max_send_sge: scatter/gather entries per send WR
    std::uint32_t inline_bytes = 0;  // max_inline_data: what IBV_SEND_INLINE may carry
};
// #endregion queue-sizes

// Resolves the peer's address and route, then creates the PD, a CQ and an RC QP of the sizes
// asked for. The QP is not connected yet.
inline Connection prepare(const char* address, const char* port, const QueueSizes& sizes = {}) {
    Connection c;
    c.events = rdma_create_event_channel();
    if (c.events == nullptr) fail("rdma_create_event_channel failed");
    if (rdma_create_id(c.events, &c.id, nullptr, RDMA_PS_TCP) != 0) fail("rdma_create_id failed");
    addrinfo* resolved = nullptr;
    addrinfo hints{};
    hints.ai_family = AF_INET;
    if (getaddrinfo(address, port, &hints, &resolved) != 0)
        fail(std::string("cannot resolve ") + address + ":" + port);
    const int rc = rdma_resolve_addr(c.id, nullptr, resolved->ai_addr, 5000);
    freeaddrinfo(resolved);
    if (rc != 0) fail("rdma_resolve_addr failed");
    expect_cm_event(c.events, RDMA_CM_EVENT_ADDR_RESOLVED);
    if (rdma_resolve_route(c.id, 5000) != 0) fail("rdma_resolve_route failed");
    expect_cm_event(c.events, RDMA_CM_EVENT_ROUTE_RESOLVED);

    c.pd = ibv_alloc_pd(c.id->verbs);
    if (c.pd == nullptr) fail("ibv_alloc_pd failed");
    c.cq = ibv_create_cq(c.id->verbs, static_cast<int>(sizes.completions), nullptr, nullptr, 0);
    if (c.cq == nullptr) fail("ibv_create_cq failed");
    ibv_qp_init_attr init{};
    init.send_cq = c.cq;
    init.recv_cq = c.cq;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = sizes.send;
    init.cap.max_recv_wr = sizes.recv;
    init.cap.max_send_sge = sizes.send_sge;
    init.cap.max_recv_sge = 1;
    init.cap.max_inline_data = sizes.inline_bytes;
    if (rdma_create_qp(c.id, c.pd, &init) != 0) fail("rdma_create_qp failed");
    c.qp = c.id->qp;
    return c;
}

// Whether the peer's accept carries a buffer advertisement (most exercises) or nothing.
enum class Advertisement { kBuffer, kNone };

// Connects the prepared QP (rdma_cm takes it through INIT, RTR and RTS) and keeps the buffer
// the peer advertised in its accept. One RDMA READ may be outstanding each way.
inline void connect(Connection& c, Advertisement advertisement = Advertisement::kBuffer) {
    rdma_conn_param param{};
    param.initiator_depth = 1;
    param.responder_resources = 1;
    param.retry_count = 7;
    param.rnr_retry_count = 6;  // 7 would retry forever: a missing receive would hang, not fail
    if (rdma_connect(c.id, &param) != 0) fail("rdma_connect failed");
    expect_cm_event(c.events, RDMA_CM_EVENT_ESTABLISHED,
                    advertisement == Advertisement::kBuffer ? &c.peer_buffer : nullptr);
    c.connected = true;
}

// Sends the peer one 4-byte word (big-endian) with a signaled SEND and waits for its completion:
// the "done" message most exercises end with. Registered with access 0 (the NIC only reads it)
// and released before returning.
inline void send_word(Connection& c, std::uint32_t value) {
    std::uint32_t word = htonl(value);
    ibv_mr* word_mr = ibv_reg_mr(c.pd, &word, sizeof word, 0);
    if (word_mr == nullptr) fail("ibv_reg_mr(word) failed");
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(&word), sizeof word, word_mr->lkey};
    ibv_send_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    check(ibv_post_send(c.qp, &wr, &bad), "ibv_post_send(word)");
    const ibv_wc wc = wait_for_completion(c.cq);
    ibv_dereg_mr(word_mr);
    if (wc.status != IBV_WC_SUCCESS)
        fail(std::string("the SEND of a word failed: ") + ibv_wc_status_str(wc.status));
}

// The program's arguments: the peer's address and port.
struct Arguments {
    const char* address;
    const char* port;
};
inline Arguments parse_arguments(int argc, char** argv) {
    if (argc != 3) fail(std::string("usage: ") + argv[0] + " PEER_ADDRESS PORT");
    return {argv[1], argv[2]};
}

}  // namespace exercise
