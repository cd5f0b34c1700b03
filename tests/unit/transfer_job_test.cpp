// transfer-bench's layout of ranks under a launcher (transfer/job.hpp): pairs and many-to-one,
// each target's port, and the jobs it refuses with their reasons.
#include "rdmalab/transfer/job.hpp"

#include <gtest/gtest.h>

namespace rdmalab::transfer {
namespace {

JobRole role(JobPattern pattern, int rank, int ranks, std::uint16_t port = 18515) {
    auto result = job_role(pattern, rank, ranks, port);
    EXPECT_TRUE(std::holds_alternative<JobRole>(result)) << std::get<std::string>(result);
    return std::get<JobRole>(result);
}

std::string refusal(JobPattern pattern, int rank, int ranks, std::uint16_t port = 18515) {
    auto result = job_role(pattern, rank, ranks, port);
    return std::holds_alternative<std::string>(result) ? std::get<std::string>(result) : "";
}

TEST(TransferJob, PairsAnEvenTargetWithTheOddRankAfterItOnThePairsOwnPort) {
    const JobRole target = role(JobPattern::kPairwise, 2, 6);
    EXPECT_TRUE(target.target);
    EXPECT_EQ(target.initiators, 1U);
    EXPECT_EQ(target.port, 18516);
    const JobRole initiator = role(JobPattern::kPairwise, 3, 6);
    EXPECT_FALSE(initiator.target);
    EXPECT_EQ(initiator.peer, 2);
    EXPECT_EQ(initiator.port, 18516);
    EXPECT_EQ(role(JobPattern::kPairwise, 5, 6).port, 18517);
    EXPECT_EQ(role(JobPattern::kPairwise, 0, 2).port, 18515);
}

TEST(TransferJob, ManyToOneMakesRankZeroEveryOthersTarget) {
    const JobRole target = role(JobPattern::kManyToOne, 0, 5);
    EXPECT_TRUE(target.target);
    EXPECT_EQ(target.initiators, 4U);
    for (int rank = 1; rank < 5; ++rank) {
        const JobRole initiator = role(JobPattern::kManyToOne, rank, 5);
        EXPECT_FALSE(initiator.target);
        EXPECT_EQ(initiator.peer, 0);
        EXPECT_EQ(initiator.port, 18515);
    }
}

TEST(TransferJob, RefusesJobsThatCannotBeLaidOut) {
    EXPECT_NE(refusal(JobPattern::kPairwise, 0, 3).find("cannot be paired"), std::string::npos);
    EXPECT_NE(refusal(JobPattern::kManyToOne, 0, 1).find("2 or more"), std::string::npos);
    EXPECT_NE(refusal(JobPattern::kPairwise, 4, 4).find("not a place among 4"), std::string::npos);
    EXPECT_NE(refusal(JobPattern::kPairwise, -1, 4).find("not a place"), std::string::npos);
    EXPECT_NE(refusal(JobPattern::kManyToOne, 0, kMaxJobInitiators + 2).find("at most 64"),
              std::string::npos);
    EXPECT_NE(refusal(JobPattern::kPairwise, 2, 4, 65535).find("past 65535"), std::string::npos);
    EXPECT_EQ(refusal(JobPattern::kPairwise, 0, 4, 65535), "");  // pair 0 still fits
}

TEST(TransferJob, CountsTheInitiatorsOfEachPattern) {
    EXPECT_EQ(job_initiators(JobPattern::kPairwise, 6), 3);
    EXPECT_EQ(job_initiators(JobPattern::kManyToOne, 6), 5);
    EXPECT_EQ(role(JobPattern::kManyToOne, 0, 6).initiators, 5U);
}

TEST(TransferJob, PutsTheRankIntoARecordsName) {
    EXPECT_EQ(with_rank("out/r{rank}.json", 7), "out/r7.json");
    EXPECT_EQ(with_rank("{rank}-{rank}", 12), "12-12");
    EXPECT_EQ(with_rank("plain.json", 3), "plain.json");
}

}  // namespace
}  // namespace rdmalab::transfer
