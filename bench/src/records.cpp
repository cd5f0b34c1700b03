// Result records as JSON and CSV: see records.hpp.
#include "rdmalab/bench/records.hpp"

#include "rdmalab/error.hpp"

#include <fmt/core.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <sstream>

namespace rdmalab::bench {

namespace {

void flatten(const Record& value, const std::string& prefix,
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

}  // namespace

Record host_environment(const std::string& tool_version) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    utsname system{};
    uname(&system);
    std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return Record{
        {"host", host}, {"kernel", system.release}, {"date", date}, {"tool_version", tool_version}};
}

std::string to_json(const std::vector<Record>& records) {
    Record document = {{"records", records}};
    return document.dump(2) + "\n";
}

std::string to_csv(const std::vector<Record>& records) {
    std::vector<std::string> columns;
    std::vector<std::vector<std::pair<std::string, std::string>>> rows;
    for (const Record& record : records) {
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

Record parse_json(std::string_view text, std::string_view what) {
    bool too_deep = false;
    // Values deeper than the limit are dropped as they are parsed (the parser itself keeps its
    // own stack): even building them would copy them recursively.
    const Record::parser_callback_t limit = [&too_deep](int depth, Record::parse_event_t event,
                                                        Record&) {
        // depth counts the containers around this one: 0 for the outermost.
        const bool container = event == Record::parse_event_t::object_start ||
                               event == Record::parse_event_t::array_start;
        if (!container || depth < kMaxJsonDepth) return true;
        too_deep = true;
        return false;
    };
    Record value;
    try {
        value = Record::parse(text, limit);
    } catch (const nlohmann::json::exception& e) {
        fail(fmt::format("{} is not valid JSON: {}", what, e.what()));
    }
    if (too_deep) fail(fmt::format("{} is nested deeper than {} levels", what, kMaxJsonDepth));
    return value;
}

std::vector<Record> read_json_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) fail(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    if (in.bad()) fail(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
    Record document = parse_json(text, path);
    if (!document.is_object() || !document.contains("records") || !document["records"].is_array())
        fail(fmt::format("{} has no \"records\" array: not an rdma-bench result file", path));
    return document["records"].get<std::vector<Record>>();
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

}  // namespace rdmalab::bench
