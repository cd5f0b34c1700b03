// rogue-peer: a misbehaving peer for the fault tests (tests/faults). It speaks just enough of
// the lessons' protocols (rdma_cm, the 24-byte buffer advertisement, 4-byte control words) and
// of rdma-bench's control channel to be accepted, then does what a well-behaved peer never does.
// It uses librdmacm and libibverbs directly, on purpose: it must not share the code it tests.
//
//   rogue-peer server MODE [-p PORT] [--hold S]   a fake lesson server (rdma-write/rdma-read
//   clients)
//     MODE: version   an advertisement with protocol version 9
//           truncated an advertisement cut after 10 bytes (the CM pads it with zeros)
//           rkey      a well-formed advertisement whose rkey belongs to a region it deregistered
//           length    a well-formed advertisement claiming 1 MiB over a 4 KiB region
//           silent    a valid advertisement, then nothing: no receive posted, no disconnect
//     After the client leaves it checks the 4 KiB behind its region (never registered) is still
//     zero: "rogue-peer: guard intact" (exit 0), or "rogue-peer: bytes written past the region"
//     (exit 3).
//   rogue-peer client ADDR MODE [-p PORT] [--hold S]   a fake lesson client (rdma-write server)
//     MODE: nothing   connect, then send nothing
//           truncated a 2-byte message where the 4-byte "done" word is expected
//           oversize  a "done" word claiming 2^31 bytes were written
//     It then waits (--hold, default 30 s) for the server to disconnect and says when it did.
//   rogue-peer bench-client ADDR MODE [-p PORT]   rdma-bench's TCP control channel
//     MODE: version   a hello with control protocol 99
//           truncated a length prefix of 100 bytes followed by 5, then the connection closed
//           silent    connect, send nothing, wait for the server to hang up (--hold)
// Exit codes: 0 it did its part, 1 setup failed (it says why), 2 usage, 3 memory past the region
// was written.
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void die(const std::string& why) {
    std::fprintf(stderr, "rogue-peer: %s\n", why.c_str());
    std::exit(1);
}

void say(const std::string& what) {
    std::printf("rogue-peer: %s\n", what.c_str());
    std::fflush(stdout);
}

// The next rdma_cm event within timeout_ms, acked; its type (-1 on timeout). Private data is
// not needed by anything here.
int next_event(rdma_event_channel* channel, int timeout_ms, rdma_cm_id** id = nullptr) {
    pollfd ready{.fd = channel->fd, .events = POLLIN, .revents = 0};
    if (poll(&ready, 1, timeout_ms) <= 0) return -1;
    rdma_cm_event* event = nullptr;
    if (rdma_get_cm_event(channel, &event) != 0) die("rdma_get_cm_event failed");
    int type = event->event;
    if (id) *id = event->id;
    rdma_ack_cm_event(event);
    return type;
}

void put32(unsigned char* p, std::uint32_t v) {
    v = htonl(v);
    std::memcpy(p, &v, 4);
}
void put64(unsigned char* p, std::uint64_t v) {
    put32(p, static_cast<std::uint32_t>(v >> 32));
    put32(p + 4, static_cast<std::uint32_t>(v));
}

sockaddr_in address_of(const char* text, int port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    if (text && inet_pton(AF_INET, text, &addr.sin_addr) != 1)
        die(std::string("not a numeric IPv4 address: ") + text);
    return addr;
}

struct Queues {
    ibv_pd* pd = nullptr;
    ibv_cq* cq = nullptr;
};

Queues make_queues(rdma_cm_id* id) {
    Queues q;
    q.pd = ibv_alloc_pd(id->verbs);
    if (!q.pd) die("ibv_alloc_pd failed");
    q.cq = ibv_create_cq(id->verbs, 8, nullptr, nullptr, 0);
    if (!q.cq) die("ibv_create_cq failed");
    ibv_qp_init_attr attr{};
    attr.send_cq = q.cq;
    attr.recv_cq = q.cq;
    attr.qp_type = IBV_QPT_RC;
    attr.cap = {.max_send_wr = 4,
                .max_recv_wr = 4,
                .max_send_sge = 1,
                .max_recv_sge = 1,
                .max_inline_data = 0};
    if (rdma_create_qp(id, q.pd, &attr) != 0) die("rdma_create_qp failed");
    return q;
}

