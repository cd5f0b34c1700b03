// hello-rdma: the smallest complete RDMA program, and the one to copy when you start your own.
// It uses only libibverbs, librdmacm and the C++ standard library — none of this project's
// common code — so everything a connection needs is in this one file, top to bottom.
//
// The client writes a greeting straight into the server's memory with one RDMA WRITE, then
// sends a 4-byte SEND to say "done"; the server's CPU takes no part in the WRITE and checks the
// bytes afterwards.
//
//   hello-rdma server [-p PORT] [--accept-timeout SECONDS]
//   hello-rdma client SERVER_ADDRESS [-p PORT]
//
// Build it on its own (Debian: apt-get install g++ libibverbs-dev librdmacm-dev):
//   g++ -std=c++20 -O2 -Wall -o hello-rdma hello-rdma.cpp -lrdmacm -libverbs
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace {

constexpr std::string_view kGreeting = "Hello from the client, placed by RDMA WRITE";
constexpr std::size_t kBufferSize = 64;  // the server's buffer: room for the greeting
constexpr int kWaitMs = 10'000;          // every wait (rdma_cm event, completion) ends by then

// #region checks
// Every call is checked; a failure becomes an exception naming the call and errno's text.
[[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error(what + (errno ? std::string(": ") + std::strerror(errno) : ""));
}
void check(int rc, const char* call) {
    if (rc > 0) errno = rc;  // ibv_post_* return the error; rdma_* return -1 and set errno
    if (rc != 0) fail(std::string(call) + " failed");
}
template <typename T>
T* check(T* object, const char* call) {
    if (object == nullptr) fail(std::string(call) + " failed");
    return object;
}
// #endregion checks

// #region owners
// One owner per object, so that every path out — an error included — releases everything, in
// the reverse order of creation (C++ destroys locals last-made-first).
template <auto release>
struct Releaser {
    template <typename T>
    void operator()(T* object) const {
        release(object);
    }
};
using EventChannel = std::unique_ptr<rdma_event_channel, Releaser<rdma_destroy_event_channel>>;
using CmId = std::unique_ptr<rdma_cm_id, Releaser<rdma_destroy_id>>;
using ProtectionDomain = std::unique_ptr<ibv_pd, Releaser<ibv_dealloc_pd>>;
using CompletionQueue = std::unique_ptr<ibv_cq, Releaser<ibv_destroy_cq>>;
using MemoryRegion = std::unique_ptr<ibv_mr, Releaser<ibv_dereg_mr>>;
struct QueuePair {  // rdma_create_qp puts the QP inside the cm_id; rdma_destroy_qp takes it out
    rdma_cm_id* id = nullptr;
    ~QueuePair() {
        if (id != nullptr) rdma_destroy_qp(id);
    }
};
// #endregion owners

// #region wait-for-event
// Waits for the next rdma_cm event, which must be `expected`. Returns the event's new cm_id (a
// connection request's) and copies the private data the peer sent with it into `data`.
rdma_cm_id* wait_for_event(rdma_event_channel* channel, rdma_cm_event_type expected,
                           std::string* data = nullptr) {
    pollfd ready{.fd = channel->fd, .events = POLLIN, .revents = 0};
    int found = poll(&ready, 1, kWaitMs);
    if (found < 0) fail("poll(rdma_cm events)");
    if (found == 0) {
        errno = 0;
        fail(std::string("no ") + rdma_event_str(expected) + " within 10 s");
    }
    rdma_cm_event* event = nullptr;
    check(rdma_get_cm_event(channel, &event), "rdma_get_cm_event");
    const rdma_cm_event_type type = event->event;
    rdma_cm_id* id = event->id;
    if (data != nullptr && event->param.conn.private_data != nullptr)
        data->assign(static_cast<const char*>(event->param.conn.private_data),
                     event->param.conn.private_data_len);
    rdma_ack_cm_event(event);  // every event is acknowledged, or rdma_destroy_id waits forever
    if (type != expected) {
        errno = 0;
        fail(std::string("expected ") + rdma_event_str(expected) + ", got " + rdma_event_str(type) +
             (type == RDMA_CM_EVENT_REJECTED ? " (is a server listening there?)" : ""));
    }
    return id;
}
// #endregion wait-for-event

// #region create-queues
// The queues every connection needs: a protection domain, a completion queue and an RC queue
// pair on the device rdma_cm chose for this connection (id->verbs).
struct Queues {
    ProtectionDomain pd;
    CompletionQueue cq;
    QueuePair qp;
};
void create_queues(rdma_cm_id* id, Queues& queues) {
    queues.pd.reset(check(ibv_alloc_pd(id->verbs), "ibv_alloc_pd"));
    queues.cq.reset(check(ibv_create_cq(id->verbs, 4, nullptr, nullptr, 0), "ibv_create_cq"));
    ibv_qp_init_attr attributes{};
    attributes.send_cq = queues.cq.get();
    attributes.recv_cq = queues.cq.get();
    attributes.qp_type = IBV_QPT_RC;  // reliable connected: the NIC acknowledges and retransmits
    attributes.cap.max_send_wr = 2;   // the WRITE and the SEND
    attributes.cap.max_recv_wr = 1;   // the done message
    attributes.cap.max_send_sge = 1;
    attributes.cap.max_recv_sge = 1;
    check(rdma_create_qp(id, queues.pd.get(), &attributes), "rdma_create_qp");
    queues.qp.id = id;
}
// #endregion create-queues

// #region wait-for-completion
// Busy-polls the CQ for one work completion, which must have succeeded with `expected`.
ibv_wc wait_for_completion(ibv_cq* cq, ibv_wc_opcode expected, const char* what) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
    ibv_wc completion{};
    int found = 0;
    while ((found = ibv_poll_cq(cq, 1, &completion)) == 0)
        if (std::chrono::steady_clock::now() > deadline) {
            errno = 0;
            fail(std::string(what) + ": no completion within 10 s");
        }
    if (found < 0) fail("ibv_poll_cq");
    errno = 0;
    if (completion.status != IBV_WC_SUCCESS)
        fail(std::string(what) + ": " + ibv_wc_status_str(completion.status));
    if (completion.opcode != expected) fail(std::string(what) + ": unexpected opcode");
    return completion;
}
// #endregion wait-for-completion

// #region describe
// The server tells the client where to write in rdma_accept's private data, as text
// ("ADDRESS RKEY LENGTH", hexadecimal, decimal): no byte order to agree on.
std::string describe(const ibv_mr* region) {
    char text[64];
    std::snprintf(text, sizeof text, "%llx %x %zu",
                  static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(region->addr)),
                  region->rkey, region->length);
    return text;
}
// #endregion describe

