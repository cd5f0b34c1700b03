// rdma-bench's names for the records library's (rdmalab/records/): its results, its control
// messages and the other tools' documents (mesh.json, gpu-memory-bench's) go through that library,
// which lessons share; the names below let rdma-bench's code and its tests say Record and to_json
// as before.
#pragma once

#include "rdmalab/records/bench.hpp"
#include "rdmalab/records/document.hpp"
#include "rdmalab/records/environment.hpp"

namespace rdmalab::bench {

using Record = records::Json;
using records::FieldQuery;
using records::JsonPath;
using records::kMaxJsonDepth;
using records::parse_json;
using records::parse_path;
using records::read_fields;
using records::read_json_file;
using records::ReadRequest;
using records::select_values;
using records::to_csv;
using records::value_line;
using records::write_file;

// {"records": [...]}: the document alone, so that to_json({a, b}) names one function here (the
// records library's to_json also writes each record type).
inline std::string to_json(const std::vector<Record>& records) {
    return records::to_json(records);
}

}  // namespace rdmalab::bench
