// Fuzzes parse_values, rdma-bench's knob values ("4,64", "32..8192", "64K"), which also come
// from sweep files. Input: min and max (8 bytes each, big-endian), then the text. Checks: the
// values or a non-empty reason; accepted values are not empty and all lie in [min, max]; a
// range gives powers of two, each the double of the one before.
#include "fuzz.hpp"
#include "rdmalab/bench/sweep.hpp"
#include "rdmalab/codec.hpp"

using namespace rdmalab;
using namespace rdmalab::bench;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 16) return 0;
    ByteReader in(fuzz::bytes(data, 16), "the bounds");
    const std::uint64_t min = in.u64();
    const std::uint64_t max = in.u64();
    const std::string text(fuzz::text(data + 16, size - 16));
    const auto answer = parse_values(text, min, max);
    if (!fuzz::holds_value(answer)) return 0;
    const auto& values = std::get<std::vector<std::uint64_t>>(answer);
    FUZZ_CHECK(!values.empty());
    for (std::uint64_t v : values) FUZZ_CHECK(v >= min && v <= max);
    if (text.find("..") != std::string::npos)
        for (std::size_t i = 0; i < values.size(); ++i)
            FUZZ_CHECK((values[i] & (values[i] - 1)) == 0 &&
                       (i == 0 || values[i] == 2 * values[i - 1]));
    return 0;
}
