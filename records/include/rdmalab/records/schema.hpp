// A record's schema, written once: each field of the record (dotted below the record:
// "result.receiver.lost"), its JSON type, whether the record always has it, and what it means.
// Each record type of this library (bench.hpp, allreduce.hpp) keeps its fields in such a list;
// its reader checks a record against it before reading a field, so a field the schema lacks, one
// of the wrong type, or a missing one is refused with its name, and the list turns into the JSON
// Schema kept in records/schema/ (a unit test keeps those files equal to it).
#pragma once

#include "rdmalab/records/document.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rdmalab::records {

struct Field {
    std::string_view name;  // dotted: "config.size"; an object is a field too ("result.cpu")
    // "string", "integer", "number", "boolean", "object", or "number[]" (an array of numbers);
    // "|null" after one: null is allowed too ("integer|null").
    std::string_view type;
    bool required;  // in every record where the object holding it is
    std::string_view description;
};
using Schema = std::span<const Field>;

// Every way record breaks schema, one line each ("result.cpu.client_s: missing", "config.sise: not
// in the schema", "config.size: a string, not integer"); none when it keeps it.
std::vector<std::string> schema_problems(const Json& record, Schema schema);
// Throws rdmalab::Error "WHERE: PROBLEM" (and how many more) when schema_problems finds any.
void check_schema(const Json& record, Schema schema, const std::string& where);

// Whether dotted names a field of the schema ("result.receiver.lost", "result.cpu"), or an element
// of an array field ("result.times_ms.0").
bool names_field(Schema schema, std::string_view dotted);

// The schema as a JSON Schema (draft 2020-12) of one record: no field beyond the list's.
Json schema_json(std::string_view title, std::string_view description, Schema schema);

}  // namespace rdmalab::records
