// Command-line options for GPU memory, shared by the GPU lessons (and rdma-bench later):
// --mem host|cuda[:N]|rocm[:N] and --path auto|dma-buf|peer|staging. Bad values exit 2 with one
// line through parse_or_exit, like every other option.
#pragma once

#include "rdmalab/gpu/memory.hpp"
#include "rdmalab/options.hpp"

namespace rdmalab::gpu {

struct MemoryOptions {
    MemorySpec memory;                      // --mem (default: host)
    PathRequest path = PathRequest::kAuto;  // --path (default: walk the ladder)
};

// Adds --mem and --path to app (and so to its server/client subcommands, which fall through).
// Checks combinations that cannot work (host memory has no dma-buf or peer-memory rung) in
// app's final_callback, which it therefore takes.
void add_memory_options(CLI::App& app, MemoryOptions& options);
inline void add_memory_options(CommandLine& cli, MemoryOptions& options) {
    add_memory_options(cli.app(), options);
}

}  // namespace rdmalab::gpu
