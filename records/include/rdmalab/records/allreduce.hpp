// An allreduce's record (the ring-allreduce and recursive-doubling lessons, mpi-allreduce): one
// rank's measurement as a C++ type, its schema (kAllreduceSchema; records/schema/allreduce.json),
// written and read through this library as rdma-bench's records are (bench.hpp), so that scripts
// and tests read it with `rdma-bench records` and draw it with `rdma-bench plot`.
// A new field: the struct, kAllreduceSchema, to_json and allreduce_from_json, the tool's version
// in AllreduceSettings::tool when a reader would misread an old record, and the schema file
// (RDMALAB_UPDATE_SCHEMAS=1 build/bin/unit_tests rewrites it).
#pragma once

#include "rdmalab/allreduce_report.hpp"
#include "rdmalab/records/document.hpp"
#include "rdmalab/records/environment.hpp"
#include "rdmalab/records/schema.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rdmalab::records {

// How the rank ran, beside what AllreduceRuns holds.
struct AllreduceSettings {
    int rank = 0;
    std::size_t segment = 0;  // bytes per WRITE (0: one WRITE per transfer, or not ours to say)
    std::uint32_t slots = 0;  // receive slots per link
    std::string algorithm = "ring";
    std::string tool =
        "ring-allreduce 2";  // the program and its record's version (2: bytes_sent, spread)
};

struct AllreduceConfig {
    std::string algorithm{};
    int ranks = 0;
    int rank = 0;
    std::uint64_t bytes = 0;
    std::uint64_t segment = 0;
    std::uint32_t slots = 0;
    std::uint64_t iterations = 0;
    bool operator==(const AllreduceConfig&) const = default;
};
// The report's measures (AllreduceMeasures) and what the rank counted.
struct AllreduceResult {
    double median_ms = 0;
    double algbw_mb_s = 0;
    double busbw_mb_s = 0;
    double busbw_min_mb_s = 0;  // from the slowest allreduce
    double busbw_max_mb_s = 0;  // from the fastest
    std::vector<double> times_ms{};
    std::vector<double> step_ms{};    // the last allreduce's
    std::uint64_t bytes_sent = 0;     // 0: not counted
    std::optional<int> right_rank{};  // a ring's; null for other algorithms
    double link_share = 0;            // 2(n-1)/n
    bool operator==(const AllreduceResult&) const = default;
};
struct AllreduceRecord {
    std::string tool{};
    AllreduceConfig config{};
    AllreduceResult result{};
    Environment environment{};
    bool operator==(const AllreduceRecord&) const = default;
};

AllreduceRecord allreduce_record(const AllreduceRuns& runs, const AllreduceSettings& settings,
                                 Environment environment);

Json to_json(const AllreduceRecord& record);
// One record object → the record, checked against kAllreduceSchema first; throws rdmalab::Error
// naming where and the field.
AllreduceRecord allreduce_from_json(const Json& object, const std::string& where);
// Whether a record's "tool" names an allreduce program.
bool is_allreduce_record(const Json& object);

// Writes {"records": [that record]} to path, atomically, with this host's environment.
void write_allreduce_records(const std::string& path, const AllreduceRuns& runs,
                             const AllreduceSettings& settings);

extern const std::vector<Field> kAllreduceSchema;

}  // namespace rdmalab::records
