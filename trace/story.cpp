// A merged trace's story and its run's meta: see story.hpp.
#include "story.hpp"

#include "merge.hpp"

#include <fmt/core.h>

#include <map>

namespace rdmalab::trace_merge {

using nlohmann::json;

namespace {

// A field's text on one line: tabs and line breaks would split the story's fields.
std::string one_line(std::string text) {
    for (char& c : text)
        if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    return text;
}

std::string text_at(const json& object, const char* key) {
    if (!object.is_object() || !object.contains(key)) return "-";
    const json& value = object[key];
    return one_line(value.is_string() ? value.get<std::string>() : value.dump());
}

// The element index refers to, or null when it names none.
const json& element(const json& array, const json& object, const char* key) {
    static const json kNone;
    if (!object.contains(key) || !object[key].is_number_unsigned()) return kNone;
    const std::size_t index = object[key].get<std::size_t>();
    return index < array.size() ? array[index] : kNone;
}

std::string joined(const json& packets, const json& indices, const char* key) {
    if (!indices.is_array() || indices.empty()) return "-";
    std::string text;
    for (const json& index : indices) {
        const json& packet = index.is_number_unsigned() && index.get<std::size_t>() < packets.size()
                                 ? packets[index.get<std::size_t>()]
                                 : json();
        text += (text.empty() ? "" : ",") + text_at(packet, key);
    }
    return text;
}

std::string role_of(const json& meta, const std::string& host) {
    if (meta.contains("roles") && meta["roles"].contains(host))
        return text_at(meta["roles"], host.c_str());
    if (text_at(meta, "server") == host) return "server";
    if (text_at(meta, "client") == host) return "client";
    return "-";
}

std::string post_line(const json& trace, const json& post) {
    const json& events = trace["events"];
    const json& packets = trace["packets"];
    const json& ack = element(packets, post, "acked_by");
    const json& done = element(events, post, "completion");
    std::string completion = "-", by_ack = "-";
    if (done.is_object()) {
        completion = done.value("ok", false) ? "ok" : "failed";
        if (post.contains("acked_by") && done.contains("caused_by") &&
            done["caused_by"] == post["acked_by"])
            by_ack = "by-ack";
    }
    return fmt::format(
        "post\t{}\t{}\t{}\t{}\t{}\t{}\t{}", text_at(post, "host"), text_at(post, "opcode"),
        joined(packets, post.value("packets", json()), "opcode_name"),
        joined(packets, post.value("packets", json()), "to"),
        ack.is_object() ? text_at(ack, "from") + " " + text_at(ack, "opcode_name") : "-",
        completion, by_ack);
}

std::string completion_line(const json& trace, const json& done) {
    const json& cause = element(trace["packets"], done, "caused_by");
    const json& wr = cause.is_object() ? element(trace["events"], cause, "wr") : json();
    return fmt::format("completion\t{}\t{}\t{}\t{}\t{}", text_at(done, "host"),
                       text_at(done, "opcode"), done.value("ok", false) ? "ok" : "failed",
                       cause.is_object() ? text_at(cause, "from") : "-",
                       wr.is_object() ? text_at(wr, "host") + " " + text_at(wr, "opcode") : "-");
}

}  // namespace

std::pair<std::string, std::string> environment_pair(const std::string& text) {
    const std::size_t equals = text.find('=');
    if (equals == std::string::npos || equals == 0)
        throw InputError(fmt::format("--environment '{}': not KEY=VALUE", text));
    return {text.substr(0, equals), text.substr(equals + 1)};
}

json meta_json(const RunMeta& run) {
    json meta{{"lesson", run.lesson}, {"arguments", run.arguments}};
    if (run.ranks > 0) {
        meta["ranks"] = run.ranks;
        meta["roles"] = json::object();
        for (int h = 1; h <= run.host_count; ++h)
            meta["roles"][fmt::format("host{}", h)] = fmt::format("rank {}", h - 1);
    } else {
        meta["server"] = "host1";
        meta["client"] = "host2";
    }
    meta["environment"] = json::object();
    for (const auto& [key, value] : run.environment) meta["environment"][key] = value;
    return meta;
}

std::vector<std::string> story_lines(const json& trace) {
    if (!trace.is_object() || trace.value("format", "") != "rdmalab-trace" ||
        !trace.contains("events") || !trace["events"].is_array() || !trace.contains("packets") ||
        !trace["packets"].is_array())
        throw InputError("not an rdmalab trace (format rdmalab-trace, with events and packets)");
    const json& events = trace["events"];
    const json& packets = trace["packets"];
    const json meta = trace.value("meta", json::object());
    std::vector<std::string> lines;
    lines.push_back(fmt::format("format\t{}\t{}\t{}", text_at(trace, "format"),
                                text_at(trace, "version"),
                                text_at(trace, "packet_schema_version")));
    for (const json& host : trace.value("hosts", json::array()))
        lines.push_back(fmt::format("host\t{}\t{}", text_at(host, "name"),
                                    role_of(meta, text_at(host, "name"))));
    const json environment = meta.value("environment", json::object());
    for (const auto& [key, value] : environment.items())
        if (value.is_string())
            lines.push_back(fmt::format("environment\t{}\t{}", key, one_line(value)));

    std::size_t timed_both = 0;
    std::map<std::string, std::size_t> resent;
    for (const json& packet : packets) {
        if (packet.value("tx_ns", json()).is_number() && packet.value("rx_ns", json()).is_number())
            ++timed_both;
        if (packet.value("sent_again", false)) ++resent[text_at(packet, "transport")];
    }
    const json clock = trace.value("clock", json::object());
    lines.push_back(fmt::format("clock\t{}\t{}", clock.value("unaligned", json::array()).size(),
                                packets.size() - timed_both));
    const json timeline = trace.value("timeline", json::array());
    bool ordered = true;
    for (std::size_t i = 1; i < timeline.size(); ++i)
        ordered = ordered && timeline[i].value("t_ns", 0.0) >= timeline[i - 1].value("t_ns", 0.0);
    lines.push_back(
        fmt::format("timeline\t{}\t{}\t{} entries, {} events, {} packets seen sent and received",
                    ordered ? "ordered" : "unordered",
                    timeline.size() == events.size() + 2 * timed_both ? "complete" : "incomplete",
                    timeline.size(), events.size(), timed_both));
    for (const json& event : events) {
        const std::string kind = text_at(event, "event");
        if (kind == "post_send") lines.push_back(post_line(trace, event));
        if (kind == "completion") lines.push_back(completion_line(trace, event));
        if (kind == "step")
            lines.push_back(
                fmt::format("step\t{}\t{}", text_at(event, "host"), text_at(event, "text")));
    }
    for (const auto& [transport, count] : resent)
        lines.push_back(fmt::format("resent\t{}\t{}", transport, count));
    return lines;
}

}  // namespace rdmalab::trace_merge
