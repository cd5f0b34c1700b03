// Data verification helpers: see pattern.hpp.
#include "rdmalab/pattern.hpp"

#include <algorithm>

namespace rdmalab {

std::byte pattern_byte(std::uint64_t seed, std::size_t index) {
    // A 64-bit mix of (seed, index): neighbouring bytes differ, and so do neighbouring seeds.
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + index;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return static_cast<std::byte>(x >> 56);
}

void fill_pattern(std::span<std::byte> buffer, std::uint64_t seed) {
    for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = pattern_byte(seed, i);
}

std::optional<std::size_t> find_pattern_mismatch(std::span<const std::byte> buffer,
                                                 std::uint64_t seed) {
    for (std::size_t i = 0; i < buffer.size(); ++i)
        if (buffer[i] != pattern_byte(seed, i)) return i;
    return std::nullopt;
}

bool all_zero(std::span<const std::byte> buffer) {
    return std::all_of(buffer.begin(), buffer.end(), [](std::byte b) { return b == std::byte{0}; });
}

std::size_t message_length(std::size_t index, std::size_t max_size) {
    switch (index % 4) {
        case 0:
            return max_size;
        case 1:
            return std::max<std::size_t>(1, max_size / 3);
        case 2:
            return 1;
        default:
            return std::max<std::size_t>(1, max_size - 1);
    }
}

}  // namespace rdmalab
