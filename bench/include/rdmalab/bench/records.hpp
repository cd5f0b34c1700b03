// rdma-bench results: one complete record per configuration (every knob, the results, and
// where and when it was measured), written as JSON and CSV. Files are rewritten whole after
// each configuration, so an interrupted sweep keeps every finished row.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace rdmalab::bench {

using Record = nlohmann::ordered_json;

// Where and when: host, kernel, date (UTC, ISO 8601), tool version. The caller adds the
// device, provider, MTU and memory kind it used.
Record host_environment(const std::string& tool_version);

// {"records": [...]} — one object per configuration, pretty-printed.
std::string to_json(const std::vector<Record>& records);
// A header of every key that appears (first-seen order; nested objects flattened as a.b),
// then one row per record; fields quoted when they need it.
std::string to_csv(const std::vector<Record>& records);

// Reads what to_json wrote; throws rdmalab::Error naming the file and the problem.
std::vector<Record> read_json_file(const std::string& path);
// Writes atomically (temporary file, then rename); throws on failure.
void write_file(const std::string& path, const std::string& contents);

}  // namespace rdmalab::bench
