// rdma-bench's knobs as the user gives them (a value, a list "4,64" or a range "32..8192" each)
// turned into the configurations a client runs, and into what a server pins.
#pragma once

#include "rdmalab/bench/config.hpp"
#include "rdmalab/bench/session.hpp"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace rdmalab::bench {

// Every knob as the text the user gave (a value, a list, or a power-of-two range).
struct KnobTexts {
    std::string op = "write", transport = "RC", mode = "bw";
    std::string size, window = "128", qps = "1", post_list = "1", signal_every, inline_size = "0",
                      sge = "1";
    std::string srq = "off", shared_cq = "off", events = "off";
    bool all_sizes = false, use_srq = false, events_flag = false;
    std::uint64_t iters = 0, warmup = 100;
    double duration_s = 0;
};

// The cross product of every knob's values, first knob slowest, sizes fastest; perftest's
// defaults where a knob is not given (size: 64 KiB for bandwidth, 2 B for latency, 8 B for
// atomics; one signaled WR in min(100, window)). Throws Error, naming the knob, for a value
// out of range, an unknown name, or a combination that can never run.
std::vector<BenchConfig> expand_knobs(const KnobTexts& knobs, bool size_given);

// What a server pins: for each knob named in `given` ("op", "size", "srq"…), its values as
// text ("write", "4096", "on"). Throws Error for a value that cannot be parsed.
PinnedKnobs pinned_knobs(const KnobTexts& knobs, const std::set<std::string>& given);

// "a,b,c" → {"a", "b", "c"} (an empty item stays: it is refused by whoever reads it).
std::vector<std::string> split_list(const std::string& text);

}  // namespace rdmalab::bench
