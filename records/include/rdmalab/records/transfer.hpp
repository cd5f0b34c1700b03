// transfer-bench's record: one run of the transfer engine between two hosts (transfer/) as a C++
// type, its schema (kTransferSchema; records/schema/transfer.json), written and read through
// this library as rdma-bench's records are (bench.hpp), so that scripts and tests read it with
// `rdma-bench records` and draw it with `rdma-bench plot --y gbit` (against the block size, or
// --x rails against the rails).
// A new field: the struct, kTransferSchema, to_json and transfer_from_json, kTransferTool's
// version when a reader would misread an old record, and the schema file
// (RDMALAB_UPDATE_SCHEMAS=1 build/bin/unit_tests rewrites it).
#pragma once

#include "rdmalab/records/document.hpp"
#include "rdmalab/records/environment.hpp"
#include "rdmalab/records/schema.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rdmalab::records {

// The program and its record's version.
inline constexpr const char* kTransferTool = "transfer-bench 1";

// "config": the run as transfer-bench's options name it.
struct TransferConfig {
    std::string op{};  // "write" or "read"
    std::uint32_t rails = 0;
    std::vector<std::string> devices{};  // each rail's device, in rail order
    std::uint64_t block = 0;             // bytes per request (-s)
    std::uint32_t batch = 0;             // requests per batch
    std::uint32_t batches = 0;
    std::uint64_t slice = 0;  // bytes per slice
    std::string policy{};     // "score" or "round-robin"
    int retry_cnt = 0, ack_timeout = 0;
    int rail_retry_ms = 0, rail_retry_max_ms = 0;  // a down rail's back-off: first, longest
    bool check = false;
    // RC QPs per rail; absent in records written before --qps (they had 1).
    std::optional<std::uint32_t> qps_per_rail{};
    // The client's memory (--mem: "host", "cuda:0") and the rung that registered it ("host",
    // "dma-buf", "peer memory"); absent in records written before --mem (host memory).
    std::optional<std::string> mem{}, registration{};
    bool operator==(const TransferConfig&) const = default;
};
// "result.rails[]": what one rail carried, and whether it lasted.
struct TransferRail {
    std::string device{};
    std::uint64_t bytes = 0;            // of the slices that landed through it
    bool up = true;                     // at the end
    std::uint32_t failures = 0;         // times it went down
    std::uint32_t restored = 0;         // times it came back
    std::optional<double> detect_ms{};  // went down: from its last completion to its first error
    std::optional<std::string> down_because{};  // down at the end: why
    bool operator==(const TransferRail&) const = default;
};
struct TransferResult {
    std::uint64_t bytes = 0;
    double seconds = 0, gbit_per_s = 0;
    double batch_p50_ms = 0, batch_p99_ms = 0, batch_p999_ms = 0;
    std::uint32_t reposted = 0;  // slices posted again after their rail failed
    bool verified = false;       // every byte checked (--check), and right
    std::vector<TransferRail> rails{};
    bool operator==(const TransferResult&) const = default;
};
struct TransferRecord {
    std::string tool = kTransferTool;
    TransferConfig config{};
    TransferResult result{};
    Environment environment{};
    bool operator==(const TransferRecord&) const = default;
};

Json to_json(const TransferRecord& record);
// One record object → the record, checked against kTransferSchema first; throws rdmalab::Error
// naming where and the field.
TransferRecord transfer_from_json(const Json& object, const std::string& where);
// Whether a record's "tool" names transfer-bench.
bool is_transfer_record(const Json& object);

// Writes {"records": [record]} to path, atomically.
void write_transfer_records(const std::string& path, const TransferRecord& record);

extern const std::vector<Field> kTransferSchema;

}  // namespace rdmalab::records
