// Verified rounds: see verified_rounds.hpp.
#include "rdmalab/verified_rounds.hpp"

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/signaled_send.hpp"
#include "rdmalab/trace.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace rdmalab {

RoundTarget::RoundTarget(ibv_pd* pd, std::size_t size) : target_(size) {
    // The peer may write the target (REMOTE_WRITE needs LOCAL_WRITE), not read it.
    target_mr_.reset(check_ptr(ibv_reg_mr(pd, target_.data(), target_.size(),
                                          IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE),
                               "ibv_reg_mr(target)"));
    done_mr_.reset(check_ptr(ibv_reg_mr(pd, done_.data(), done_.size(), IBV_ACCESS_LOCAL_WRITE),
                             "ibv_reg_mr(done)"));
}

void RoundTarget::post_done_receive(ibv_qp* qp) {
    ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(done_.data()),
                .length = static_cast<std::uint32_t>(done_.size()),
                .lkey = done_mr_->lkey};
    ibv_recv_wr receive{.wr_id = 1, .next = nullptr, .sg_list = &sge, .num_sge = 1};
    ibv_recv_wr* bad = nullptr;
    trace::post_recv(qp, &receive);  // --trace records the WR (else: nothing)
    check_ibv(ibv_post_recv(qp, &receive, &bad), "ibv_post_recv");
}

QpEndpoint RoundTarget::advertise(const QpResources& resources) const {
    return local_endpoint(resources, reinterpret_cast<std::uintptr_t>(target_.data()),
                          target_mr_->rkey, static_cast<std::uint32_t>(target_.size()));
}

std::uint32_t RoundTarget::check(const ibv_wc& wc, TcpExchange& tcp, int round) {
    if (wc.opcode != IBV_WC_RECV || wc.byte_len != done_.size())
        fail(fmt::format("expected a {}-byte done message, got opcode {} with {} bytes",
                         done_.size(), static_cast<int>(wc.opcode), wc.byte_len));
    const std::uint32_t written = load_be32(done_);
    if (written == 0 || written > target_.size())
        fail(fmt::format("the client claims it wrote {} bytes into a {}-byte buffer", written,
                         target_.size()));
    const bool verified = !find_pattern_mismatch(target_.bytes().first(written), round) &&
                          all_zero(target_.bytes().subspan(written));
    // Zeroed after each round, so no later round can pass on stale data.
    std::fill(target_.bytes().begin(), target_.bytes().end(), std::byte{0});
    send_word(tcp, verified ? written : 0);
    if (!verified)
        fail(
            fmt::format("round {}: the {} bytes written do not match the pattern", round, written));
    return written;
}

RoundSource::RoundSource(ibv_pd* pd, std::size_t size) : source_(size) {
    // Read by our own NIC only: access 0.
    source_mr_.reset(
        check_ptr(ibv_reg_mr(pd, source_.data(), source_.size(), 0), "ibv_reg_mr(source)"));
    done_mr_.reset(check_ptr(ibv_reg_mr(pd, done_.data(), done_.size(), 0), "ibv_reg_mr(done)"));
}

void RoundSource::fill(int round) {
    fill_pattern(source_.bytes(), round);
}

void RoundSource::post_write(ibv_qp* qp, const QpEndpoint& server, std::uint64_t wr_id,
                             std::uint32_t rkey) {
    ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(source_.data()),
                .length = static_cast<std::uint32_t>(source_.size()),
                .lkey = source_mr_->lkey};
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = server.address;
    wr.wr.rdma.rkey = rkey;
    ibv_send_wr* bad = nullptr;
    trace::post_send(qp, &wr);  // --trace records the WR (else: nothing)
    check_ibv(ibv_post_send(qp, &wr, &bad), "ibv_post_send(RDMA_WRITE)");
}

void RoundSource::post_done(ibv_qp* qp, std::uint64_t wr_id, std::uint32_t value) {
    store_be32(done_, value);
    post_signaled_send(qp, done_, done_mr_->lkey, wr_id, "SEND");
}

void RoundSource::expect_verified(TcpExchange& tcp, int round) {
    const std::uint32_t verified = receive_word(tcp);
    if (verified != source_.size())
        fail(fmt::format("round {}: the server could not verify the data ({} of {} bytes)", round,
                         verified, source_.size()));
}

}  // namespace rdmalab
