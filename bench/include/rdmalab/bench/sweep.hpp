// rdma-bench knob values: a single value, a list ("4,64") or a power-of-two range
// ("32..8192"), and the cross product of several knobs, run in one connection.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace rdmalab::bench {

// Either the values, in the order given, or why the text was refused. Sizes accept the
// K/M/G suffixes of parse_size; every value must lie in [min, max].
std::variant<std::vector<std::uint64_t>, std::string> parse_values(const std::string& text,
                                                                   std::uint64_t min,
                                                                   std::uint64_t max);

// One point of a sweep: knob name → value.
using Point = std::map<std::string, std::uint64_t>;

// All combinations, the first knob varying slowest (so a table reads naturally).
std::vector<Point> cross_product(
    const std::vector<std::pair<std::string, std::vector<std::uint64_t>>>& knobs);

}  // namespace rdmalab::bench