void free_queues(rdma_cm_id* id, Queues& q) {
    rdma_destroy_qp(id);
    ibv_destroy_cq(q.cq);
    ibv_dealloc_pd(q.pd);
}

// Waits until the peer disconnects or hold_s pass; says which.
void hold(rdma_event_channel* channel, double hold_s) {
    const auto start = Clock::now();
    for (;;) {
        const double left = hold_s - std::chrono::duration<double>(Clock::now() - start).count();
        if (left <= 0) {
            say("the peer was still connected after the hold; leaving");
            return;
        }
        int type = next_event(channel, static_cast<int>(left * 1000) + 1);
        if (type == RDMA_CM_EVENT_DISCONNECTED) {
            say("the peer disconnected after " +
                std::to_string(std::chrono::duration<double>(Clock::now() - start).count()) + " s");
            return;
        }
    }
}

int run_server(const std::string& mode, int port, double hold_s) {
    rdma_event_channel* channel = rdma_create_event_channel();
    if (!channel) die("rdma_create_event_channel failed (no RDMA device?)");
    rdma_cm_id* listener = nullptr;
    if (rdma_create_id(channel, &listener, nullptr, RDMA_PS_TCP) != 0) die("rdma_create_id failed");
    sockaddr_in any = address_of(nullptr, port);
    if (rdma_bind_addr(listener, reinterpret_cast<sockaddr*>(&any)) != 0)
        die("rdma_bind_addr failed: " + std::string(std::strerror(errno)));
    if (rdma_listen(listener, 1) != 0) die("rdma_listen failed");
    say("listening on port " + std::to_string(port) + " as a " + mode + " server");
    std::printf("server: listening\n");  // what lab/pair.sh waits for
    std::fflush(stdout);

    rdma_cm_id* id = nullptr;
    if (next_event(channel, 30000, &id) != RDMA_CM_EVENT_CONNECT_REQUEST)
        die("no connection request within 30 s");
    Queues q = make_queues(id);

    // The region: 4 KiB registered, then 4 KiB of guard that no key covers.
    constexpr std::size_t kRegion = 4096;
    std::vector<unsigned char> memory(2 * kRegion, 0);
    const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    ibv_mr* mr = ibv_reg_mr(q.pd, memory.data(), kRegion, access);
    if (!mr) die("ibv_reg_mr failed");
    std::uint32_t rkey = mr->rkey;
    std::uint32_t length = kRegion;
    std::uint8_t version = 1;
    std::size_t size = 24;
    if (mode == "rkey") {
        // A key this server no longer owns: registered, noted, deregistered.
        ibv_mr* gone = ibv_reg_mr(q.pd, memory.data() + kRegion, kRegion, access);
        if (!gone) die("ibv_reg_mr failed");
        rkey = gone->rkey;
        ibv_dereg_mr(gone);
    } else if (mode == "length") {
        length = 1 << 20;
    } else if (mode == "version") {
        version = 9;
    } else if (mode == "truncated") {
        size = 10;
    } else if (mode != "silent") {
        die("unknown server mode '" + mode + "' (version, truncated, rkey, length, silent)");
    }
    // "RDLB" | version | use (1: write target; rdma-read clients are told 2) | 0 0 | address | rkey
    // | length
    unsigned char ad[24] = {};
    put32(ad, 0x52444c42);
    ad[4] = version;
    ad[5] = static_cast<unsigned char>(
        std::getenv("ROGUE_USE") ? std::atoi(std::getenv("ROGUE_USE")) : 1);
    put64(ad + 8, reinterpret_cast<std::uintptr_t>(memory.data()));
    put32(ad + 16, rkey);
    put32(ad + 20, length);
    rdma_conn_param param{};
    param.private_data = ad;
    param.private_data_len = static_cast<std::uint8_t>(size);
    param.responder_resources = 1;
    param.initiator_depth = 1;
    param.rnr_retry_count = 7;
    if (rdma_accept(id, &param) != 0) die("rdma_accept failed");
    say("advertised " + std::to_string(length) + " bytes, rkey " + std::to_string(rkey) +
        ", version " + std::to_string(version) + ", " + std::to_string(size) +
        " bytes of private data");
    // ESTABLISHED, or a REJECT/DISCONNECT if the client refused the advertisement first.
    int type = next_event(channel, 10000);
    if (type == RDMA_CM_EVENT_ESTABLISHED)
        hold(channel, hold_s);
    else
        say(std::string("the client did not establish: ") +
            (type < 0 ? "no event" : rdma_event_str(static_cast<rdma_cm_event_type>(type))));
    rdma_disconnect(id);

    bool intact = true;
    for (std::size_t i = kRegion; i < memory.size(); ++i) intact = intact && memory[i] == 0;
    ibv_dereg_mr(mr);
    free_queues(id, q);
    rdma_destroy_id(id);
    rdma_destroy_id(listener);
    rdma_destroy_event_channel(channel);
    if (!intact) {
        say("bytes written past the region");
        return 3;
    }
    say("guard intact: nothing was written past the 4096-byte region");
    return 0;
}

