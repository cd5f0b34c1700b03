// Big-endian (network byte order) fields in wire records, independent of the host's order.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rdmalab {

template <typename T>
void store_be(std::uint8_t* out, T value) {
    for (std::size_t i = 0; i < sizeof(T); ++i)
        out[i] = static_cast<std::uint8_t>(value >> (8 * (sizeof(T) - 1 - i)));
}

template <typename T>
T load_be(const std::uint8_t* in) {
    T value = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) value = static_cast<T>((value << 8) | in[i]);
    return value;
}

}  // namespace rdmalab
