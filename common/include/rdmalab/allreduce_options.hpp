// The command line the allreduce programs share (the ring-allreduce and recursive-doubling
// lessons, mpi-allreduce): the vector's size, how many allreduces, the record; and, for the
// programs that list their hosts themselves, the ranks and where they listen. Described and
// checked here once, so that each program refuses a bad line in the same words.
#pragma once

#include "rdmalab/options.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rdmalab {

// What every allreduce program is told.
struct AllreduceOptions {
    std::size_t size = 0;  // bytes of float32 per rank
    unsigned iterations = 5;
    std::string json;  // --json: this rank's record file (empty: none)
};

// ... and a program that connects its ranks itself: rank R listens on ports from port on.
struct RankedAllreduceOptions : AllreduceOptions {
    int rank = -1;                   // -1 until given, or taken from the launcher
    std::vector<std::string> hosts;  // the ranks' addresses, in rank order
    std::uint16_t port = kDefaultPort;
    std::string device;     // -d: the RDMA device (empty: the one with this rank's address)
    double timeout_s = 20;  // the longest wait for another rank
};

// The options, added to a program's CommandLine: -s/--size, -n/--iters and --json; with
// RankedAllreduceOptions also --rank, --hosts, -p/--port, -d/--device and --timeout. A program
// may re-describe one (cli.existing("--port").description(…)) or add its own. After
// cli.parse_or_exit, check() fills in what the text gave and refuses what cannot run.
class AllreduceCommandLine {
  public:
    AllreduceCommandLine(CommandLine& cli, AllreduceOptions& options,
                         const std::string& default_size);
    AllreduceCommandLine(CommandLine& cli, RankedAllreduceOptions& options,
                         const std::string& default_size);

    // The size in bytes; the hosts as a list; the rank from mpirun or srun when --rank was not
    // given. Throws Error, naming the option, when the size is not a whole number of float32 or
    // over 1 GiB, when the hosts are not 2 to 64, or when the rank is not a place among them.
    void check();

  private:
    AllreduceOptions& options_;
    RankedAllreduceOptions* ranked_ = nullptr;  // null: a program the launcher connects
    std::string size_;                          // the text given, until check()
    std::string hosts_;
};

// Throws unless bytes is a positive multiple of 4 (float32) of at most 1 GiB, naming the
// option it came from: "--segment must be a positive multiple of 4 bytes (float32)".
void require_float32_bytes(std::string_view option, std::size_t bytes);

}  // namespace rdmalab
