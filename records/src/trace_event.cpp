// A program trace's line read back: see trace_event.hpp.
#include "rdmalab/records/trace_event.hpp"

#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <type_traits>

namespace rdmalab::records {

namespace {

const Field kTime = {"t_ns", "integer", true, "CLOCK_REALTIME, ns since the epoch"};
const Field kHost = {"host", "string", true, "the host that wrote it (\"host1\")"};
const Field kQp = {"qp_num", "integer", false, "the local QP"};
const Field kWrId = {"wr_id", "integer", true, "the WR's id, as the program gave it"};
const Field kLength = {"length", "integer", false, "bytes: the WR's scatter/gather list's sum"};
const Field kSges = {"num_sge", "integer", false, "entries in its scatter/gather list"};
const Field kImm = {"imm", "string", false, "the immediate data, hexadecimal, host order"};

std::vector<Field> kind_fields(std::string_view kind, std::string_view meaning,
                               std::vector<Field> fields) {
    // The descriptions live as long as the program: the kinds' schemas are built once.
    static std::deque<std::string> descriptions;  // its strings stay where they are
    descriptions.push_back(fmt::format("\"{}\": {}", kind, meaning));
    fields.insert(fields.begin(), {kTime, kHost, {"event", "string", true, descriptions.back()}});
    std::ranges::sort(fields, {}, &Field::name);
    return fields;
}

const std::map<std::string_view, std::vector<Field>>& schemas() {
    static const std::map<std::string_view, std::vector<Field>> by_kind = {
        {"trace_start", kind_fields("trace_start", "the first line, once",
                                    {{"format", "string", true, "\"rdmalab-program-trace\""},
                                     {"version", "integer", true, "the format's version (1)"},
                                     {"clock", "string", false, "\"CLOCK_REALTIME\""},
                                     {"pid", "integer", false, "the process"}})},
        {"post_send",
         kind_fields("post_send", "an ibv_post_send WR, just before the call",
                     {kQp,
                      {"dest_qp", "integer", false, "the QP its packets are addressed to"},
                      kWrId,
                      {"opcode", "string", false, "the WR's opcode (\"RDMA_WRITE\")"},
                      kLength,
                      kSges,
                      {"signaled", "boolean", false, "IBV_SEND_SIGNALED"},
                      {"inline", "boolean", false, "IBV_SEND_INLINE"},
                      {"fence", "boolean", false, "IBV_SEND_FENCE"},
                      {"remote_addr", "string", false, "RDMA and atomics: hexadecimal"},
                      {"rkey", "string", false, "RDMA and atomics: hexadecimal"},
                      {"compare_add", "integer", false, "atomics: the compare or add operand"},
                      {"swap", "integer", false, "atomics: the swap operand"},
                      kImm})},
        {"post_recv", kind_fields("post_recv", "an ibv_post_recv WR, just before the call",
                                  {kQp, kWrId, kLength, kSges})},
        {"completion",
         kind_fields(
             "completion", "a work completion polled",
             {kQp,
              kWrId,
              {"status", "string", false, "\"IBV_WC_SUCCESS\", or how it failed"},
              {"ok", "boolean", false, "it succeeded"},
              {"opcode", "string", false, "a successful one's opcode (\"RECV\")"},
              {"byte_len", "integer", false, "a successful one's bytes"},
              kImm,
              {"vendor_err", "string", false, "a failed one's vendor error, hexadecimal"}})},
        {"step", kind_fields("step", "a program's own named step",
                             {{"text", "string", true, "what it did"}})},
        {"cm_event", kind_fields("cm_event", "an rdma_cm event",
                                 {{"name", "string", true, "\"RDMA_CM_EVENT_ESTABLISHED\""},
                                  {"status", "integer", true, "the event's status"}})},
        {"modify_qp", kind_fields("modify_qp", "a QP state transition",
                                  {{"qp_num", "integer", true, "the QP"},
                                   {"from", "string", true, "the state before (\"INIT\")"},
                                   {"to", "string", true, "the state after (\"RTR\")"}})},
    };
    return by_kind;
}

// A field as T when there, refused by name when its value is out of T's range.
template <typename T>
std::optional<T> read(const Json& line, const char* key, const std::string& where) {
    if (!line.contains(key)) return std::nullopt;
    const Json& value = line[key];
    if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, bool>) {
        return value.get<T>();
    } else {
        // The schema has checked it is an integer; a negative one fits a signed field only, and
        // one beyond int64 (parsed as unsigned) no signed field.
        const bool negative = !value.is_number_unsigned() && value.get<std::int64_t>() < 0;
        const bool fits = negative ? std::is_signed_v<T>
                                   : value.get<std::uint64_t>() <=
                                         static_cast<std::uint64_t>(std::numeric_limits<T>::max());
        if (!fits)
            fail(fmt::format("{}: {}: {}, not {}", where, key, value.dump(),
                             std::is_signed_v<T> ? "an integer"
                             : sizeof(T) == 4    ? "a 32-bit unsigned integer"
                                                 : "an unsigned integer"));
        return value.get<T>();
    }
}

}  // namespace

