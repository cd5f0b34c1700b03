// rdma-bench's record: one configuration's measurement (its knobs, the memory each side used,
// what it measured, where and when) as a C++ type, its schema (kBenchSchema;
// records/schema/bench.json), and its JSON. rdma-bench writes it, and every reader of its result
// files (rdma-bench records and plot, the scripts through `rdma-bench records`) reads it through
// this type: a field is named in C++ (a misspelt one does not compile) or checked against the
// schema (a path through `rdma-bench records` naming no field of it is refused).
// The files recorded in bench/results still read (a unit test reads them all): a field added
// since is optional here. A new field: the struct, kBenchSchema, to_json and bench_from_json, the
// tool's version (kToolVersion) when a reader would misread an old record, and the schema file
// (RDMALAB_UPDATE_SCHEMAS=1 build/bin/unit_tests).
#pragma once

#include "rdmalab/records/document.hpp"
#include "rdmalab/records/environment.hpp"
#include "rdmalab/records/schema.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rdmalab::records {

// "config": the knobs, named as rdma-bench's options name them, and the memory asked for.
struct BenchKnobs {
    std::string op{}, transport{}, mode{};  // "write", "RC", "bw"
    std::uint64_t size = 0;
    std::uint32_t window = 0, qps = 0, post_list = 0, signal_every = 0;
    std::uint32_t inline_size = 0;  // "inline"
    std::uint32_t sge = 0;
    // Absent in records before these knobs existed.
    std::optional<bool> srq{}, shared_cq{}, events{};
    std::uint64_t iters = 0;
    double duration_s = 0;
    std::uint64_t warmup = 0;
    std::string memory{};                        // the client's ("host", "cuda:0")
    std::optional<std::string> server_memory{};  // the server's
    std::optional<std::string> api{};            // how the client posted ("classic", "ex")
    bool operator==(const BenchKnobs&) const = default;
};

// "memory.client" and "memory.server": how one side's buffer was had and registered.
struct BenchMemorySide {
    std::string memory{}, path{}, where{};
    std::string staging_copies{};  // "none", "per phase", "per message"
    std::uint64_t copies_in_timed_loop = 0;
    bool operator==(const BenchMemorySide&) const = default;
};
struct BenchMemory {
    BenchMemorySide client{}, server{};
    std::optional<std::string> note{};  // what staging copies mean for the rates
    bool operator==(const BenchMemory&) const = default;
};

// A bandwidth run's initiator-side figures (flat in "result").
struct BenchThroughput {
    std::uint64_t ops = 0, bytes = 0;
    double seconds = 0, gib_per_s = 0, gb_per_s = 0, mops = 0;
    bool operator==(const BenchThroughput&) const = default;
};
// "result.receiver": what the target counted, where the operation lands in its receives.
struct BenchReceiver {
    std::uint64_t messages = 0, bytes = 0, lost = 0;
    double seconds = 0, mops = 0, gib_per_s = 0;
    bool operator==(const BenchReceiver&) const = default;
};
// "result.latency": a latency run's samples.
struct BenchLatency {
    std::string reported_as{};  // "half round trip" or "round trip"
    std::uint64_t samples = 0;
    double min_us = 0, median_us = 0, mean_us = 0, stdev_us = 0, p99_us = 0, p999_us = 0,
           max_us = 0;
    bool operator==(const BenchLatency&) const = default;
};
struct BenchCpu {
    double client_s = 0, server_s = 0, client_us_per_op = 0, server_us_per_op = 0,
           client_utilization = 0, server_utilization = 0;
    bool operator==(const BenchCpu&) const = default;
};
struct BenchResult {
    std::optional<BenchThroughput> throughput{};  // bandwidth runs
    std::optional<BenchReceiver> receiver{};
    std::optional<std::uint64_t> atomic_counter{};  // the target's counter after fetch-and-adds
    std::optional<bool> verified{};
    std::optional<BenchLatency> latency{};  // latency runs
    BenchCpu cpu{};
    bool operator==(const BenchResult&) const = default;
};

struct BenchRecord {
    std::string tool{};  // "rdma-bench 0.1"
    BenchKnobs config{};
    std::optional<BenchMemory> memory{};  // absent in records before it was kept
    BenchResult result{};
    Environment environment{};
    bool operator==(const BenchRecord&) const = default;
};

Json to_json(const BenchRecord& record);
// One record object → the record, checked against kBenchSchema first; throws rdmalab::Error
// naming where and the field.
BenchRecord bench_from_json(const Json& object, const std::string& where);
// Whether a record's "tool" names rdma-bench.
bool is_bench_record(const Json& object);

extern const std::vector<Field> kBenchSchema;

// The schema a record in a result file keeps, by its "tool" (rdma-bench's, an allreduce's or
// transfer-bench's: transfer.hpp); throws rdmalab::Error naming where when the tool is none.
Schema schema_of(const Json& record, const std::string& where);
// A result file's records, each read through its type and written back: every one keeps its
// schema, or rdmalab::Error names the file, the record and the field.
std::vector<Json> read_record_file(const std::string& path);

}  // namespace rdmalab::records
