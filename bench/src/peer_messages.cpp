// What rdma-bench reads from its peer, checked before use; see peer_messages.hpp.
#include "rdmalab/bench/peer_messages.hpp"

#include "rdmalab/bench/control.hpp"
#include "rdmalab/bench/engine.hpp"
#include "rdmalab/error.hpp"

#include <fmt/core.h>

namespace rdmalab::bench {

ibv_mtu peer_mtu(const Record& peer_hello) {
    if (field<std::uint32_t>(peer_hello, "protocol") != kProtocolVersion)
        fail(fmt::format(
            "the peer speaks control protocol {}, this {} speaks {}: use the same version on both "
            "sides",
            field<std::uint32_t>(peer_hello, "protocol"), kToolVersion, kProtocolVersion));
    auto mtu = field<std::uint32_t>(peer_hello, "active_mtu");
    if (mtu < IBV_MTU_256 || mtu > IBV_MTU_4096)
        fail(fmt::format("the peer sent an invalid MTU code {}", mtu));
    return static_cast<ibv_mtu>(mtu);
}

std::vector<QpEndpoint> decode_endpoints(const Record& message, const BenchConfig& config) {
    std::vector<QpEndpoint> endpoints;
    for (const std::string& hex : field<std::vector<std::string>>(message, "endpoints"))
        endpoints.push_back(decode_qp_endpoint_or_throw(from_hex(hex), qp_type_of(config.transport),
                                                        PeerBuffer::kAdvertised));
    return endpoints;
}

std::uint8_t peer_depth(const Record& message) {
    auto depth = field<std::uint32_t>(message, "responder_depth");
    if (depth > 255)
        fail(fmt::format("the peer claims {} outstanding READs per QP (at most 255)", depth));
    return static_cast<std::uint8_t>(depth);
}

// How one side's buffer was had and registered, as the records keep it.
records::BenchMemorySide memory_record(const gpu::MemorySpec& spec, const std::string& path,
                                       const std::string& where, const std::string& copies) {
    return records::BenchMemorySide{.memory = gpu::to_string(spec),
                                    .path = path,
                                    .where = where,
                                    .staging_copies = copies,
                                    .copies_in_timed_loop = 0};
}

records::BenchMemorySide peer_memory(const Record& message, const gpu::MemorySpec& spec) {
    auto path = field<std::string>(message, "memory_path");
    bool known = false;
    for (gpu::Path p :
         {gpu::Path::kHost, gpu::Path::kDmaBuf, gpu::Path::kPeerMemory, gpu::Path::kStaging})
        known = known || path == gpu::path_name(p);
    if (!known)
        fail(fmt::format("the peer reports an unknown memory path '{}'", path.substr(0, 40)));
    auto where = field<std::string>(message, "memory_where");
    if (where.size() > 200) fail("the peer's memory description is longer than 200 characters");
    auto copies = field<std::string>(message, "memory_copies");
    if (copies != "none" && copies != "per phase" && copies != "per message")
        fail(fmt::format("the peer reports unknown staging copies '{}'", copies.substr(0, 40)));
    return memory_record(spec, path, where, copies);
}

}  // namespace rdmalab::bench
