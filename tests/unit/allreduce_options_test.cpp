// Unit tests for the allreduce programs' shared command line: what each program is told, and
// the refusals all three give in the same words.
#include "rdmalab/allreduce_options.hpp"
#include "rdmalab/error.hpp"

#include <gtest/gtest.h>
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

using namespace rdmalab;

namespace {

// Parses args into options as a program with the ranked options would (under srun as rank
// slurm_procid, if given), then checks them; the message of the Error check() throws, or ""
// when it throws none.
std::string allreduce_refusal(std::vector<std::string> args, RankedAllreduceOptions& options,
                              const char* slurm_procid = nullptr) {
    for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) unsetenv(name);
    CommandLine cli{"test", "allreduce"};
    AllreduceCommandLine allreduce(cli, options, "64K");
    args.insert(args.begin(), "allreduce");
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    cli.app().parse(static_cast<int>(argv.size()), argv.data());
    if (slurm_procid) setenv("SLURM_PROCID", slurm_procid, 1);
    std::string refusal;
    try {
        allreduce.check();
    } catch (const Error& error) {
        refusal = error.what();
    }
    unsetenv("SLURM_PROCID");
    return refusal;
}

// The same, for a line alone: each refusal from fresh options.
std::string allreduce_refusal(std::vector<std::string> args) {
    RankedAllreduceOptions options;
    return allreduce_refusal(std::move(args), options);
}

}  // namespace

TEST(AllreduceOptions, FillsInWhatTheLineGives) {
    RankedAllreduceOptions options;
    EXPECT_EQ(allreduce_refusal({"--hosts", "10.0.0.1,10.0.0.2,10.0.0.3", "--rank", "2", "-s", "1M",
                                 "-n", "3", "-p", "20000", "--json", "r.json"},
                                options),
              "");
    EXPECT_EQ(options.hosts, (std::vector<std::string>{"10.0.0.1", "10.0.0.2", "10.0.0.3"}));
    EXPECT_EQ(options.rank, 2);
    EXPECT_EQ(options.size, 1u << 20);
    EXPECT_EQ(options.iterations, 3u);
    EXPECT_EQ(options.port, 20000);
    EXPECT_EQ(options.json, "r.json");
}

TEST(AllreduceOptions, DefaultSizeAndTheLaunchersRank) {
    RankedAllreduceOptions options;
    EXPECT_EQ(allreduce_refusal({"--hosts", "a,b"}, options, "1"), "");
    EXPECT_EQ(options.size, 64u * 1024);
    EXPECT_EQ(options.rank, 1);
}

TEST(AllreduceOptions, RefusesInTheSameWordsForEveryProgram) {
    EXPECT_EQ(allreduce_refusal({"--hosts", "a", "--rank", "0"}),
              "--hosts names 1 rank(s): an allreduce needs 2 to 64");
    EXPECT_EQ(allreduce_refusal({"--hosts", "a,b"}),
              "--rank -1 is not a place among 2 ranks (give --rank, or run under mpirun or srun)");
    EXPECT_EQ(allreduce_refusal({"--hosts", "a,b", "--rank", "2"}),
              "--rank 2 is not a place among 2 ranks (give --rank, or run under mpirun or srun)");
    EXPECT_EQ(allreduce_refusal({"--hosts", "a,b", "--rank", "0", "-s", "6"}),
              "--size must be a positive multiple of 4 bytes (float32)");
    EXPECT_EQ(allreduce_refusal({"--hosts", "a,b", "--rank", "0", "-s", "2G"}),
              "--size may be at most 1 GiB");
    EXPECT_THROW(allreduce_refusal({"--rank", "0"}), CLI::ParseError);  // no --hosts
    EXPECT_THROW(allreduce_refusal({"--hosts", "a,b", "-s", "3X"}), CLI::ParseError);
}

TEST(AllreduceOptions, AProgramsOwnSizesInTheSameWords) {
    EXPECT_NO_THROW(require_float32_bytes("--segment", 64 * 1024));
    try {
        require_float32_bytes("--segment", 6);
        ADD_FAILURE() << "6 bytes accepted";
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(), "--segment must be a positive multiple of 4 bytes (float32)");
    }
    EXPECT_THROW(require_float32_bytes("--segment", 0), Error);
}
