// One signaled SEND of registered bytes: see signaled_send.hpp.
#include "rdmalab/signaled_send.hpp"

#include "rdmalab/error.hpp"
#include "rdmalab/trace.hpp"

#include <fmt/core.h>

namespace rdmalab {

void post_signaled_send(ibv_qp* qp, std::span<const std::byte> bytes, std::uint32_t lkey,
                        std::uint64_t wr_id, std::string_view what) {
    ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(bytes.data()),
                .length = static_cast<std::uint32_t>(bytes.size()),
                .lkey = lkey};
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    trace::post_send(qp, &wr);  // --trace records the WR (else: nothing)
    check_ibv(ibv_post_send(qp, &wr, &bad), fmt::format("ibv_post_send({})", what));
}

}  // namespace rdmalab
