// Verifying moved data: the sender fills a buffer with a pattern both sides can compute, and
// the receiver checks every byte, so a transfer that did not happen (or landed wrong) is seen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace rdmalab {

// Byte i of the pattern for seed: pseudo-random, so a shifted, stale or partial copy fails.
std::byte pattern_byte(std::uint64_t seed, std::size_t index);

void fill_pattern(std::span<std::byte> buffer, std::uint64_t seed);

// The index of the first byte that differs from the pattern, or nullopt if all match.
std::optional<std::size_t> find_pattern_mismatch(std::span<const std::byte> buffer,
                                                 std::uint64_t seed);

// True if every byte is zero (the part of a buffer that nobody should have written).
bool all_zero(std::span<const std::byte> buffer);

// Length of message `index` in the send-recv lesson: cycles through max, about a third of max,
// 1 and max-1 bytes, so message boundaries are visible in every receive.
std::size_t message_length(std::size_t index, std::size_t max_size);

}  // namespace rdmalab
