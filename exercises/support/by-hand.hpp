// For the exercises that work without rdma_cm (exercises 7 and 8): the record both sides swap
// over TCP, and everything up to the first ibv_modify_qp. For RC what comes after — INIT, RTR,
// RTS — is exercise 7; for UD (exercise 8) bring_up_ud takes those steps.
#pragma once

#include "exercise.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

namespace exercise {

// Each side sends the other a 40-byte record over TCP, big-endian: QPN (4), first PSN (4), the
// RoCE v2 GID its QP sends from (16), and a buffer advertisement (16, zero when none).
struct Endpoint {
    std::uint32_t qpn = 0;
    std::uint32_t psn = 0;
    ibv_gid gid{};
    RemoteBuffer buffer;
};
constexpr std::size_t kEndpointBytes = 40;

inline void encode_endpoint(const Endpoint& endpoint, std::uint8_t* out) {
    const std::uint32_t qpn = htonl(endpoint.qpn);
    const std::uint32_t psn = htonl(endpoint.psn);
    std::memcpy(out, &qpn, 4);
    std::memcpy(out + 4, &psn, 4);
    std::memcpy(out + 8, endpoint.gid.raw, 16);
    if (endpoint.buffer.length == 0)
        std::memset(out + 24, 0, kRemoteBufferBytes);
    else
        encode_remote_buffer(endpoint.buffer, out + 24);
}
// Checked before use: QPN and PSN are 24-bit numbers.
inline Endpoint decode_endpoint(const std::uint8_t* in, bool with_buffer) {
    Endpoint endpoint;
    std::uint32_t words[2];
    std::memcpy(words, in, 8);
    endpoint.qpn = ntohl(words[0]);
    endpoint.psn = ntohl(words[1]);
    if (endpoint.qpn > 0xffffff || endpoint.psn > 0xffffff)
        fail("the peer's record holds a QPN or PSN wider than 24 bits");
    std::memcpy(endpoint.gid.raw, in + 8, 16);
    if (with_buffer) endpoint.buffer = decode_remote_buffer(in + 24, kRemoteBufferBytes);
    return endpoint;
}

// Sends or receives exactly size bytes on a TCP socket, within 10 s.
inline void send_exact(int fd, const void* bytes, std::size_t size) {
    const auto* p = static_cast<const std::uint8_t*>(bytes);
    while (size > 0) {
        const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
        if (n <= 0) fail("the TCP connection to the peer broke while sending");
        p += n;
        size -= static_cast<std::size_t>(n);
    }
}
inline void receive_exact(int fd, void* bytes, std::size_t size) {
    auto* p = static_cast<std::uint8_t*>(bytes);
    while (size > 0) {
        pollfd waiting{.fd = fd, .events = POLLIN, .revents = 0};
        if (poll(&waiting, 1, 10000) != 1) fail("the peer sent nothing over TCP for 10 s");
        const ssize_t n = ::recv(fd, p, size, 0);
        if (n <= 0) fail("the peer closed the TCP connection early");
        p += n;
        size -= static_cast<std::size_t>(n);
    }
}

// What a hand-made connection starts from: the device's first port, its RoCE v2 GID that carries
// an IPv4 address, a PD, one CQ and an RC QP still in RESET, and the peer's record.
struct ManualConnection {
    ibv_context* context = nullptr;
    ibv_pd* pd = nullptr;
    ibv_cq* cq = nullptr;
    ibv_qp* qp = nullptr;
    int tcp = -1;
    std::uint8_t port = 1;
    int gid_index = -1;  // the source GID index (ibv_ah_attr.grh.sgid_index)
    ibv_mtu active_mtu = IBV_MTU_1024;
    Endpoint local;   // what we sent the peer: our QPN, first PSN and GID
    Endpoint remote;  // what the peer sent: its QPN, first PSN, GID and buffer

