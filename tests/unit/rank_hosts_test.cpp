// Unit tests for a job's host list and the rank its launcher gives.
#include "rdmalab/rank_hosts.hpp"
#include "rdmalab/error.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

using namespace rdmalab;

TEST(RankHosts, SplitsTheListInOrder) {
    EXPECT_EQ(split_hosts("10.0.0.1,10.0.0.2,10.0.0.3"),
              (std::vector<std::string>{"10.0.0.1", "10.0.0.2", "10.0.0.3"}));
    EXPECT_EQ(split_hosts("a"), (std::vector<std::string>{"a"}));
    // Empty names are kept, for the caller to refuse.
    EXPECT_EQ(split_hosts("a,,b"), (std::vector<std::string>{"a", "", "b"}));
    EXPECT_EQ(split_hosts("a,"), (std::vector<std::string>{"a", ""}));
}

TEST(RankHosts, RankFromTheLauncher) {
    for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) unsetenv(name);
    EXPECT_EQ(launcher_rank(), -1);
    setenv("SLURM_PROCID", "3", 1);
    EXPECT_EQ(launcher_rank(), 3);
    setenv("OMPI_COMM_WORLD_RANK", "1", 1);  // Open MPI's comes first
    EXPECT_EQ(launcher_rank(), 1);
    // A value that is not a rank is refused, naming the variable, not read as 0.
    for (const char* bad : {"abc", "-1", "2x", ""}) {
        setenv("OMPI_COMM_WORLD_RANK", bad, 1);
        EXPECT_THROW(launcher_rank(), Error) << bad;
    }
    for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) unsetenv(name);
}
