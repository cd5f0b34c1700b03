// Records checked against their schema, and the schema as JSON Schema: see schema.hpp.
#include "rdmalab/records/schema.hpp"

#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace rdmalab::records {

namespace {

const Field* find_field(Schema schema, std::string_view name) {
    const auto it = std::ranges::find(schema, name, &Field::name);
    return it == schema.end() ? nullptr : &*it;
}

std::string_view base_type(std::string_view type) {
    return type.substr(0, type.find('|'));
}

bool has_type(const Json& value, std::string_view type) {
    if (value.is_null()) return type.ends_with("|null");
    const std::string_view base = base_type(type);
    if (base == "string") return value.is_string();
    if (base == "integer") return value.is_number_integer();
    if (base == "number") return value.is_number();
    if (base == "boolean") return value.is_boolean();
    if (base == "object") return value.is_object();
    if (base == "number[]")
        return value.is_array() &&
               std::ranges::all_of(value, [](const Json& item) { return item.is_number(); });
    return false;
}

std::string_view kind_of(const Json& value) {
    if (value.is_object()) return "an object";
    if (value.is_array()) return "an array";
    if (value.is_string()) return "a string";
    if (value.is_boolean()) return "a boolean";
    if (value.is_null()) return "null";
    return value.is_number_integer() ? "an integer" : "a number";
}

void object_problems(const Json& object, const std::string& prefix, Schema schema,
                     std::vector<std::string>& problems) {
    for (const auto& [key, value] : object.items()) {
        const std::string name = prefix.empty() ? key : prefix + "." + key;
        const Field* field = find_field(schema, name);
        if (!field) {
            problems.push_back(name + ": not in the schema");
        } else if (!has_type(value, field->type)) {
            problems.push_back(fmt::format("{}: {}, not {}", name, kind_of(value), field->type));
        } else if (value.is_object()) {
            object_problems(value, name, schema, problems);
        }
    }
    for (const Field& field : schema) {
        const std::string_view name = field.name;
        const std::size_t dot = name.rfind('.');
        const std::string_view parent = dot == std::string_view::npos ? "" : name.substr(0, dot);
        if (field.required && parent == prefix &&
            !object.contains(name.substr(parent.size() + !parent.empty())))
            problems.push_back(std::string(name) + ": missing");
    }
}

// The JSON Schema of one field's value.
Json value_schema(std::string_view type, std::string_view description) {
    Json schema = Json::object();
    const std::string base(base_type(type));
    const bool nullable = type.ends_with("|null");
    if (base == "number[]") {
        schema["type"] = nullable ? Json{"array", "null"} : Json("array");
        schema["items"] = {{"type", "number"}};
    } else {
        schema["type"] = nullable ? Json{base, "null"} : Json(base);
    }
    schema["description"] = description;
    if (base == "object") {
        schema["properties"] = Json::object();
        schema["required"] = Json::array();
        schema["additionalProperties"] = false;
    }
    return schema;
}

}  // namespace

std::vector<std::string> schema_problems(const Json& record, Schema schema) {
    std::vector<std::string> problems;
    if (!record.is_object())
        return {fmt::format("the record is {}, not an object", kind_of(record))};
    object_problems(record, "", schema, problems);
    return problems;
}

void check_schema(const Json& record, Schema schema, const std::string& where) {
    const std::vector<std::string> problems = schema_problems(record, schema);
    if (problems.empty()) return;
    fail(
        fmt::format("{}: {}{}", where, problems.front(),
                    problems.size() > 1 ? fmt::format(" (and {} more)", problems.size() - 1) : ""));
}

bool names_field(Schema schema, std::string_view dotted) {
    if (find_field(schema, dotted)) return true;
    const std::size_t dot = dotted.rfind('.');
    if (dot == std::string_view::npos) return false;
    const Field* array = find_field(schema, dotted.substr(0, dot));
    const std::string_view index = dotted.substr(dot + 1);
    return array && base_type(array->type) == "number[]" && !index.empty() &&
           std::ranges::all_of(index, [](char c) { return c >= '0' && c <= '9'; });
}

Json schema_json(std::string_view title, std::string_view description, Schema schema) {
    Json root{{"$schema", "https://json-schema.org/draft/2020-12/schema"}, {"title", title}};
    root.update(value_schema("object", description));
    for (const Field& field : schema) {
        // Walk to the object holding the field (listed before it: the schema's order).
        Json* holder = &root;
        std::string_view rest = field.name;
        for (std::size_t dot; (dot = rest.find('.')) != std::string_view::npos;
             rest = rest.substr(dot + 1))
            holder = &(*holder)["properties"][std::string(rest.substr(0, dot))];
        (*holder)["properties"][std::string(rest)] = value_schema(field.type, field.description);
        if (field.required) (*holder)["required"].push_back(rest);
    }
    return root;
}

}  // namespace rdmalab::records