// #region parse-remote-buffer
struct RemoteBuffer {
    std::uint64_t address = 0;
    std::uint32_t rkey = 0;
    std::size_t length = 0;
};
RemoteBuffer parse_remote_buffer(const std::string& text) {  // from the peer: validate it all
    RemoteBuffer remote;
    const char* at = text.data();
    const char* end = text.data() + text.size();
    while (end > at && end[-1] == '\0') --end;  // rdma_cm may pad the private data with zeros
    auto field = [&](auto& value, int base) {
        auto [next, error] = std::from_chars(at, end, value, base);
        if (error != std::errc{}) {
            errno = 0;
            fail("the server's private data is not 'ADDRESS RKEY LENGTH'");
        }
        at = next < end && *next == ' ' ? next + 1 : next;
    };
    field(remote.address, 16);
    field(remote.rkey, 16);
    field(remote.length, 10);
    if (at != end) {
        errno = 0;
        fail("the server's private data has more than 'ADDRESS RKEY LENGTH'");
    }
    return remote;
}
// #endregion parse-remote-buffer

int run_server(const char* port, int accept_timeout_s) {
    // #region server-listen
    EventChannel channel{check(rdma_create_event_channel(), "rdma_create_event_channel")};
    rdma_cm_id* raw_id = nullptr;
    check(rdma_create_id(channel.get(), &raw_id, nullptr, RDMA_PS_TCP), "rdma_create_id");
    CmId listener{raw_id};
    sockaddr_in address{};  // any local address
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(std::stoi(port)));
    check(rdma_bind_addr(listener.get(), reinterpret_cast<sockaddr*>(&address)), "rdma_bind_addr");
    check(rdma_listen(listener.get(), 1), "rdma_listen");
    std::printf("server: listening on port %s\n", port);
    std::fflush(stdout);
    // #endregion server-listen

    // #region server-connect-request
    pollfd ready{.fd = channel->fd, .events = POLLIN, .revents = 0};
    if (poll(&ready, 1, accept_timeout_s * 1000) == 0) {
        errno = 0;
        fail("no client within " + std::to_string(accept_timeout_s) + " s");
    }
    CmId id{wait_for_event(channel.get(), RDMA_CM_EVENT_CONNECT_REQUEST)};
    // #endregion server-connect-request

    // #region server-register
    Queues queues;
    create_queues(id.get(), queues);
    // The buffer the client will write into: the NIC may write it for a remote peer, and
    // nothing more (no remote read, no atomics).
    char buffer[kBufferSize] = {};
    MemoryRegion buffer_mr{check(ibv_reg_mr(queues.pd.get(), buffer, sizeof buffer,
                                            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE),
                                 "ibv_reg_mr(buffer)")};
    // The client's "done" message: 4 bytes, the length it wrote. Only the local NIC writes it.
    char done[4] = {};
    MemoryRegion done_mr{
        check(ibv_reg_mr(queues.pd.get(), done, sizeof done, IBV_ACCESS_LOCAL_WRITE),
              "ibv_reg_mr(done)")};
    // A receive is posted before accepting: a SEND that finds none is refused (RNR).
    ibv_sge done_sge{.addr = reinterpret_cast<std::uintptr_t>(done),
                     .length = sizeof done,
                     .lkey = done_mr->lkey};
    ibv_recv_wr receive{.wr_id = 1, .next = nullptr, .sg_list = &done_sge, .num_sge = 1};
    ibv_recv_wr* bad_receive = nullptr;
    check(ibv_post_recv(id->qp, &receive, &bad_receive), "ibv_post_recv");
    // #endregion server-register

    // #region server-accept
    const std::string where = describe(buffer_mr.get());
    rdma_conn_param accept{};
    accept.private_data = where.c_str();
    accept.private_data_len = static_cast<std::uint8_t>(where.size() + 1);
    check(rdma_accept(id.get(), &accept), "rdma_accept");
    wait_for_event(channel.get(), RDMA_CM_EVENT_ESTABLISHED);
    std::printf("server: connected; told the client my buffer: %s (address rkey length)\n",
                where.c_str());
    // #endregion server-accept

    // #region server-check
    const ibv_wc completion = wait_for_completion(queues.cq.get(), IBV_WC_RECV, "the done message");
    std::uint32_t written = 0;
    errno = 0;
    if (completion.byte_len != sizeof done ||
        std::from_chars(done, done + sizeof done, written).ec != std::errc{} || written == 0 ||
        written > sizeof buffer)
        fail("the client's done message is not a length from 1 to 64");
    const std::string_view arrived(buffer, written);
    if (arrived != kGreeting) fail("the buffer does not hold the greeting");
    std::printf("server: found \"%.*s\" (%u bytes) in my buffer; my CPU did not take part\n",
                static_cast<int>(arrived.size()), arrived.data(), written);
    // #endregion server-check

    // #region server-disconnect
    wait_for_event(channel.get(), RDMA_CM_EVENT_DISCONNECTED);
    std::printf("server: verified the greeting; the client disconnected\n");
    // #endregion server-disconnect
    return 0;
}

