// Unit tests for the recursive-doubling schedule: partners, folds and link numbers, and that
// every send has its receive at the other end on the same link.
#include "rdmalab/doubling_schedule.hpp"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

using namespace rdmalab;

namespace {
using A = DoublingAction;
bool same(const DoublingStep& step, A action, int partner, int link) {
    return step.action == action && step.partner == partner && step.link == link;
}
}  // namespace

TEST(DoublingSchedule, PowersAndLinks) {
    EXPECT_EQ(doubling_power(1), 1);
    EXPECT_EQ(doubling_power(2), 2);
    EXPECT_EQ(doubling_power(3), 2);
    EXPECT_EQ(doubling_power(7), 4);
    EXPECT_EQ(doubling_power(64), 64);
    EXPECT_EQ(doubling_links(2), 2);  // the fold's (unused) and step 0's
    EXPECT_EQ(doubling_links(4), 3);
    EXPECT_EQ(doubling_links(64), 7);
}

TEST(DoublingSchedule, FourRanksSwapWithTheirXorPartners) {
    const auto steps = doubling_schedule(1, 4);
    ASSERT_EQ(steps.size(), 2U);
    EXPECT_TRUE(same(steps[0], A::kSwap, 0, 1));
    EXPECT_TRUE(same(steps[1], A::kSwap, 3, 2));
}

TEST(DoublingSchedule, ThreeRanksFoldTheThirdIntoTheFirst) {
    const auto rank0 = doubling_schedule(0, 3);
    ASSERT_EQ(rank0.size(), 3U);
    EXPECT_TRUE(same(rank0[0], A::kFoldIn, 2, 0));
    EXPECT_TRUE(same(rank0[1], A::kSwap, 1, 1));
    EXPECT_TRUE(same(rank0[2], A::kResultOut, 2, 0));
    const auto rank1 = doubling_schedule(1, 3);
    ASSERT_EQ(rank1.size(), 1U);
    EXPECT_TRUE(same(rank1[0], A::kSwap, 0, 1));
    const auto rank2 = doubling_schedule(2, 3);
    ASSERT_EQ(rank2.size(), 2U);
    EXPECT_TRUE(same(rank2[0], A::kFoldOut, 0, 0));
    EXPECT_TRUE(same(rank2[1], A::kResultIn, 0, 0));
}

// For every rank count: links in increasing order on every rank (what connecting relies on),
// and each link's two ends agree: a swap faces a swap, a fold out a fold in, a result out a
// result in, each between the same two ranks.
TEST(DoublingSchedule, EveryLinkHasTwoMatchingEnds) {
    for (int ranks = 2; ranks <= 64; ++ranks) {
        std::map<std::tuple<int, int, int, int>, int> ends;  // (from, to, link, action) → count
        for (int rank = 0; rank < ranks; ++rank) {
            int previous_link = -1;
            for (const DoublingStep& step : doubling_schedule(rank, ranks)) {
                ASSERT_GE(step.partner, 0);
                ASSERT_LT(step.partner, ranks);
                ASSERT_NE(step.partner, rank);
                ASSERT_LT(step.link, doubling_links(ranks));
                if (step.action != A::kResultOut && step.action != A::kResultIn) {
                    EXPECT_GT(step.link, previous_link) << ranks << " ranks, rank " << rank;
                }
                previous_link = step.link;
                ++ends[{rank, step.partner, step.link, static_cast<int>(step.action)}];
            }
        }
        auto facing = [](A action) {
            switch (action) {
                case A::kFoldOut:
                    return A::kFoldIn;
                case A::kFoldIn:
                    return A::kFoldOut;
                case A::kResultOut:
                    return A::kResultIn;
                case A::kResultIn:
                    return A::kResultOut;
                case A::kSwap:
                    return A::kSwap;
            }
            return A::kSwap;
        };
        for (const auto& [end, count] : ends) {
            const auto [from, to, link, action] = end;
            EXPECT_EQ(count, 1);
            EXPECT_EQ(
                ends.count({to, from, link, static_cast<int>(facing(static_cast<A>(action)))}), 1U)
                << ranks << " ranks: rank " << from << " to rank " << to << " on link " << link;
        }
    }
}
