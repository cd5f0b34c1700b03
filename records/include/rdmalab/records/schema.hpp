// A record's schema, written once: each field of the record (dotted below the record:
// "result.receiver.lost"), its JSON type, whether the record always has it, and what it means.
// Each record type of this library (bench.hpp, allreduce.hpp, mesh.hpp, gpu_memory.hpp,
// transfer.hpp) keeps its fields in such a list; its reader checks a record against it before
// reading a field, so a field the schema lacks, one of the wrong type, or a missing one is refused
// with its name, and the list turns into the JSON Schema kept in records/schema/ (a unit test keeps
// those files equal to it).
#pragma once

#include "rdmalab/records/document.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rdmalab::records {

struct Field {
    // Dotted: "config.size"; an object is a field too ("result.cpu"). The fields of the objects
    // in an array of objects are named below the array with "[]": "ranks[].host".
    std::string_view name;
    // "string", "integer", "number", "boolean", "object"; "T[]" an array of T ("number[]",
    // "object[]"), "T{}" an object whose members are each a T, any names ("string{}");
    // "|null" after one: null is allowed too ("integer|null"); an element type with its own
    // "|null" in parentheses: "(number|null)[][]", a matrix with gaps.
    std::string_view type;
    bool required;  // in every record where the object holding it is
    std::string_view description;
};
using Schema = std::span<const Field>;

// Every way record breaks schema, one line each ("result.cpu.client_s: missing", "config.sise: not
// in the schema", "config.size: a string, not integer", "ranks[2].rank: missing"); none when it
// keeps it.
std::vector<std::string> schema_problems(const Json& record, Schema schema);
// Throws rdmalab::Error "WHERE: PROBLEM" (and how many more) when schema_problems finds any.
void check_schema(const Json& record, Schema schema, const std::string& where);

// Whether dotted names a field of the schema ("result.receiver.lost", "result.cpu"), an element
// of an array field ("result.times_ms.0"), a field of an array's objects ("ranks.2.host"), or a
// member of a map ("environment.device.pci_bus_id").
bool names_field(Schema schema, std::string_view dotted);

// The fields renamed below prefix ("ranks[]" + "host" → "ranks[].host"), for a part that one
// schema holds in several places or alone (a rank in mesh.json and in the message that sends it).
// The names are kept for the program's life.
std::vector<Field> fields_under(std::string_view prefix, Schema fields);

// The schema as a JSON Schema (draft 2020-12) of one record: no field beyond the list's.
Json schema_json(std::string_view title, std::string_view description, Schema schema);

}  // namespace rdmalab::records