const std::vector<std::string_view>& trace_event_kinds() {
    static const std::vector<std::string_view> kinds = {
        "trace_start", "post_send", "post_recv", "completion", "step", "cm_event", "modify_qp"};
    return kinds;
}

Schema trace_event_schema(std::string_view kind) {
    const auto found = schemas().find(kind);
    return found == schemas().end() ? Schema{} : Schema(found->second);
}

trace::Event trace_event_from_json(const Json& line, const std::string& where) {
    if (!line.is_object()) fail(fmt::format("{}: not a JSON object", where));
    if (!line.contains("event")) fail(fmt::format("{}: event: missing", where));
    const Json& kind = line["event"];
    if (!kind.is_string() || trace_event_schema(kind.get<std::string>()).empty())
        fail(
            fmt::format("{}: event: {} is not a kind of event (trace_start, post_send, "
                        "post_recv, completion, step, cm_event, modify_qp)",
                        where, kind.dump()));
    const std::string event = kind.get<std::string>();
    check_schema(line, trace_event_schema(event), where);
    trace::Event e{.t_ns = *read<std::int64_t>(line, "t_ns", where),
                   .host = line["host"].get<std::string>(),
                   .event = event};
    e.format = read<std::string>(line, "format", where);
    e.version = read<std::int64_t>(line, "version", where);
    e.clock = read<std::string>(line, "clock", where);
    e.pid = read<std::int64_t>(line, "pid", where);
    e.qp_num = read<std::uint32_t>(line, "qp_num", where);
    e.dest_qp = read<std::uint32_t>(line, "dest_qp", where);
    e.wr_id = read<std::uint64_t>(line, "wr_id", where);
    e.opcode = read<std::string>(line, "opcode", where);
    e.length = read<std::uint64_t>(line, "length", where);
    e.num_sge = read<std::int64_t>(line, "num_sge", where);
    e.signaled = read<bool>(line, "signaled", where);
    e.inline_data = read<bool>(line, "inline", where);
    e.fence = read<bool>(line, "fence", where);
    e.remote_addr = read<std::string>(line, "remote_addr", where);
    e.rkey = read<std::string>(line, "rkey", where);
    e.compare_add = read<std::uint64_t>(line, "compare_add", where);
    e.swap = read<std::uint64_t>(line, "swap", where);
    e.imm = read<std::string>(line, "imm", where);
    if (event == "cm_event")
        e.cm_status = read<std::int64_t>(line, "status", where);
    else
        e.status = read<std::string>(line, "status", where);
    e.ok = read<bool>(line, "ok", where);
    e.byte_len = read<std::uint32_t>(line, "byte_len", where);
    e.vendor_err = read<std::string>(line, "vendor_err", where);
    e.text = read<std::string>(line, "text", where);
    e.name = read<std::string>(line, "name", where);
    e.from = read<std::string>(line, "from", where);
    e.to = read<std::string>(line, "to", where);
    return e;
}

Json trace_event_schema_json() {
    Json kinds = Json::array();
    for (const std::string_view kind : trace_event_kinds()) {
        Json one = schema_json(kind, fmt::format("a {} line", kind), trace_event_schema(kind));
        one.erase("$schema");
        one["properties"]["event"]["const"] = kind;
        kinds.push_back(std::move(one));
    }
    Json root{{"$schema", "https://json-schema.org/draft/2020-12/schema"},
              {"title", "rdmalab program trace line"},
              {"description",
               "one line of a program's --trace file (format rdmalab-program-trace, version 1; "
               "common/trace_event.hpp, records/trace_event.hpp), one kind of event each"},
              {"oneOf", std::move(kinds)}};
    return root;
}

}  // namespace rdmalab::records
