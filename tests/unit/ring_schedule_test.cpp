// Unit tests for the ring allreduce's arithmetic: every element is in exactly one chunk, each
// step moves the chunks reduce-scatter and all-gather need, and segments cover their chunk.
#include "rdmalab/ring_schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

using namespace rdmalab;

TEST(RingSchedule, ChunksCoverTheVectorOnce) {
    for (std::size_t elements : {0u, 1u, 5u, 12u, 1001u})
        for (int ranks = 2; ranks <= 7; ++ranks) {
            std::size_t next = 0;
            for (int c = 0; c < ranks; ++c) {
                const Chunk chunk = chunk_of(elements, ranks, c);
                EXPECT_EQ(chunk.first, next) << elements << " over " << ranks;
                // The first chunks take the remainder: sizes differ by at most one.
                EXPECT_LE(chunk.count, elements / ranks + 1);
                EXPECT_GE(chunk.count, elements / ranks);
                next += chunk.count;
            }
            EXPECT_EQ(next, elements);
        }
    EXPECT_EQ(chunk_of(10, 3, 0).count, 4u);
    EXPECT_EQ(chunk_of(10, 3, 2).first, 7u);
}

TEST(RingSchedule, ModuloIsNeverNegative) {
    EXPECT_EQ(ring_modulo(-1, 3), 2);
    EXPECT_EQ(ring_modulo(-4, 3), 2);
    EXPECT_EQ(ring_modulo(5, 3), 2);
    const RingSchedule first = ring_schedule(0, 4, 100, 10);
    EXPECT_EQ(first.left(), 3);
    EXPECT_EQ(first.right(), 1);
}

TEST(RingSchedule, EachRankReceivesWhatItsLeftNeighbourSends) {
    const int ranks = 5;
    for (int rank = 0; rank < ranks; ++rank) {
        const RingSchedule mine = ring_schedule(rank, ranks, 1000, 16);
        const RingSchedule left = ring_schedule(mine.left(), ranks, 1000, 16);
        ASSERT_EQ(mine.steps(), 8u);
        for (std::size_t step = 0; step < mine.steps(); ++step)
            EXPECT_EQ(mine.received_chunk(step), left.sent_chunk(step)) << rank << " " << step;
        // Reduce-scatter starts from its own chunk; the chunk finished last is the one to its
        // right, which all-gather sends first.
        EXPECT_EQ(mine.sent_chunk(0), rank);
        EXPECT_EQ(mine.received_chunk(ranks - 2), ring_modulo(rank + 1, ranks));
        EXPECT_EQ(mine.sent_chunk(ranks - 1), ring_modulo(rank + 1, ranks));
        EXPECT_TRUE(mine.reduces(ranks - 2));
        EXPECT_FALSE(mine.reduces(ranks - 1));
    }
}

TEST(RingSchedule, AllGatherReceivesEveryOtherChunkOnce) {
    const RingSchedule s = ring_schedule(2, 4, 64, 4);
    std::vector<int> received;
    for (std::size_t step = 3; step < s.steps(); ++step) received.push_back(s.received_chunk(step));
    std::sort(received.begin(), received.end());
    // Rank 2 finished chunk 3 itself in reduce-scatter; all-gather brings the other three.
    EXPECT_EQ(received, (std::vector<int>{0, 1, 2}));
}

TEST(RingSchedule, SegmentsCoverTheirChunk) {
    // 10 elements over 3 ranks: chunks of 4, 3 and 3; segments of 2 elements, 2 per step.
    const RingSchedule s = ring_schedule(0, 3, 10, 2);
    EXPECT_EQ(s.segments_per_step, 2u);
    EXPECT_EQ(s.segment_of(0, 0).first, 0u);
    EXPECT_EQ(s.segment_of(0, 1).first, 2u);
    EXPECT_EQ(s.segment_of(0, 1).count, 2u);
    EXPECT_EQ(s.segment_of(2, 1).first, 9u);
    EXPECT_EQ(s.segment_of(2, 1).count, 1u);  // the chunk's tail
    // A vector smaller than the ring: empty chunks still take one (empty) segment per step.
    const RingSchedule tiny = ring_schedule(1, 4, 2, 8);
    EXPECT_EQ(tiny.segments_per_step, 1u);
    EXPECT_EQ(tiny.segment_of(3, 0).count, 0u);
}
