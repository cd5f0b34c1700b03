// Fuzzes decode_qp_endpoint: the endpoint record a peer sends over TCP before a hand-made QP
// connects (qp-state-machine, uc, error-recovery, rdma-bench's endpoints). For every QP type and
// both buffer expectations, checks: a record or a non-empty reason; an accepted record is 56
// bytes, re-encodes to the same bytes, has the expected type, a QPN in 2..0xffffff, a 24-bit
// PSN, an ibv_mtu, an IB or Ethernet link layer, a Q_Key only on UD and never a controlled one,
// and a buffer as expected (none: all zero; advertised: length > 0, no wrap-around);
// decode_qp_endpoint_or_throw agrees.
#include "rdmalab/qp_endpoint.hpp"
#include "fuzz.hpp"

#include <algorithm>
#include <limits>

using namespace rdmalab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto wire = fuzz::bytes(data, size);
    for (ibv_qp_type type : {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD})
        for (PeerBuffer expected : {PeerBuffer::kAdvertised, PeerBuffer::kNone}) {
            const auto answer = decode_qp_endpoint(wire, type, expected);
            const bool accepted =
                fuzz::accepts([&] { decode_qp_endpoint_or_throw(wire, type, expected); });
            FUZZ_CHECK(accepted == fuzz::holds_value(answer));
            if (!accepted) continue;
            const QpEndpoint peer = std::get<QpEndpoint>(answer);
            FUZZ_CHECK(wire.size() == kQpEndpointWireSize);
            FUZZ_CHECK(std::ranges::equal(encode_qp_endpoint(peer), wire));
            FUZZ_CHECK(peer.qp_type == type);
            FUZZ_CHECK(peer.qpn >= 2 && peer.qpn <= 0xffffff && peer.psn <= 0xffffff);
            FUZZ_CHECK(peer.active_mtu >= IBV_MTU_256 && peer.active_mtu <= IBV_MTU_4096);
            FUZZ_CHECK(peer.link_layer == IBV_LINK_LAYER_INFINIBAND ||
                       peer.link_layer == IBV_LINK_LAYER_ETHERNET);
            FUZZ_CHECK(type == IBV_QPT_UD ? peer.qkey < 0x80000000u : peer.qkey == 0);
            if (expected == PeerBuffer::kNone)
                FUZZ_CHECK(peer.address == 0 && peer.rkey == 0 && peer.length == 0);
            else
                FUZZ_CHECK(peer.length > 0 &&
                           peer.address <= std::numeric_limits<std::uint64_t>::max() - peer.length);
        }
    return 0;
}
