// One rdma-bench run: the client drives a list of configurations over the control channel, the
// server follows; each configuration becomes a record (knobs, results, environment) and a row.
#pragma once

#include "rdmalab/bench/config.hpp"
#include "rdmalab/bench/engine.hpp"
#include "rdmalab/bench/records.hpp"
#include "rdmalab/gpu/options.hpp"
#include "rdmalab/options.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rdmalab::bench {

// The common connection options (address, bind, port, -d, -i, GID index, timeouts: a
// QpOptions, since rdma-bench connects its QPs by hand), and rdma-bench's own.
struct SessionOptions : QpOptions {
    double max_phase_s = 600;  // longest one measurement may run
    std::string json_path, csv_path;
    bool gbps = false;          // also print Gb/s (10^9 bits)
    bool progress = true;       // a progress line on a terminal
    gpu::MemoryOptions memory;  // --mem/--path: this side's buffer (each side chooses its own)
    bool stage_each_message = false;  // --staging-copies per-message (else once per phase)
    PostApi api = PostApi::kClassic;  // --api: how this side posts
};

// Knob values the server was started with (name → allowed values): a client configuration
// outside them is refused at connect time, so mismatched settings cannot pass unnoticed.
using PinnedKnobs = std::map<std::string, std::vector<std::string>>;

// Client: runs every configuration; prints a table; writes records. Returns the exit status.
int run_client(const SessionOptions& options, const std::vector<BenchConfig>& configs);
// Server: serves one client's whole run.
int run_server(const SessionOptions& options, const PinnedKnobs& pinned);

// The value of a configuration's knob as text, for comparing with PinnedKnobs ("64", "RC", "on").
std::string knob_text(const BenchConfig& config, const std::string& knob);
// Why the configuration lies outside what the server was started with, if it does.
std::optional<std::string> pinned_mismatch(const BenchConfig& config, const PinnedKnobs& pinned);

}  // namespace rdmalab::bench
