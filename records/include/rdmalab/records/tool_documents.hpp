// The tools' own JSON documents, one object each rather than a record file: rdma-mesh's mesh.json
// (mesh.hpp), gpu-memory-bench's record (gpu_memory.hpp) and rdma-doctor's --json report
// (doctor.hpp). `rdma-bench json` reads them here, each through its type, as `rdma-bench records`
// reads the result files (bench.hpp).
#pragma once

#include "rdmalab/records/document.hpp"
#include "rdmalab/records/schema.hpp"

#include <string>

namespace rdmalab::records {

// The schema of a document, by its "tool"; throws rdmalab::Error naming where when the tool
// writes no document this library knows.
Schema document_schema(const Json& document, const std::string& where);
// A document read through its type and written back: it keeps its schema, or rdmalab::Error
// names the file and the field.
Json read_document(const Json& document, const std::string& where);
// read_document of a file's JSON; throws rdmalab::Error naming the file (unreadable, not JSON,
// not a document of a tool this library knows, a field outside its schema).
Json read_document_file(const std::string& path);

}  // namespace rdmalab::records
