// The project's record files: {"records": [...]}, one object per measurement (rdma-bench's, an
// allreduce's: bench.hpp, allreduce.hpp), written as JSON and CSV, and the one reader scripts use
// (`rdma-bench records`). Files are rewritten whole after each record, so an interrupted sweep
// keeps every finished row. Lessons and tools both write through this library; it depends on
// common/ and nlohmann-json only.
#pragma once

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace rdmalab::records {

// A JSON value, keys in the order written.
using Json = nlohmann::ordered_json;

// {"records": [...]} — one object per configuration, pretty-printed.
std::string to_json(const std::vector<Json>& records);
// A header of every key that appears (first-seen order; nested objects flattened as a.b),
// then one row per record; fields quoted when they need it.
std::string to_csv(const std::vector<Json>& records);

// JSON from a peer or a file has at most this many levels of objects and arrays ({"a": [1]}
// has two). The JSON library copies and prints a value recursively, so deeper input (a megabyte
// of '[' in a control message) would overflow the stack; rdma-bench's result files have 5
// levels, its messages fewer.
inline constexpr int kMaxJsonDepth = 32;
// Parses text, refusing (rdmalab::Error naming `what`) invalid JSON and JSON nested too deep.
Json parse_json(std::string_view text, std::string_view what);

// Reads what to_json wrote; throws rdmalab::Error naming the file and the problem.
std::vector<Json> read_json_file(const std::string& path);
// Writes atomically (temporary file, then rename); throws on failure.
void write_file(const std::string& path, const std::string& contents);

// Reading fields back (`rdma-bench records` and `rdma-bench json`): the one way scripts and
// tests read these files, instead of matching their text.
//
// A path names values inside a document: keys of objects and indices of arrays, separated by
// '/', as the file is laid out ("records/0/result/gib_per_s"); '*' takes every element of an
// array (or every member of an object), in order. A missing key or index is an error, except
// below a '*', where an element without the rest of the path gives null (so the lines of
// "records/*/result/receiver/lost" stay one per record).
struct JsonPath {
    std::string text;
    std::vector<std::string> steps;
};
// Throws rdmalab::Error on an empty path or an empty step ("a//b", "/a", "a/").
JsonPath parse_path(std::string_view text);
// Every value the path reaches, in document order; throws rdmalab::Error naming the path so far
// on a missing key or index (outside a '*'), a step that is not an index into an array, or a
// step into a number, string, boolean or null.
std::vector<Json> select_values(const Json& document, const JsonPath& path);
// One line for a value: compact JSON (strings quoted); with raw, a string without line breaks
// is printed as it is.
std::string value_line(const Json& value, bool raw);

struct FieldQuery {
    enum class Kind { kGet, kCount } kind;
    std::string path;
};
struct ReadRequest {
    std::string file;
    // The file must be a result file, each record read through its type (read_record_file);
    // else a tool's document (mesh.json, gpu-memory-bench's record), read through its type
    // (tool_documents.hpp). Either way a path must name a field of the schema.
    bool records = true;
    std::vector<FieldQuery> queries;
    bool raw = false;
};
// Runs the queries in order: --get prints a line per value, --count a line per value with the
// number of its elements. Prints everything to out and returns 0, or nothing to out, one line
// ("<program>: <file>: <problem>") to err, and returns 2 (unreadable file, not a result file,
// bad path, missing field, index out of range, --count of something not an array or object).
int read_fields(const ReadRequest& request, std::string_view program, std::ostream& out,
                std::ostream& err);

}  // namespace rdmalab::records