int run_client(const char* address, const std::string& mode, int port, double hold_s) {
    if (mode != "nothing" && mode != "truncated" && mode != "oversize")
        die("unknown client mode '" + mode + "' (nothing, truncated, oversize)");
    rdma_event_channel* channel = rdma_create_event_channel();
    if (!channel) die("rdma_create_event_channel failed (no RDMA device?)");
    rdma_cm_id* id = nullptr;
    if (rdma_create_id(channel, &id, nullptr, RDMA_PS_TCP) != 0) die("rdma_create_id failed");
    sockaddr_in server = address_of(address, port);
    if (rdma_resolve_addr(id, nullptr, reinterpret_cast<sockaddr*>(&server), 2000) != 0 ||
        next_event(channel, 5000) != RDMA_CM_EVENT_ADDR_RESOLVED)
        die("cannot resolve the server's address");
    if (rdma_resolve_route(id, 2000) != 0 ||
        next_event(channel, 5000) != RDMA_CM_EVENT_ROUTE_RESOLVED)
        die("cannot resolve a route to the server");
    Queues q = make_queues(id);
    rdma_conn_param param{};
    param.responder_resources = 1;
    param.initiator_depth = 1;
    param.retry_count = 7;
    param.rnr_retry_count = 7;
    if (rdma_connect(id, &param) != 0) die("rdma_connect failed");
    if (int type = next_event(channel, 10000); type != RDMA_CM_EVENT_ESTABLISHED)
        die(std::string("not connected: ") +
            (type < 0 ? "no event" : rdma_event_str(static_cast<rdma_cm_event_type>(type))));
    say("connected; now " + mode);

    unsigned char word[4] = {};
    ibv_mr* mr = ibv_reg_mr(q.pd, word, sizeof word, 0);
    if (!mr) die("ibv_reg_mr failed");
    if (mode != "nothing") {
        put32(word, mode == "oversize" ? 0x80000000u : 0);
        ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(word),
                    .length = mode == "truncated" ? 2u : 4u,
                    .lkey = mr->lkey};
        ibv_send_wr send{};
        send.sg_list = &sge;
        send.num_sge = 1;
        send.opcode = IBV_WR_SEND;
        send.send_flags = IBV_SEND_SIGNALED;
        ibv_send_wr* bad = nullptr;
        if (ibv_post_send(id->qp, &send, &bad) != 0) die("ibv_post_send failed");
        ibv_wc wc{};
        const auto deadline = Clock::now() + std::chrono::seconds(10);
        int found = 0;
        while ((found = ibv_poll_cq(q.cq, 1, &wc)) == 0 && Clock::now() < deadline) usleep(1000);
        say(found == 1 ? std::string("sent ") + std::to_string(sge.length) +
                             " bytes: " + ibv_wc_status_str(wc.status)
                       : std::string("the send did not complete within 10 s"));
    }
    hold(channel, hold_s);
    rdma_disconnect(id);
    ibv_dereg_mr(mr);
    free_queues(id, q);
    rdma_destroy_id(id);
    rdma_destroy_event_channel(channel);
    return 0;
}

