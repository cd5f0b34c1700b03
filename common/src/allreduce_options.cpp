// The allreduce programs' shared command line: see allreduce_options.hpp.
#include "rdmalab/allreduce_options.hpp"

#include "rdmalab/error.hpp"
#include "rdmalab/rank_hosts.hpp"

#include <fmt/core.h>

namespace rdmalab {
namespace {

constexpr int kMaxRanks = 64;
constexpr std::size_t kMaxBytes = std::size_t{1} << 30;  // a vector, or the memory it needs

}  // namespace

AllreduceCommandLine::AllreduceCommandLine(CommandLine& cli, AllreduceOptions& options,
                                           const std::string& default_size)
    : options_(options), size_(default_size) {
    cli.option("-s,--size", size_, "bytes of float32 per rank (a multiple of 4)")
        .is_size()
        .show_default();
    cli.option("-n,--iters", options.iterations, "allreduces to run (the median is reported)")
        .range(1, 1000)
        .show_default();
    cli.option("--json", options.json, "write this rank's measurement there, as a record");
}

AllreduceCommandLine::AllreduceCommandLine(CommandLine& cli, RankedAllreduceOptions& options,
                                           const std::string& default_size)
    : AllreduceCommandLine(cli, static_cast<AllreduceOptions&>(options), default_size) {
    ranked_ = &options;
    cli.option("--rank", options.rank,
               "this rank's place in --hosts (default: from mpirun or srun)")
        .range(0, kMaxRanks - 1);
    cli.option("--hosts", hosts_, "the ranks' addresses in rank order, comma-separated").required();
    cli.option("-p,--port", options.port, "TCP port of rank 0").range(1024, 65000).show_default();
    cli.option("-d,--device", options.device,
               "the RDMA device (default: the one with this rank's address)");
    cli.option("--timeout", options.timeout_s, "seconds to wait for another rank")
        .range(1.0, 600.0)
        .show_default();
}

void AllreduceCommandLine::check() {
    // is_size() refused any text that is not a size while parsing.
    options_.size = parse_size(size_).value_or(0);
    require_float32_bytes("--size", options_.size);
    if (!ranked_) return;
    RankedAllreduceOptions& o = *ranked_;
    o.hosts = split_hosts(hosts_);
    if (o.rank < 0) o.rank = launcher_rank();
    const int ranks = static_cast<int>(o.hosts.size());
    if (ranks < 2 || ranks > kMaxRanks)
        fail(fmt::format("--hosts names {} rank(s): an allreduce needs 2 to {}", ranks, kMaxRanks));
    if (o.rank < 0 || o.rank >= ranks)
        fail(fmt::format(
            "--rank {} is not a place among {} ranks (give --rank, or run under mpirun or srun)",
            o.rank, ranks));
}

void require_float32_bytes(std::string_view option, std::size_t bytes) {
    if (bytes == 0 || bytes % sizeof(float) != 0)
        fail(fmt::format("{} must be a positive multiple of 4 bytes (float32)", option));
    if (bytes > kMaxBytes) fail(fmt::format("{} may be at most 1 GiB", option));
}

}  // namespace rdmalab
