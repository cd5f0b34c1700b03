// A merged trace's story and its run's meta: see story.hpp.
#include "story.hpp"

#include "merge.hpp"

#include <fmt/core.h>

#include <map>
#include <optional>

namespace rdmalab::trace_merge {

namespace {

// A field's text on one line: tabs and line breaks would split the story's fields.
std::string one_line(std::string text) {
    for (char& c : text)
        if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    return text;
}

std::string text_of(const std::optional<std::string>& text) {
    return text ? one_line(*text) : "-";
}

// The element an index link refers to, or null when it names none.
template <typename T>
const T* element(const std::vector<T>& list, const std::optional<std::size_t>& index) {
    return index && *index < list.size() ? &list[*index] : nullptr;
}

// Each of the packets' fields, comma-separated, or "-".
template <typename Field>
std::string joined(const std::vector<PacketRecord>& packets,
                   const std::optional<std::vector<std::size_t>>& indices, Field field) {
    if (!indices || indices->empty()) return "-";
    std::string text;
    for (const std::size_t index : *indices)
        text += (text.empty() ? "" : ",") +
                (index < packets.size() ? one_line(field(packets[index])) : std::string("-"));
    return text;
}

std::string role_of(const TraceMeta& meta, const std::string& host) {
    if (meta.roles) {
        const auto role = meta.roles->find(host);
        if (role != meta.roles->end()) return one_line(role->second);
    }
    if (meta.server == host) return "server";
    if (meta.client == host) return "client";
    return "-";
}

std::string post_line(const Trace& trace, const EventRecord& post) {
    const PacketRecord* ack = element(trace.packets, post.acked_by);
    const EventRecord* done = element(trace.events, post.completion);
    std::string completion = "-", by_ack = "-";
    if (done) {
        completion = done->fields.ok.value_or(false) ? "ok" : "failed";
        if (post.acked_by && done->caused_by == post.acked_by) by_ack = "by-ack";
    }
    return fmt::format(
        "post\t{}\t{}\t{}\t{}\t{}\t{}\t{}", one_line(post.fields.host), text_of(post.fields.opcode),
        joined(trace.packets, post.packets,
               [](const PacketRecord& p) { return p.packet.opcode_name(); }),
        joined(trace.packets, post.packets, [](const PacketRecord& p) { return p.to; }),
        ack ? one_line(ack->from) + " " + one_line(ack->packet.opcode_name()) : "-", completion,
        by_ack);
}

std::string completion_line(const Trace& trace, const EventRecord& done) {
    const PacketRecord* cause = element(trace.packets, done.caused_by);
    const EventRecord* wr = cause ? element(trace.events, cause->wr) : nullptr;
    return fmt::format(
        "completion\t{}\t{}\t{}\t{}\t{}", one_line(done.fields.host), text_of(done.fields.opcode),
        done.fields.ok.value_or(false) ? "ok" : "failed", cause ? one_line(cause->from) : "-",
        wr ? one_line(wr->fields.host) + " " + text_of(wr->fields.opcode) : "-");
}

}  // namespace

std::pair<std::string, std::string> environment_pair(const std::string& text) {
    const std::size_t equals = text.find('=');
    if (equals == std::string::npos || equals == 0)
        throw InputError(fmt::format("--environment '{}': not KEY=VALUE", text));
    return {text.substr(0, equals), text.substr(equals + 1)};
}

TraceMeta trace_meta(const RunMeta& run) {
    TraceMeta meta{.lesson = run.lesson, .arguments = run.arguments};
    if (run.ranks > 0) {
        meta.ranks = run.ranks;
        meta.roles.emplace();
        for (int h = 1; h <= run.host_count; ++h)
            (*meta.roles)[fmt::format("host{}", h)] = fmt::format("rank {}", h - 1);
    } else {
        meta.server = "host1";
        meta.client = "host2";
    }
    meta.environment.emplace(run.environment.begin(), run.environment.end());
    return meta;
}

std::vector<std::string> story_lines(const Trace& trace) {
    std::vector<std::string> lines;
    lines.push_back(fmt::format("format\t{}\t{}\t{}", one_line(trace.format), trace.version,
                                trace.packet_schema_version));
    for (const HostRecord& host : trace.hosts)
        lines.push_back(
            fmt::format("host\t{}\t{}", one_line(host.name), role_of(trace.meta, host.name)));
    if (trace.meta.environment)
        for (const auto& [key, value] : *trace.meta.environment)
            lines.push_back(fmt::format("environment\t{}\t{}", key, one_line(value)));

    std::size_t timed_both = 0;
    std::map<std::string, std::size_t> resent;
    for (const PacketRecord& packet : trace.packets) {
        if (packet.tx_ns && packet.rx_ns) ++timed_both;
        if (packet.packet.sent_again) ++resent[one_line(packet.packet.transport())];
    }
    lines.push_back(fmt::format("clock\t{}\t{}",
                                trace.clock.unaligned.value_or(std::vector<std::string>{}).size(),
                                trace.packets.size() - timed_both));
    const std::vector<TimelineEntry>& timeline = trace.timeline;
    bool ordered = true;
    for (std::size_t i = 1; i < timeline.size(); ++i)
        ordered = ordered && timeline[i].t_ns >= timeline[i - 1].t_ns;
    lines.push_back(fmt::format(
        "timeline\t{}\t{}\t{} entries, {} events, {} packets seen sent and received",
        ordered ? "ordered" : "unordered",
        timeline.size() == trace.events.size() + 2 * timed_both ? "complete" : "incomplete",
        timeline.size(), trace.events.size(), timed_both));
    for (const EventRecord& event : trace.events) {
        const std::string& kind = event.fields.event;
        if (kind == "post_send") lines.push_back(post_line(trace, event));
        if (kind == "completion") lines.push_back(completion_line(trace, event));
        if (kind == "step")
            lines.push_back(fmt::format("step\t{}\t{}", one_line(event.fields.host),
                                        text_of(event.fields.text)));
    }
    for (const auto& [transport, count] : resent)
        lines.push_back(fmt::format("resent\t{}\t{}", transport, count));
    return lines;
}

}  // namespace rdmalab::trace_merge
