// Copies of one QP's RoCE v2 packets from an AF_PACKET socket: see roce_copies.hpp.
#include "rdmalab/roce_copies.hpp"

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"

#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstddef>

namespace rdmalab {

namespace {

// What is copied of each packet: the IPv4 header (options included), UDP and the BTH fit.
constexpr std::uint32_t kHeaderCopyBytes = 96;

}  // namespace

RoceCopies::RoceCopies(std::uint32_t qp) : qp_(qp) {
    // #region packet-socket
    // Every IPv4 packet the host receives, from the IP header on (SOCK_DGRAM: no Ethernet header).
    socket_.fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, to_be16(ETH_P_IP));
    check_errno(socket_.fd >= 0, "socket(AF_PACKET, SOCK_DGRAM, ETH_P_IP)");
    // A classic BPF program the kernel runs on each packet before copying it: only RoCE v2
    // packets for our QP, and only their headers (tcpdump's filters are the same machinery).
    // Offsets are from the IP header; X holds its length; a jump's false branch skips to the
    // last instruction, which drops.
    std::array<sock_filter, 10> program{{
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 9),                   // 0: the IP protocol
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 0, 7),  // 1:   UDP, or drop
        BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 0),                  // 2: X = 4 · IHL
        BPF_STMT(BPF_LD | BPF_H | BPF_IND, 2),                   // 3: UDP destination port
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kRoceV2Port, 0, 4),  // 4:   4791, or drop
        BPF_STMT(BPF_LD | BPF_W | BPF_IND, 8 + 4),               // 5: BTH word 2 (resv8, dest QP)
        BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xffffff),           // 6:   the 24-bit QP number
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, qp, 0, 1),           // 7:   ours, or drop
        BPF_STMT(BPF_RET | BPF_K, kHeaderCopyBytes),             // 8: keep its headers
        BPF_STMT(BPF_RET | BPF_K, 0),                            // 9: drop
    }};
    sock_fprog filter{.len = program.size(), .filter = program.data()};
    check_errno(setsockopt(socket_.fd, SOL_SOCKET, SO_ATTACH_FILTER, &filter, sizeof filter) == 0,
                "setsockopt(SO_ATTACH_FILTER)");
    // #endregion packet-socket
    // Room for a burst of copies (capped at net.core.rmem_max); what still overflows is counted.
    const int buffer_bytes = 4 << 20;
    check_errno(
        setsockopt(socket_.fd, SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof buffer_bytes) == 0,
        "setsockopt(SO_RCVBUF)");
}

RoceCopies::Socket::~Socket() {
    if (fd >= 0) close(fd);
}

std::optional<RoceHeaders> RoceCopies::next() {
    std::array<std::byte, kHeaderCopyBytes> copy{};
    while (true) {
        sockaddr_ll from{};
        socklen_t from_size = sizeof from;
        const ssize_t got = recvfrom(socket_.fd, copy.data(), copy.size(), MSG_DONTWAIT,
                                     reinterpret_cast<sockaddr*>(&from), &from_size);
        if (got < 0) {
            check_errno(errno == EAGAIN || errno == EWOULDBLOCK, "recvfrom(packet socket)");
            return std::nullopt;
        }
        if (from.sll_pkttype == PACKET_OUTGOING) continue;  // our own ACKs and CNPs
        // From the network: the parser checks every length before it reads. A packet that came
        // in before the filter was attached may be anyone's: the QP is checked again.
        auto headers = parse_roce_v2_ipv4(std::span(copy).first(static_cast<std::size_t>(got)));
        if (headers && headers->destination_qp == qp_) return headers;
    }
}

std::uint64_t RoceCopies::dropped() {
    tpacket_stats statistics{};
    socklen_t size = sizeof statistics;
    check_errno(getsockopt(socket_.fd, SOL_PACKET, PACKET_STATISTICS, &statistics, &size) == 0,
                "getsockopt(PACKET_STATISTICS)");
    return statistics.tp_drops;
}

}  // namespace rdmalab