int run_bench_client(const char* address, const std::string& mode, int port, double hold_s) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in server = address_of(address, port);
    bool connected = false;
    for (int i = 0; i < 50 && !connected; ++i) {  // the server may still be starting
        connected = connect(fd, reinterpret_cast<sockaddr*>(&server), sizeof server) == 0;
        if (!connected) {
            close(fd);
            fd = socket(AF_INET, SOCK_STREAM, 0);
            usleep(100000);
        }
    }
    if (!connected) die("cannot connect to the bench server's control port");
    std::string bytes;
    if (mode == "version") {
        std::string json = R"({"type":"hello","protocol":99,"tool":"rogue","device":"rxe0",)"
                           R"("provider":"rxe","host":"rogue","memory":"host","active_mtu":3})";
        unsigned char prefix[4];
        put32(prefix, static_cast<std::uint32_t>(json.size()));
        bytes.assign(reinterpret_cast<char*>(prefix), 4);
        bytes += json;
    } else if (mode == "truncated") {
        unsigned char prefix[4];
        put32(prefix, 100);
        bytes.assign(reinterpret_cast<char*>(prefix), 4);
        bytes += R"({"typ)";
    } else if (mode != "silent") {
        die("unknown bench-client mode '" + mode + "' (version, truncated, silent)");
    }
    if (!bytes.empty() &&
        write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size()))
        die("write failed");
    say("sent " + std::to_string(bytes.size()) + " bytes (" + mode + ")");
    if (mode == "truncated") {
        shutdown(fd, SHUT_WR);
    }
    // Wait for the server to hang up (read returns 0 or an error), at most hold_s.
    pollfd ready{.fd = fd, .events = POLLIN, .revents = 0};
    const auto start = Clock::now();
    char sink[256];
    for (;;) {
        const double left = hold_s - std::chrono::duration<double>(Clock::now() - start).count();
        if (left <= 0 || poll(&ready, 1, static_cast<int>(left * 1000) + 1) <= 0) {
            say("the server still had the connection open after the hold");
            break;
        }
        if (read(fd, sink, sizeof sink) <= 0) {
            say("the server closed the connection");
            break;
        }
    }
    close(fd);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    int port = 18515;
    double hold_s = 30;
    std::vector<std::string> positional;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if ((args[i] == "-p" || args[i] == "--hold") && i + 1 < args.size()) {
            (args[i] == "-p" ? port = std::atoi(args[i + 1].c_str())
                             : hold_s = std::atof(args[i + 1].c_str()));
            ++i;
        } else {
            positional.push_back(args[i]);
        }
    }
    const char* usage =
        "usage: rogue-peer server MODE | client ADDR MODE | bench-client ADDR MODE [-p PORT] "
        "[--hold S]";
    if (positional.size() == 2 && positional[0] == "server")
        return run_server(positional[1], port, hold_s);
    if (positional.size() == 3 && positional[0] == "client")
        return run_client(positional[1].c_str(), positional[2], port, hold_s);
    if (positional.size() == 3 && positional[0] == "bench-client")
        return run_bench_client(positional[1].c_str(), positional[2], port, hold_s);
    std::fprintf(stderr, "%s\n", usage);
    return 2;
}
