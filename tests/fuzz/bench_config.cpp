// Fuzzes BenchConfig::from_json: the configuration an rdma-bench client sends its server (JSON
// text here, parsed with parse_json as the control channel does). Checks: only rdmalab::Error
// refuses; an accepted configuration passes problem(), survives to_json → from_json unchanged, and
// holds exactly the numbers the peer sent (nothing truncated, rounded or wrapped) and the named op,
// transport and mode.
#include "fuzz.hpp"
#include "rdmalab/bench/config.hpp"

using namespace rdmalab;
using namespace rdmalab::bench;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Record json;  // parsed as decode_control_message parses the message that carries it
    if (!fuzz::accepts([&] { json = parse_json(fuzz::text(data, size), "the config"); })) return 0;
    BenchConfig config;
    if (!fuzz::accepts([&] { config = BenchConfig::from_json(json); })) return 0;
    FUZZ_CHECK(!config.problem());
    const Record out = config.to_json();
    FUZZ_CHECK(BenchConfig::from_json(out).to_json() == out);
    for (const auto& [key, value] : out.items()) {
        if (!value.is_number()) continue;
        // Compared as the JSON numbers they are: 5000000000 is not 705032704, nor 1.5 1.
        FUZZ_CHECK(json.at(key) == value);
    }
    for (const char* key : {"srq", "shared_cq", "events"}) FUZZ_CHECK(json.at(key) == out.at(key));
    FUZZ_CHECK(parse_op(json.at("op").get<std::string>()) == config.op);
    FUZZ_CHECK(parse_transport(json.at("transport").get<std::string>()) == config.transport);
    FUZZ_CHECK(parse_mode(json.at("mode").get<std::string>()) == config.mode);
    FUZZ_CHECK(!describe(config).empty());
    return 0;
}
