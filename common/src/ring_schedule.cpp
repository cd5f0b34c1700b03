// The arithmetic of a ring allreduce (see ring_schedule.hpp).
#include "rdmalab/ring_schedule.hpp"

#include <algorithm>

namespace rdmalab {

Chunk chunk_of(std::size_t elements, int ranks, int chunk) {
    const std::size_t base = elements / ranks, extra = elements % ranks;
    const auto c = static_cast<std::size_t>(chunk);
    return {c * base + std::min(c, extra), base + (c < extra ? 1 : 0)};
}

int ring_modulo(int a, int n) {
    return ((a % n) + n) % n;
}

int RingSchedule::sent_chunk(std::size_t step) const {
    const int s = static_cast<int>(step);
    return reduces(step) ? ring_modulo(rank - s, ranks)
                         : ring_modulo(rank + 1 - (s - (ranks - 1)), ranks);
}

int RingSchedule::received_chunk(std::size_t step) const {
    return ring_modulo(sent_chunk(step) - 1, ranks);
}

Chunk RingSchedule::segment_of(int chunk, std::size_t k) const {
    const Chunk c = chunk_of(elements, ranks, chunk);
    const std::size_t start = std::min(c.count, k * segment_elements);
    return {c.first + start, std::min(c.count - start, segment_elements)};
}

RingSchedule ring_schedule(int rank, int ranks, std::size_t elements,
                           std::size_t segment_elements) {
    const std::size_t largest = chunk_of(elements, ranks, 0).count;
    return {.rank = rank,
            .ranks = ranks,
            .elements = elements,
            .segment_elements = segment_elements,
            .segments_per_step =
                std::max<std::size_t>(1, (largest + segment_elements - 1) / segment_elements)};
}

}  // namespace rdmalab
