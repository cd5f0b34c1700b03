// Json files as JSON and CSV, and reading their fields: see document.hpp.
#include "rdmalab/records/document.hpp"

#include "rdmalab/records/bench.hpp"
#include "rdmalab/records/tool_documents.hpp"

#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <ostream>
#include <sstream>

namespace rdmalab::records {

namespace {

void flatten(const Json& value, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& out) {
    if (value.is_object()) {
        for (const auto& [key, item] : value.items())
            flatten(item, prefix.empty() ? key : prefix + "." + key, out);
        return;
    }
    out.emplace_back(prefix, value.is_string() ? value.get<std::string>() : value.dump());
}

std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
    std::string quoted = "\"";
    for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

std::string_view kind_of(const Json& value) {
    switch (value.type()) {
        case Json::value_t::object:
            return "an object";
        case Json::value_t::array:
            return "an array";
        case Json::value_t::string:
            return "a string";
        case Json::value_t::boolean:
            return "a boolean";
        case Json::value_t::null:
            return "null";
        default:
            return "a number";
    }
}

// The keys of an object, for "no such field" messages: the first few, then how many more.
std::string key_list(const Json& object) {
    std::string keys;
    std::size_t shown = 0;
    for (const auto& [key, value] : object.items()) {
        if (shown == 8) return fmt::format("{}, … ({} in all)", keys, object.size());
        keys += (shown++ ? ", " : "") + key;
    }
    return keys.empty() ? "none" : keys;
}

bool is_index(const std::string& step) {
    return !step.empty() && step.size() <= 9 && (step == "0" || step[0] != '0') &&
           std::all_of(step.begin(), step.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Walks steps[at...] from value (reached by `where`), appending what it reaches to out.
void select_from(const Json& value, const JsonPath& path, std::size_t at, const std::string& where,
                 bool below_wildcard, std::vector<Json>& out) {
    if (at == path.steps.size()) {
        out.push_back(value);
        return;
    }
    const std::string& step = path.steps[at];
    const std::string next = where.empty() ? step : where + "/" + step;
    const std::string here = where.empty() ? "the document" : where;
    if (!value.is_object() && !value.is_array())
        fail(fmt::format("{}: {} is {}, not an object or array", path.text, here, kind_of(value)));
    if (step == "*") {
        std::size_t i = 0;
        for (const auto& [key, item] : value.items()) {
            const std::string name = value.is_array() ? std::to_string(i++) : key;
            select_from(item, path, at + 1, where.empty() ? name : where + "/" + name, true, out);
        }
        return;
    }
    if (value.is_object()) {
        if (value.contains(step))
            return select_from(value[step], path, at + 1, next, below_wildcard, out);
        if (below_wildcard) return out.push_back(nullptr);
        fail(fmt::format("{}: {} has no field '{}' (it has {})", path.text, here, step,
                         key_list(value)));
    }
    if (!is_index(step))
        fail(fmt::format("{}: '{}' is not an index ({} is an array of {})", path.text, step, here,
                         value.size()));
    const std::size_t index = std::stoul(step);
    if (index < value.size())
        return select_from(value[index], path, at + 1, next, below_wildcard, out);
    if (below_wildcard) return out.push_back(nullptr);
    fail(fmt::format("{}: index {} is out of range ({} has {} element{})", path.text, index, here,
                     value.size(), value.size() == 1 ? "" : "s"));
}

// A path into a result file names a field of the records' schema: "records/*/result/recever/lost"
// is refused by name, not answered with nulls. Steps from `first` on (below a record, or a tool's
// whole document) are checked as dotted names; '*' over an array field stands for an element,
// over an object for any member (all in the schema). The file was read through its types, so
// each record or document has a schema.
void check_schema_path(const JsonPath& path, std::size_t first,
                       const std::vector<Schema>& schemas) {
    if (path.steps.size() <= first || schemas.empty()) return;
    std::string dotted;
    for (std::size_t i = first; i < path.steps.size(); ++i) {
        const std::string& step = path.steps[i];
        if (step == "*") {
            const bool array = std::ranges::any_of(
                schemas, [&](Schema s) { return names_field(s, dotted + ".0"); });
            if (!array) return;
            dotted += ".0";
            continue;
        }
        dotted += (dotted.empty() ? "" : ".") + step;
    }
    if (std::ranges::any_of(schemas, [&](Schema s) { return names_field(s, dotted); })) return;
    fail(fmt::format("{}: the {} no field {} (their schemas: records/schema/)", path.text,
                     first == 0 ? "document has" : "records have", dotted));
}

void check_record_path(const JsonPath& path, const Json& records) {
    if (path.steps.size() < 3 || !records.is_array() || records.empty()) return;
    std::vector<Schema> schemas;
    for (std::size_t i = 0; i < records.size(); ++i) {
        const Schema schema = schema_of(records[i], fmt::format("record {}", i));
        if (std::ranges::none_of(schemas, [&](Schema s) { return s.data() == schema.data(); }))
            schemas.push_back(schema);
    }
    check_schema_path(path, 2, schemas);
}

}  // namespace

std::string to_json(const std::vector<Json>& records) {
    Json document = {{"records", records}};
    return document.dump(2) + "\n";
}

std::string to_csv(const std::vector<Json>& records) {
    std::vector<std::string> columns;
    std::vector<std::vector<std::pair<std::string, std::string>>> rows;
    for (const Json& record : records) {
        rows.emplace_back();
        flatten(record, "", rows.back());
        for (const auto& [key, value] : rows.back())
            if (std::find(columns.begin(), columns.end(), key) == columns.end())
                columns.push_back(key);
    }
    std::string csv;
    for (std::size_t i = 0; i < columns.size(); ++i) csv += (i ? "," : "") + csv_field(columns[i]);
    csv += "\n";
    for (const auto& row : rows) {
        for (std::size_t i = 0; i < columns.size(); ++i) {
            if (i) csv += ",";
            for (const auto& [key, value] : row)
                if (key == columns[i]) {
                    csv += csv_field(value);
                    break;
                }
        }
        csv += "\n";
    }
    return csv;
}

Json parse_json(std::string_view text, std::string_view what) {
    bool too_deep = false;
    // Values deeper than the limit are dropped as they are parsed (the parser itself keeps its
    // own stack): even building them would copy them recursively.
    const Json::parser_callback_t limit = [&too_deep](int depth, Json::parse_event_t event, Json&) {
        // depth counts the containers around this one: 0 for the outermost.
        const bool container =
            event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start;
        if (!container || depth < kMaxJsonDepth) return true;
        too_deep = true;
        return false;
    };
    Json value;
    try {
        value = Json::parse(text, limit);
    } catch (const nlohmann::json::exception& e) {
        fail(fmt::format("{} is not valid JSON: {}", what, e.what()));
    }
    if (too_deep) fail(fmt::format("{} is nested deeper than {} levels", what, kMaxJsonDepth));
    return value;
}

std::vector<Json> read_json_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) fail(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    if (in.bad()) fail(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
    Json document = parse_json(text, path);
    if (!document.is_object() || !document.contains("records") || !document["records"].is_array())
        fail(fmt::format("{} has no \"records\" array: not an rdma-bench result file", path));
    return document["records"].get<std::vector<Json>>();
}

JsonPath parse_path(std::string_view text) {
    const auto bad = [text](std::string_view why) {
        fail(
            fmt::format("bad path '{}': {} (steps are keys or indices separated by one '/', "
                        "'*' for every element: records/0/result/gib_per_s)",
                        text, why));
    };
    if (text.empty()) bad("it is empty");
    JsonPath path{std::string(text), {}};
    std::size_t start = 0;
    while (true) {
        const std::size_t slash = text.find('/', start);
        const std::string_view step = text.substr(start, slash - start);
        if (step.empty()) bad("an empty step");
        path.steps.emplace_back(step);
        if (slash == std::string_view::npos) break;
        start = slash + 1;
    }
    return path;
}

std::vector<Json> select_values(const Json& document, const JsonPath& path) {
    std::vector<Json> out;
    select_from(document, path, 0, "", false, out);
    return out;
}

std::string value_line(const Json& value, bool raw) {
    if (raw && value.is_string()) {
        const std::string& text = value.get_ref<const std::string&>();
        if (text.find_first_of("\n\r") == std::string::npos) return text;
    }
    return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

int read_fields(const ReadRequest& request, std::string_view program, std::ostream& out,
                std::ostream& err) {
    std::string lines;
    try {
        Json document;
        std::vector<Schema> document_schemas;  // a tool's document's
        if (request.records) {
            document = Json{{"records", read_record_file(request.file)}};
        } else {
            document = read_document_file(request.file);
            document_schemas.push_back(document_schema(document, request.file));
        }
        if (request.queries.empty()) fail("nothing asked: give --get PATH or --count PATH");
        for (const FieldQuery& query : request.queries) {
            const JsonPath path = parse_path(query.path);
            std::vector<Json> values;
            try {
                if (request.records)
                    check_record_path(path, document["records"]);
                else
                    check_schema_path(path, 0, document_schemas);
                values = select_values(document, path);
            } catch (const Error& e) {
                fail(fmt::format("{}: {}", request.file, e.what()));
            }
            for (const Json& value : values) {
                if (query.kind == FieldQuery::Kind::kGet) {
                    lines += value_line(value, request.raw) + "\n";
                } else if (value.is_array() || value.is_object()) {
                    lines += std::to_string(value.size()) + "\n";
                } else {
                    fail(fmt::format("{}: --count {}: {}, not an array or object", request.file,
                                     query.path, kind_of(value)));
                }
            }
        }
    } catch (const Error& e) {
        err << program << ": " << e.what() << "\n";
        err.flush();
        return 2;
    }
    out << lines;
    out.flush();
    return 0;
}

void write_file(const std::string& path, const std::string& contents) {
    const std::string temporary = path + ".tmp";
    {
        std::ofstream out(temporary, std::ios::trunc);
        if (!out) fail(fmt::format("cannot write {}: {}", temporary, std::strerror(errno)));
        out << contents;
        out.flush();
        if (!out) fail(fmt::format("writing {} failed: {}", temporary, std::strerror(errno)));
    }
    if (std::rename(temporary.c_str(), path.c_str()) != 0)
        fail(fmt::format("cannot rename {} to {}: {}", temporary, path, std::strerror(errno)));
}

}  // namespace rdmalab::records