int run_client(const char* server, const char* port) {
    // #region client-resolve
    EventChannel channel{check(rdma_create_event_channel(), "rdma_create_event_channel")};
    rdma_cm_id* raw_id = nullptr;
    check(rdma_create_id(channel.get(), &raw_id, nullptr, RDMA_PS_TCP), "rdma_create_id");
    CmId id{raw_id};

    addrinfo hints{};
    hints.ai_flags = AI_NUMERICHOST;  // an address (main checked it), no name lookups
    hints.ai_family = AF_INET;
    addrinfo* found = nullptr;
    if (getaddrinfo(server, port, &hints, &found) != 0) {
        errno = 0;
        fail(std::string("'") + server + "' is not an IPv4 address");
    }
    std::unique_ptr<addrinfo, Releaser<freeaddrinfo>> address{found};
    // Which local device and port reach that address (the ARP/route lookup), then the path.
    check(rdma_resolve_addr(id.get(), nullptr, address->ai_addr, kWaitMs), "rdma_resolve_addr");
    wait_for_event(channel.get(), RDMA_CM_EVENT_ADDR_RESOLVED);
    check(rdma_resolve_route(id.get(), kWaitMs), "rdma_resolve_route");
    wait_for_event(channel.get(), RDMA_CM_EVENT_ROUTE_RESOLVED);
    // #endregion client-resolve

    // #region client-register
    Queues queues;
    create_queues(id.get(), queues);
    // The greeting, and the done message: the NIC only reads them (access flags 0).
    char greeting[kBufferSize] = {};
    kGreeting.copy(greeting, kGreeting.size());
    MemoryRegion greeting_mr{
        check(ibv_reg_mr(queues.pd.get(), greeting, sizeof greeting, 0), "ibv_reg_mr(greeting)")};
    char done[4] = {};
    std::snprintf(done, sizeof done, "%zu", kGreeting.size());  // "43": digits, no terminator
    MemoryRegion done_mr{
        check(ibv_reg_mr(queues.pd.get(), done, sizeof done, 0), "ibv_reg_mr(done)")};
    // #endregion client-register

    // #region client-connect
    rdma_conn_param connect{};
    connect.retry_count = 7;  // resend an unacknowledged packet up to 7 times (0: never)
    check(rdma_connect(id.get(), &connect), "rdma_connect");
    // #endregion client-connect

    // #region client-established
    std::string where;
    wait_for_event(channel.get(), RDMA_CM_EVENT_ESTABLISHED, &where);
    const RemoteBuffer remote = parse_remote_buffer(where);
    std::printf("client: connected; the server's buffer: address 0x%llx, rkey 0x%x, %zu bytes\n",
                static_cast<unsigned long long>(remote.address), remote.rkey, remote.length);
    errno = 0;
    if (remote.length < kGreeting.size()) fail("the server's buffer is too small for the greeting");
    // #endregion client-established

    // One RDMA WRITE: local bytes (address, length, lkey) to remote memory (address, rkey).
    // #region client-write
    ibv_sge greeting_sge{.addr = reinterpret_cast<std::uintptr_t>(greeting),
                         .length = static_cast<std::uint32_t>(kGreeting.size()),
                         .lkey = greeting_mr->lkey};
    ibv_send_wr write{};
    write.wr_id = 1;
    write.sg_list = &greeting_sge;
    write.num_sge = 1;
    write.opcode = IBV_WR_RDMA_WRITE;
    write.send_flags = IBV_SEND_SIGNALED;  // ask for a completion
    write.wr.rdma.remote_addr = remote.address;
    write.wr.rdma.rkey = remote.rkey;
    ibv_send_wr* bad = nullptr;
    check(ibv_post_send(id->qp, &write, &bad), "ibv_post_send(RDMA WRITE)");
    wait_for_completion(queues.cq.get(), IBV_WC_RDMA_WRITE, "the RDMA WRITE");
    std::printf("client: wrote %zu bytes into the server's memory\n", kGreeting.size());
    // #endregion client-write

    // #region client-send
    // A SEND tells the server the WRITE is there: on RC, it arrives after the WRITE's bytes.
    ibv_sge done_sge{.addr = reinterpret_cast<std::uintptr_t>(done),
                     .length = sizeof done,
                     .lkey = done_mr->lkey};
    ibv_send_wr send{};
    send.wr_id = 2;
    send.sg_list = &done_sge;
    send.num_sge = 1;
    send.opcode = IBV_WR_SEND;
    send.send_flags = IBV_SEND_SIGNALED;
    check(ibv_post_send(id->qp, &send, &bad), "ibv_post_send(SEND)");
    wait_for_completion(queues.cq.get(), IBV_WC_SEND, "the done message");
    std::printf("client: sent the done message; disconnecting\n");
    // #endregion client-send

    // #region client-disconnect
    check(rdma_disconnect(id.get()), "rdma_disconnect");
    wait_for_event(channel.get(), RDMA_CM_EVENT_DISCONNECTED);
    // #endregion client-disconnect
    return 0;
}

