// One rdma-bench configuration: the operation, transport, mode and every knob, with the rules
// that make a combination meaningful, and its JSON form (sent to the server, kept in records).
#pragma once

#include "rdmalab/bench/operations.hpp"
#include "rdmalab/bench/records.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace rdmalab::bench {

enum class Transport { kRC, kUC, kUD };
enum class Mode { kBandwidth, kLatency };

const char* transport_name(Transport t);                            // "RC", "UC", "UD"
const char* mode_name(Mode mode);                                   // "bw", "lat"
std::optional<Transport> parse_transport(const std::string& text);  // case-insensitive
std::optional<Mode> parse_mode(const std::string& text);

struct BenchConfig {
    Op op = Op::kWrite;
    Transport transport = Transport::kRC;
    Mode mode = Mode::kBandwidth;
    std::uint64_t size = 65536;      // bytes per message (8 for atomics)
    std::uint32_t window = 128;      // outstanding WRs per QP (perftest -t)
    std::uint32_t qps = 1;           // queue pairs, each with its own window (-q)
    std::uint32_t post_list = 1;     // WRs chained with wr.next per ibv_post_send (-l)
    std::uint32_t signal_every = 1;  // one signaled WR in N (-Q); the last WR is always signaled
    std::uint32_t inline_size = 0;   // messages up to this size are sent IBV_SEND_INLINE (-I)
    std::uint32_t sge = 1;           // scatter/gather entries per WR
    bool srq = false;                // the server's receives come from one shared receive queue
    bool shared_cq = false;          // one CQ for all QPs (each side)
    bool events = false;             // completion channel instead of busy polling (-e)
    std::uint64_t iters = 10000;     // operations per QP (-n), when duration_s is 0
    double duration_s = 0;           // measure for this long instead (-D)
    std::uint64_t warmup = 100;      // un-timed operations per QP before each measurement

    // Every rule that needs no device: op vs transport, sizes of atomics, post list and signal
    // interval against the window, latency with one QP… Returns why the combination is refused.
    std::optional<std::string> problem() const;

    // Bytes each side's buffer slot needs (message, plus the GRH area for UD receives).
    std::uint64_t slot_bytes() const;

    Record to_json() const;
    // Refuses (throws rdmalab::Error) anything malformed or out of range: it comes from a peer.
    static BenchConfig from_json(const Record& json);
};

// One line naming the configuration's knobs: "write RC bw 64 B window 128 qps 1 …".
std::string describe(const BenchConfig& config);

}  // namespace rdmalab::bench
