// Unit tests for the ring allreduce's report: nccl-tests' algbw and busbw from the median time.
#include "rdmalab/allreduce_report.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace rdmalab;

TEST(AllreduceReport, StepsBytesAndBandwidths) {
    // 1 MB over 4 ranks; the median of 3 runs is 10 ms: algbw 100 MB/s, busbw × 2·3/4 = 150.
    const std::string text = format_allreduce_report("rank 0", {.bytes = 1'000'000,
                                                                .ranks = 4,
                                                                .times_ms = {30, 10, 5},
                                                                .step_done_ms = {1, 3, 3.5},
                                                                .bytes_sent = 1'500'000,
                                                                .right = 1});
    EXPECT_EQ(text,
              "rank 0: steps of the last allreduce (ms): 1.00 2.00 0.50\n"
              "rank 0: 1500000 bytes written to rank 1 per allreduce (1.500 of the vector; "
              "2(n-1)/n = 1.500)\n"
              "rank 0: allreduce of 1000000 bytes over 4 ranks: median 10.00 ms of 3, algbw 100 "
              "MB/s, busbw 150 MB/s\n");
}

TEST(AllreduceReport, MedianOfAnEvenCountIsTheUpperMiddle) {
    const std::string text = format_allreduce_report("r", {.bytes = 1'000'000,
                                                           .ranks = 2,
                                                           .times_ms = {1, 4, 2, 8},
                                                           .step_done_ms = {},
                                                           .bytes_sent = 0,
                                                           .right = 1});
    EXPECT_NE(text.find("median 4.00 ms of 4, algbw 250 MB/s, busbw 250 MB/s"), std::string::npos)
        << text;
}

TEST(AllreduceReport, PartnersInsteadOfANeighbourAndNothingUncounted) {
    // Recursive doubling over 4 ranks writes the whole vector twice, to two partners.
    std::string text = format_allreduce_report("rank 3", {.bytes = 1000,
                                                          .ranks = 4,
                                                          .times_ms = {2},
                                                          .step_done_ms = {1, 2},
                                                          .bytes_sent = 2000,
                                                          .right = std::nullopt});
    EXPECT_NE(text.find("rank 3: 2000 bytes written to its partners per allreduce (2.000 of the "
                        "vector; 2(n-1)/n = 1.500)\n"),
              std::string::npos)
        << text;
    // MPI neither times its steps nor says what it sent: those lines are left out.
    text = format_allreduce_report("rank 0", {.bytes = 1000,
                                              .ranks = 2,
                                              .times_ms = {1},
                                              .step_done_ms = {},
                                              .bytes_sent = 0,
                                              .right = std::nullopt});
    EXPECT_EQ(text,
              "rank 0: allreduce of 1000 bytes over 2 ranks: median 1.00 ms of 1, algbw 1 MB/s, "
              "busbw 1 MB/s\n");
}

TEST(AllreduceInputs, EverySumIsExactAndAWrongElementIsNamed) {
    std::vector<float> data(1000);
    for (std::size_t i = 0; i < data.size(); ++i)
        data[i] = allreduce_input(0, i) + allreduce_input(1, i) + allreduce_input(2, i);
    EXPECT_FALSE(allreduce_mismatch(data, 3));
    data[500] += 1;
    ASSERT_TRUE(allreduce_mismatch(data, 3));
    EXPECT_EQ(*allreduce_mismatch(data, 3), "element 500 is 1501 after the allreduce, not 1500");
    EXPECT_TRUE(allreduce_mismatch(data, 2));  // two ranks' sum is not three's
}
