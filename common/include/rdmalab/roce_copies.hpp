// Copies of the RoCE v2 packets one QP receives, as a NIC's notification point sees them. Verbs
// never show a packet's IP header (rxe checks it and drops it in the kernel), so this reads the
// host's packets a second time from an AF_PACKET socket, filtered in the kernel to the QP's and
// cut after their headers. Needs CAP_NET_RAW, as tcpdump does. On one host rxe loops packets for
// its own address inside the kernel: no copy of them exists.
#pragma once

#include "rdmalab/roce_header.hpp"

#include <cstdint>
#include <optional>

namespace rdmalab {

class RoceCopies {
  public:
    // The socket, its filter (only RoCE v2 packets for qp) and its receive buffer.
    explicit RoceCopies(std::uint32_t qp);
    RoceCopies(const RoceCopies&) = delete;
    RoceCopies& operator=(const RoceCopies&) = delete;

    int fd() const { return socket_.fd; }  // readable when a copy waits (poll it)
    // The next copy's headers; nullopt when none waits (never blocks). Our own outgoing packets
    // and anything that is not a whole RoCE v2 header for the QP are passed over.
    std::optional<RoceHeaders> next();
    // Copies the kernel dropped for want of room in the socket's buffer, since the last call.
    std::uint64_t dropped();

  private:
    // The socket, closed with its owner — also when the constructor throws after opening it.
    struct Socket {
        int fd = -1;
        Socket() = default;
        Socket(const Socket&) = delete;
        Socket& operator=(const Socket&) = delete;
        ~Socket();
    };
    std::uint32_t qp_;
    Socket socket_;
};

}  // namespace rdmalab
