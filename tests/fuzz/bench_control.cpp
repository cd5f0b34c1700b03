// Fuzzes rdma-bench's control channel as a message arrives: a 4-byte big-endian length, then
// JSON text (here: the rest of the input). decode_control_length and decode_control_message,
// then what the client and server read from a message: every field type through field<T>, the
// endpoints (hex, then decode_qp_endpoint, as decode_endpoints does), the configuration, and
// the message printed as expect() does when the type is wrong, and peer_messages.hpp's checks.
// Checks: only rdmalab::Error refuses; a length is 1..kMaxControlMessage; a message is a JSON
// object without "error"; a field read as an integer is exactly the integer the peer sent; from_hex
// round-trips.
#include "fuzz.hpp"
#include "rdmalab/bench/config.hpp"
#include "rdmalab/bench/control.hpp"
#include "rdmalab/bench/engine.hpp"
#include "rdmalab/bench/peer_messages.hpp"
#include "rdmalab/qp_bringup.hpp"

using namespace rdmalab;
using namespace rdmalab::bench;

namespace {

template <typename T>
void integer_field(const Record& message, const char* name) {
    T value{};
    if (fuzz::accepts([&] { value = field<T>(message, name); }))
        FUZZ_CHECK(message.at(name).is_number_integer() && message.at(name) == value);
}

template <typename T>
void other_field(const Record& message, const char* name) {
    fuzz::accepts([&] { field<T>(message, name); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 4) return 0;
    std::uint32_t length = 0;
    if (fuzz::accepts([&] { length = decode_control_length(fuzz::bytes(data, 4)); }))
        FUZZ_CHECK(length >= 1 && length <= kMaxControlMessage);
    Record message;
    if (!fuzz::accepts([&] { message = decode_control_message(fuzz::text(data + 4, size - 4)); }))
        return 0;
    FUZZ_CHECK(message.is_object() && !message.contains("error"));
    FUZZ_CHECK(!message.dump().empty());

    for (const char* name : {"count", "messages", "bytes", "counter", "staging_copies"})
        integer_field<std::uint64_t>(message, name);
    for (const char* name : {"protocol", "active_mtu", "responder_depth"})
        integer_field<std::uint32_t>(message, name);
    for (const char* name : {"cpu_s", "elapsed_s", "seconds", "duration_s"})
        other_field<double>(message, name);
    other_field<bool>(message, "warmup");
    for (const char* name : {"type", "memory", "memory_path", "memory_where", "host"})
        other_field<std::string>(message, name);
    std::vector<std::uint64_t> per_qp;
    if (fuzz::accepts([&] { per_qp = field<std::vector<std::uint64_t>>(message, "per_qp"); }))
        for (std::size_t i = 0; i < per_qp.size(); ++i)
            FUZZ_CHECK(message["per_qp"][i].is_number_integer() &&
                       message["per_qp"][i] == per_qp[i]);

    std::vector<std::string> endpoints;
    if (fuzz::accepts([&] { endpoints = field<std::vector<std::string>>(message, "endpoints"); }))
        for (const std::string& hex : endpoints) {
            std::vector<std::byte> wire;
            if (!fuzz::accepts([&] { wire = from_hex(hex); })) continue;
            FUZZ_CHECK(to_hex(wire) == hex);
        }
    fuzz::accepts([&] { BenchConfig::from_json(field<Record>(message, "config")); });

    // What the client and server take from a peer's message (peer_messages.hpp), as they call it.
    ibv_mtu mtu{};
    if (fuzz::accepts([&] { mtu = peer_mtu(message); }))
        FUZZ_CHECK(mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 &&
                   message["protocol"] == kProtocolVersion);
    std::uint8_t depth = 0;
    if (fuzz::accepts([&] { depth = peer_depth(message); }))
        FUZZ_CHECK(message["responder_depth"] == depth);
    for (Transport transport : {Transport::kRC, Transport::kUC, Transport::kUD}) {
        BenchConfig config;
        config.transport = transport;
        std::vector<QpEndpoint> decoded;
        if (!fuzz::accepts([&] { decoded = decode_endpoints(message, config); })) continue;
        FUZZ_CHECK(decoded.size() == message["endpoints"].size());
        for (std::size_t i = 0; i < decoded.size(); ++i)
            FUZZ_CHECK(
                decoded[i].qp_type == qp_type_of(transport) &&
                to_hex(encode_qp_endpoint(decoded[i])) ==
                    message["endpoints"][i].get<std::string>().substr(0, 2 * kQpEndpointWireSize));
    }
    records::BenchMemorySide memory;
    if (fuzz::accepts([&] { memory = peer_memory(message, gpu::MemorySpec{}); })) {
        const std::string& copies = memory.staging_copies;
        FUZZ_CHECK(copies == "none" || copies == "per phase" || copies == "per message");
        FUZZ_CHECK(memory.where.size() <= 200);
    }
    return 0;
}