constexpr const char* kUsage =
    "usage: hello-rdma server [-p PORT] [--accept-timeout SECONDS]\n"
    "       hello-rdma client SERVER_ADDRESS [-p PORT]\n";
int usage(const std::string& problem) {
    std::fprintf(stderr, "hello-rdma: %s (run with --help for usage)\n", problem.c_str());
    return 2;
}

// A whole decimal number from low to high.
bool is_number_in(const char* text, int low, int high) {
    int value = 0;
    const char* end = text + std::strlen(text);
    auto [next, error] = std::from_chars(text, end, value);
    return error == std::errc{} && next == end && value >= low && value <= high;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string_view role = argc > 1 ? argv[1] : "";
    if (role == "-h" || role == "--help") {
        std::printf("hello-rdma: one RDMA WRITE into the server's memory, verified there\n%s",
                    kUsage);
        return 0;
    }
    if (role != "server" && role != "client")
        return usage("the first argument is server or client");
    int next = 2;
    const char* server = nullptr;
    if (role == "client") {
        if (argc <= 2 || argv[2][0] == '-') return usage("the client needs the server's address");
        server = argv[next++];
        in_addr parsed{};
        if (inet_pton(AF_INET, server, &parsed) != 1)
            return usage(std::string("'") + server + "' is not an IPv4 address");
    }
    const char* port = "18515";
    int accept_timeout_s = 60;
    for (; next < argc; next += 2) {
        const std::string_view option = argv[next];
        if (next + 1 >= argc) return usage(std::string(option) + " needs a value");
        const char* value = argv[next + 1];
        if (option == "-p" || option == "--port") {
            if (!is_number_in(value, 1, 65535))
                return usage("the port is a number from 1 to 65535");
            port = value;
        } else if (option == "--accept-timeout" && role == "server") {
            if (!is_number_in(value, 1, 3600)) return usage("--accept-timeout: 1 to 3600 seconds");
            accept_timeout_s = std::atoi(value);
        } else {
            return usage("unknown option " + std::string(option));
        }
    }
    try {
        return role == "server" ? run_server(port, accept_timeout_s) : run_client(server, port);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "hello-rdma: %s\n", error.what());
        return 1;
    }
}
