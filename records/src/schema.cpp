// Records checked against their schema, and the schema as JSON Schema: see schema.hpp.
#include "rdmalab/records/schema.hpp"

#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <deque>
#include <mutex>

namespace rdmalab::records {

namespace {

const Field* find_field(Schema schema, std::string_view name) {
    const auto it = std::ranges::find(schema, name, &Field::name);
    return it == schema.end() ? nullptr : &*it;
}

// A type's parts: "integer|null" is a nullable integer, "number[]" an array of numbers,
// "(number|null)[][]" an array of arrays of nullable numbers, "string{}" an object of strings.
struct TypeParts {
    std::string_view inner;  // the element's type (arrays, maps) or the type itself
    bool nullable = false;
    enum class Kind { kScalar, kArray, kMap } kind = Kind::kScalar;
};

std::string_view unwrap(std::string_view type) {
    return type.starts_with('(') && type.ends_with(')') ? type.substr(1, type.size() - 2) : type;
}

TypeParts parts_of(std::string_view type) {
    TypeParts parts;
    // An element's own "|null" is inside its parentheses: what ends the type is the value's.
    if (type.ends_with("|null")) {
        type.remove_suffix(5);
        parts.nullable = true;
    }
    if (type.ends_with("[]")) {
        parts.kind = TypeParts::Kind::kArray;
        parts.inner = unwrap(type.substr(0, type.size() - 2));
    } else if (type.ends_with("{}")) {
        parts.kind = TypeParts::Kind::kMap;
        parts.inner = unwrap(type.substr(0, type.size() - 2));
    } else {
        parts.inner = type;
    }
    return parts;
}

bool has_type(const Json& value, std::string_view type) {
    const TypeParts parts = parts_of(type);
    if (value.is_null()) return parts.nullable;
    switch (parts.kind) {
        case TypeParts::Kind::kArray:
            return value.is_array() && std::ranges::all_of(value, [&](const Json& item) {
                       return has_type(item, parts.inner);
                   });
        case TypeParts::Kind::kMap:
            return value.is_object() && std::ranges::all_of(value, [&](const Json& item) {
                       return has_type(item, parts.inner);
                   });
        case TypeParts::Kind::kScalar:
            break;
    }
    const std::string_view base = parts.inner;
    if (base == "string") return value.is_string();
    if (base == "integer") return value.is_number_integer();
    if (base == "number") return value.is_number();
    if (base == "boolean") return value.is_boolean();
    if (base == "object") return value.is_object();
    return false;
}

// An array of objects ("object[]"): its elements' fields are named "NAME[].key".
bool is_object_array(std::string_view type) {
    const TypeParts parts = parts_of(type);
    return parts.kind == TypeParts::Kind::kArray && parts.inner == "object";
}

std::string_view kind_of(const Json& value) {
    if (value.is_object()) return "an object";
    if (value.is_array()) return "an array";
    if (value.is_string()) return "a string";
    if (value.is_boolean()) return "a boolean";
    if (value.is_null()) return "null";
    return value.is_number_integer() ? "an integer" : "a number";
}

// prefix: the schema's name of the object ("ranks[]"); shown: how a problem names it
// ("ranks[2]").
void object_problems(const Json& object, const std::string& prefix, const std::string& shown,
                     Schema schema, std::vector<std::string>& problems) {
    for (const auto& [key, value] : object.items()) {
        const std::string name = prefix.empty() ? key : prefix + "." + key;
        const std::string named = shown.empty() ? key : shown + "." + key;
        const Field* field = find_field(schema, name);
        const TypeParts parts = field ? parts_of(field->type) : TypeParts{};
        if (!field) {
            problems.push_back(named + ": not in the schema");
        } else if (parts.kind == TypeParts::Kind::kMap && value.is_object()) {
            for (const auto& [member, item] : value.items())  // a map: each member named
                if (!has_type(item, parts.inner))
                    problems.push_back(fmt::format("{}.{}: {}, not {}", named, member,
                                                   kind_of(item), parts.inner));
        } else if (!has_type(value, field->type)) {
            problems.push_back(fmt::format("{}: {}, not {}", named, kind_of(value), field->type));
        } else if (value.is_object()) {
            object_problems(value, name, named, schema, problems);
        } else if (value.is_array() && is_object_array(field->type)) {
            for (std::size_t i = 0; i < value.size(); ++i)
                object_problems(value[i], name + "[]", fmt::format("{}[{}]", named, i), schema,
                                problems);
        }
    }
    for (const Field& field : schema) {
        const std::string_view name = field.name;
        const std::size_t dot = name.rfind('.');
        const std::string_view parent = dot == std::string_view::npos ? "" : name.substr(0, dot);
        if (field.required && parent == prefix &&
            !object.contains(name.substr(parent.size() + !parent.empty())))
            problems.push_back(fmt::format("{}{}: missing", shown.empty() ? "" : shown + ".",
                                           name.substr(parent.size() + !parent.empty())));
    }
}

// The JSON Schema of a value of this type (without its description).
Json type_schema(std::string_view type) {
    const TypeParts parts = parts_of(type);
    Json schema = Json::object();
    const auto typed = [&](std::string_view name) {
        schema["type"] = parts.nullable ? Json{name, "null"} : Json(name);
    };
    switch (parts.kind) {
        case TypeParts::Kind::kArray:
            typed("array");
            schema["items"] = type_schema(parts.inner);
            return schema;
        case TypeParts::Kind::kMap:
            typed("object");
            schema["additionalProperties"] = type_schema(parts.inner);
            return schema;
        case TypeParts::Kind::kScalar:
            typed(parts.inner);
            if (parts.inner == "object") {
                schema["properties"] = Json::object();
                schema["required"] = Json::array();
                schema["additionalProperties"] = false;
            }
            return schema;
    }
    return schema;
}

// The JSON Schema of one field's value: its type, then its description (an object's properties
// after them).
Json value_schema(std::string_view type, std::string_view description) {
    Json schema = type_schema(type);
    Json ordered = Json::object();
    ordered["type"] = schema["type"];
    if (schema.contains("items")) ordered["items"] = schema["items"];
    ordered["description"] = description;
    for (const auto& [key, value] : schema.items())
        if (key != "type" && key != "items") ordered[key] = value;
    return ordered;
}

bool is_index(std::string_view step) {
    return !step.empty() && std::ranges::all_of(step, [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::vector<std::string> schema_problems(const Json& record, Schema schema) {
    std::vector<std::string> problems;
    if (!record.is_object())
        return {fmt::format("the record is {}, not an object", kind_of(record))};
    object_problems(record, "", "", schema, problems);
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
    // Walk the dotted steps: a key names a field below the one before; an index steps into an
    // array (of objects: its elements' fields follow; of values: nothing or another index
    // follows); any key steps into a map's value.
    std::string name;
    std::string_view element;  // inside an array or map of values: the element's type
    for (std::size_t start = 0; start <= dotted.size();) {
        const std::size_t dot = std::min(dotted.find('.', start), dotted.size());
        const std::string_view step = dotted.substr(start, dot - start);
        start = dot + 1;
        if (step.empty()) return false;
        if (!element.empty()) {
            const TypeParts parts = parts_of(element);
            if (parts.kind == TypeParts::Kind::kScalar) return false;
            if (parts.kind == TypeParts::Kind::kArray && !is_index(step)) return false;
            element = parts.inner;
            continue;
        }
        const Field* field = name.empty() ? nullptr : find_field(schema, name);
        if (field && parts_of(field->type).kind != TypeParts::Kind::kScalar) {
            if (is_object_array(field->type)) {
                if (!is_index(step)) return false;
                name += "[]";
                continue;
            }
            const TypeParts parts = parts_of(field->type);
            if (parts.kind == TypeParts::Kind::kArray && !is_index(step)) return false;
            element = parts.inner;
            continue;
        }
        name += (name.empty() ? "" : ".") + std::string(step);
        if (!find_field(schema, name)) return false;
    }
    return true;
}

std::vector<Field> fields_under(std::string_view prefix, Schema fields) {
    // A deque: its strings stay where they are as it grows.
    static std::deque<std::string> names;
    static std::mutex lock;
    const std::lock_guard<std::mutex> hold(lock);
    std::vector<Field> renamed;
    for (const Field& field : fields) {
        names.push_back(std::string(prefix) + "." + std::string(field.name));
        renamed.push_back(Field{names.back(), field.type, field.required, field.description});
    }
    return renamed;
}

Json schema_json(std::string_view title, std::string_view description, Schema schema) {
    Json root{{"$schema", "https://json-schema.org/draft/2020-12/schema"}, {"title", title}};
    root.update(value_schema("object", description));
    for (const Field& field : schema) {
        // Walk to the object holding the field (listed before it: the schema's order); the
        // fields of an array's objects ("ranks[].rank") are its items'.
        Json* holder = &root;
        std::string_view rest = field.name;
        for (std::size_t dot; (dot = rest.find('.')) != std::string_view::npos;
             rest = rest.substr(dot + 1)) {
            std::string_view step = rest.substr(0, dot);
            const bool items = step.ends_with("[]");
            if (items) step.remove_suffix(2);
            holder = &(*holder)["properties"][std::string(step)];
            if (items) holder = &(*holder)["items"];
        }
        (*holder)["properties"][std::string(rest)] = value_schema(field.type, field.description);
        if (field.required) (*holder)["required"].push_back(rest);
    }
    return root;
}

}  // namespace rdmalab::records
