// rdma-bench results: one complete record per configuration (every knob, the results, and
// where and when it was measured), written as JSON and CSV. Files are rewritten whole after
// each configuration, so an interrupted sweep keeps every finished row.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
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

// JSON from a peer or a file has at most this many levels of objects and arrays ({"a": [1]}
// has two). The JSON library copies and prints a value recursively, so deeper input (a megabyte
// of '[' in a control message) would overflow the stack; rdma-bench's result files have 5
// levels, its messages fewer.
inline constexpr int kMaxJsonDepth = 32;
// Parses text, refusing (rdmalab::Error naming `what`) invalid JSON and JSON nested too deep.
Record parse_json(std::string_view text, std::string_view what);

// Reads what to_json wrote; throws rdmalab::Error naming the file and the problem.
std::vector<Record> read_json_file(const std::string& path);
// Writes atomically (temporary file, then rename); throws on failure.
void write_file(const std::string& path, const std::string& contents);

}  // namespace rdmalab::bench
