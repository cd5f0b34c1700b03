// Verified rounds, for the lessons that break an RC connection on purpose and recover it
// (error-recovery, link-failure): the client RDMA-WRITEs a seeded pattern into the server's
// target and SENDs its length; the server checks every byte and answers over TCP. A round that
// passes proves the QP moves data again after a failure.
#pragma once

#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/tcp_exchange.hpp"
#include "rdmalab/verbs.hpp"

#include <array>
#include <cstddef>
#include <cstdint>

namespace rdmalab {

// The server's side: the target the client may write (and nothing else), and the 4-byte "done"
// message that says how much it wrote.
class RoundTarget {
  public:
    RoundTarget(ibv_pd* pd, std::size_t size);
    // One receive for the next round's "done" SEND (post it before RTR: it may arrive at once).
    void post_done_receive(ibv_qp* qp);
    // This side's endpoint record, advertising the target's address, rkey and length.
    QpEndpoint advertise(const QpResources& resources) const;
    // The round's "done" SEND has completed as wc: checks it and the target (the pattern of
    // this round, zeros after it), answers the client over tcp, clears the target for the next
    // round. Returns the bytes verified; throws if they do not match.
    std::uint32_t check(const ibv_wc& wc, TcpExchange& tcp, int round);

  private:
    Buffer target_;
    MemoryRegion target_mr_;
    std::array<std::byte, 4> done_{};
    MemoryRegion done_mr_;
};

// The client's side: the source of the WRITEs, and the "done" message.
class RoundSource {
  public:
    RoundSource(ibv_pd* pd, std::size_t size);
    std::size_t size() const { return source_.size(); }
    void fill(int round);  // the seeded pattern the server will check
    // A signaled RDMA WRITE of the whole source to the server's target, with this rkey.
    void post_write(ibv_qp* qp, const QpEndpoint& server, std::uint64_t wr_id, std::uint32_t rkey);
    // A signaled 4-byte SEND carrying value (the length written, or 0).
    void post_done(ibv_qp* qp, std::uint64_t wr_id, std::uint32_t value);
    // The server's verdict over tcp: throws unless it verified the whole source.
    void expect_verified(TcpExchange& tcp, int round);

  private:
    Buffer source_;
    MemoryRegion source_mr_;
    std::array<std::byte, 4> done_{};
    MemoryRegion done_mr_;
};

}  // namespace rdmalab