    ManualConnection() = default;
    ManualConnection(const ManualConnection&) = delete;
    ManualConnection& operator=(const ManualConnection&) = delete;
    ~ManualConnection() {
        if (tcp >= 0) close(tcp);
        if (qp != nullptr) ibv_destroy_qp(qp);
        if (cq != nullptr) ibv_destroy_cq(cq);
        if (pd != nullptr) ibv_dealloc_pd(pd);
        if (context != nullptr) ibv_close_device(context);
    }
};

// The Q_Key both sides' UD QPs accept (exercise 8): a datagram must carry it to be delivered.
constexpr std::uint32_t kQkey = 0x11111111;

// Opens the first RDMA device, creates PD, CQ and a QP of `type` (RESET), connects to the peer
// over TCP (retrying for 5 s while it starts) and swaps records with it. Nothing is connected.
inline void open_by_hand(ManualConnection& c, const char* address, const char* port,
                         ibv_qp_type type = IBV_QPT_RC) {
    int devices = 0;
    ibv_device** list = ibv_get_device_list(&devices);
    if (list == nullptr || devices == 0) fail("no RDMA device");
    c.context = ibv_open_device(list[0]);
    ibv_free_device_list(list);
    if (c.context == nullptr) fail("ibv_open_device failed");
    ibv_port_attr port_attr{};
    check(ibv_query_port(c.context, c.port, &port_attr), "ibv_query_port");
    c.active_mtu = port_attr.active_mtu;
    for (int i = 0; i < port_attr.gid_tbl_len && c.gid_index < 0; ++i) {
        ibv_gid_entry entry{};
        if (ibv_query_gid_ex(c.context, c.port, static_cast<std::uint32_t>(i), &entry, 0) != 0)
            continue;
        const bool ipv4_mapped =
            std::all_of(entry.gid.raw, entry.gid.raw + 10, [](std::uint8_t b) { return b == 0; }) &&
            entry.gid.raw[10] == 0xff && entry.gid.raw[11] == 0xff;
        if (entry.gid_type == IBV_GID_TYPE_ROCE_V2 && ipv4_mapped) {
            c.gid_index = i;
            c.local.gid = entry.gid;
        }
    }
    if (c.gid_index < 0) fail("the device has no RoCE v2 GID with an IPv4 address");
    c.pd = ibv_alloc_pd(c.context);
    if (c.pd == nullptr) fail("ibv_alloc_pd failed");
    c.cq = ibv_create_cq(c.context, 16, nullptr, nullptr, 0);
    if (c.cq == nullptr) fail("ibv_create_cq failed");
    ibv_qp_init_attr init{};
    init.send_cq = c.cq;
    init.recv_cq = c.cq;
    init.qp_type = type;
    init.cap.max_send_wr = 8;
    init.cap.max_recv_wr = 8;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    c.qp = ibv_create_qp(c.pd, &init);
    if (c.qp == nullptr) fail("ibv_create_qp failed");
    c.local.qpn = c.qp->qp_num;
    c.local.psn =
        static_cast<std::uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count()) &
        0xffffff;

    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* resolved = nullptr;
    if (getaddrinfo(address, port, &hints, &resolved) != 0)
        fail(std::string("cannot resolve ") + address + ":" + port);
    for (int attempt = 0; attempt < 50 && c.tcp < 0; ++attempt) {
        const int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd >= 0 && ::connect(fd, resolved->ai_addr, resolved->ai_addrlen) == 0) {
            c.tcp = fd;
            break;
        }
        if (fd >= 0) close(fd);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    freeaddrinfo(resolved);
    if (c.tcp < 0) fail(std::string("cannot reach the peer over TCP at ") + address + ":" + port);
    std::uint8_t record[kEndpointBytes];
    encode_endpoint(c.local, record);
    send_exact(c.tcp, record, sizeof record);
    receive_exact(c.tcp, record, sizeof record);
    c.remote = decode_endpoint(record, type == IBV_QPT_RC);
}

// A UD QP from RESET to RTS: INIT names the port, P_Key index and the Q_Key it accepts; RTR needs
// nothing more (a UD QP has no peer: each send names its own); RTS its first PSN.
inline void bring_up_ud(ManualConnection& c) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = c.port;
    attr.qkey = kQkey;
    check(ibv_modify_qp(c.qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY),
          "ibv_modify_qp(INIT)");
    attr = {};
    attr.qp_state = IBV_QPS_RTR;
    check(ibv_modify_qp(c.qp, &attr, IBV_QP_STATE), "ibv_modify_qp(RTR)");
    attr = {};
    attr.qp_state = IBV_QPS_RTS;
    attr.sq_psn = c.local.psn;
    check(ibv_modify_qp(c.qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN), "ibv_modify_qp(RTS)");
}

// Tells the peer over TCP what this side found: 'V' (verified) or 'X'.
inline void send_verdict(ManualConnection& c, bool verified) {
    const std::uint8_t verdict = verified ? 'V' : 'X';
    send_exact(c.tcp, &verdict, 1);
}

// Waits for the peer's one-byte "ready": its QP is in RTR or later, so ours may send to it.
inline void wait_until_peer_ready(ManualConnection& c) {
    std::uint8_t ready = 0;
    receive_exact(c.tcp, &ready, 1);
    if (ready != 'R') fail("the peer did not say ready");
}

}  // namespace exercise
