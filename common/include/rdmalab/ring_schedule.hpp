// The arithmetic of a ring allreduce, apart from the verbs that move its bytes: which chunk of
// the vector a rank sends and receives at each step — reduce-scatter (N-1 steps: receive a
// chunk, add it to yours, pass the sum on), then all-gather (N-1 steps: pass the finished
// chunks round) — and the segments a chunk travels in. The ring-allreduce lesson runs it.
#pragma once

#include <cstddef>

namespace rdmalab {

// A run of elements: the first and how many.
struct Chunk {
    std::size_t first = 0;
    std::size_t count = 0;
};

// Chunk `chunk` of a vector of `elements` cut into `ranks` chunks: rank counts that do not
// divide the size give the first chunks one element more.
Chunk chunk_of(std::size_t elements, int ranks, int chunk);

// a mod n in 0..n-1, also for a negative a (rank 0's left neighbour is rank n-1).
int ring_modulo(int a, int n);

// One rank's schedule in a ring of `ranks`, for a vector of `elements` sent in segments of
// `segment_elements` (one WRITE each).
struct RingSchedule {
    int rank = 0;
    int ranks = 2;
    std::size_t elements = 0;
    std::size_t segment_elements = 1;
    std::size_t segments_per_step = 1;  // the segments of the largest chunk, at least 1

    int left() const { return ring_modulo(rank - 1, ranks); }
    int right() const { return ring_modulo(rank + 1, ranks); }
    std::size_t steps() const { return 2 * static_cast<std::size_t>(ranks - 1); }
    // Steps 0..N-2 reduce-scatter (add what arrives); the rest all-gather (copy it).
    bool reduces(std::size_t step) const { return step < static_cast<std::size_t>(ranks - 1); }
    // In reduce-scatter rank r sends chunk r-s and receives chunk r-s-1; in all-gather it sends
    // chunk r+1-g and receives chunk r-g (g = s-(N-1)).
    int sent_chunk(std::size_t step) const;
    int received_chunk(std::size_t step) const;
    // The part of a chunk that segment k covers (empty where the chunk is shorter than others).
    Chunk segment_of(int chunk, std::size_t k) const;
};

RingSchedule ring_schedule(int rank, int ranks, std::size_t elements, std::size_t segment_elements);

}  // namespace rdmalab
