// rdma-bench's record and the result files' typed reader: see bench.hpp.
#include "rdmalab/records/bench.hpp"

#include "rdmalab/error.hpp"
#include "rdmalab/records/allreduce.hpp"
#include "rdmalab/records/transfer.hpp"

#include <fmt/core.h>

#include <utility>

namespace rdmalab::records {

namespace {

std::vector<Field> bench_fields() {
    std::vector<Field> fields = {
        {"tool", "string", true, "the program and its version (\"rdma-bench 0.1\")"},
        {"config", "object", true, "the knobs, as rdma-bench's options name them"},
        {"config.op", "string", true, "the operation: write, read, send, write-imm, fadd, cswap"},
        {"config.transport", "string", true, "RC, UC or UD"},
        {"config.mode", "string", true, "bw (bandwidth and message rate) or lat (latency)"},
        {"config.size", "integer", true, "message size, bytes"},
        {"config.window", "integer", true, "operations outstanding per QP"},
        {"config.qps", "integer", true, "queue pairs"},
        {"config.post_list", "integer", true, "work requests per post"},
        {"config.signal_every", "integer", true, "one signaled completion per this many"},
        {"config.inline", "integer", true, "inline threshold, bytes (0: none)"},
        {"config.sge", "integer", true, "scatter/gather elements per work request"},
        {"config.srq", "boolean", false, "a shared receive queue"},
        {"config.shared_cq", "boolean", false, "one completion queue for all QPs"},
        {"config.events", "boolean", false, "completion events instead of busy polling"},
        {"config.iters", "integer", true, "iterations (when no duration is given)"},
        {"config.duration_s", "number", true, "the timed phase's length, s (0: iters)"},
        {"config.warmup", "integer", true, "untimed operations first"},
        {"config.memory", "string", true, "the client's memory (\"host\", \"cuda:0\")"},
        {"config.server_memory", "string", false, "the server's memory"},
        {"config.api", "string", false, "how the client posted: classic or ex (ibv_wr_*)"},
        {"memory", "object", false, "how each side's buffer was had and registered"},
        {"memory.client", "object", true, "the client's buffer"},
        {"memory.client.memory", "string", true, "its memory kind"},
        {"memory.client.path", "string", true, "how it was registered (host, dma-buf, …)"},
        {"memory.client.where", "string", true, "where it lives, in words"},
        {"memory.client.staging_copies", "string", true, "none, per phase or per message"},
        {"memory.client.copies_in_timed_loop", "integer", true, "staging copies timed"},
        {"memory.server", "object", true, "the server's buffer"},
        {"memory.server.memory", "string", true, "its memory kind"},
        {"memory.server.path", "string", true, "how it was registered"},
        {"memory.server.where", "string", true, "where it lives, in words"},
        {"memory.server.staging_copies", "string", true, "none, per phase or per message"},
        {"memory.server.copies_in_timed_loop", "integer", true, "staging copies timed"},
        {"memory.note", "string", false, "what the staging copies mean for the rates"},
        {"result", "object", true, "what was measured"},
        {"result.ops", "integer", false, "bw: operations completed in the timed phase"},
        {"result.bytes", "integer", false, "bw: their payload bytes"},
        {"result.seconds", "number", false, "bw: the timed phase, s"},
        {"result.gib_per_s", "number", false, "bw: payload GiB/s"},
        {"result.gb_per_s", "number", false, "bw: payload Gbit/s"},
        {"result.mops", "number", false, "bw: million operations a second"},
        {"result.receiver", "object", false, "bw, two-sided: what the target received"},
        {"result.receiver.messages", "integer", true, "messages received"},
        {"result.receiver.bytes", "integer", true, "their bytes"},
        {"result.receiver.lost", "integer", true, "sent but not received (UC, UD)"},
        {"result.receiver.seconds", "number", true, "the target's timed phase, s"},
        {"result.receiver.mops", "number", true, "million messages a second received"},
        {"result.receiver.gib_per_s", "number", true, "GiB/s received"},
        {"result.atomic_counter", "integer", false, "fetch-and-add: the target's counter"},
        {"result.verified", "boolean", false, "the data was checked, and right"},
        {"result.latency", "object", false, "lat: the samples"},
        {"result.latency.reported_as", "string", true, "\"half round trip\" or \"round trip\""},
        {"result.latency.samples", "integer", true, "samples taken"},
        {"result.latency.min_us", "number", true, "µs"},
        {"result.latency.median_us", "number", true, "µs"},
        {"result.latency.mean_us", "number", true, "µs"},
        {"result.latency.stdev_us", "number", true, "µs"},
        {"result.latency.p99_us", "number", true, "µs"},
        {"result.latency.p999_us", "number", true, "µs"},
        {"result.latency.max_us", "number", true, "µs"},
        {"result.cpu", "object", true, "CPU time each side spent"},
        {"result.cpu.client_s", "number", true, "the client's CPU seconds"},
        {"result.cpu.server_s", "number", true, "the server's CPU seconds"},
        {"result.cpu.client_us_per_op", "number", true, "client CPU µs per operation"},
        {"result.cpu.server_us_per_op", "number", true, "server CPU µs per operation"},
        {"result.cpu.client_utilization", "number", true, "client CPU / elapsed"},
        {"result.cpu.server_utilization", "number", true, "server CPU / elapsed"},
    };
    fields.insert(fields.end(), environment_fields().begin(), environment_fields().end());
    return fields;
}

template <typename T>
void put(Json& object, const char* key, const std::optional<T>& value) {
    if (value) object[key] = *value;
}
template <typename T>
std::optional<T> optional_at(const Json& object, const char* key) {
    if (!object.contains(key)) return std::nullopt;
    return object[key].get<T>();
}

Json to_json(const BenchMemorySide& side) {
    return Json{{"memory", side.memory},
                {"path", side.path},
                {"where", side.where},
                {"staging_copies", side.staging_copies},
                {"copies_in_timed_loop", side.copies_in_timed_loop}};
}
BenchMemorySide memory_side_from_json(const Json& o) {
    return BenchMemorySide{.memory = o["memory"].get<std::string>(),
                           .path = o["path"].get<std::string>(),
                           .where = o["where"].get<std::string>(),
                           .staging_copies = o["staging_copies"].get<std::string>(),
                           .copies_in_timed_loop = o["copies_in_timed_loop"].get<std::uint64_t>()};
}

Json to_json(const BenchKnobs& c) {
    Json object{{"op", c.op},
                {"transport", c.transport},
                {"mode", c.mode},
                {"size", c.size},
                {"window", c.window},
                {"qps", c.qps},
                {"post_list", c.post_list},
                {"signal_every", c.signal_every},
                {"inline", c.inline_size},
                {"sge", c.sge}};
    put(object, "srq", c.srq);
    put(object, "shared_cq", c.shared_cq);
    put(object, "events", c.events);
    object["iters"] = c.iters;
    object["duration_s"] = c.duration_s;
    object["warmup"] = c.warmup;
    object["memory"] = c.memory;
    put(object, "server_memory", c.server_memory);
    put(object, "api", c.api);
    return object;
}
BenchKnobs knobs_from_json(const Json& o) {
    return BenchKnobs{.op = o["op"].get<std::string>(),
                      .transport = o["transport"].get<std::string>(),
                      .mode = o["mode"].get<std::string>(),
                      .size = o["size"].get<std::uint64_t>(),
                      .window = o["window"].get<std::uint32_t>(),
                      .qps = o["qps"].get<std::uint32_t>(),
                      .post_list = o["post_list"].get<std::uint32_t>(),
                      .signal_every = o["signal_every"].get<std::uint32_t>(),
                      .inline_size = o["inline"].get<std::uint32_t>(),
                      .sge = o["sge"].get<std::uint32_t>(),
                      .srq = optional_at<bool>(o, "srq"),
                      .shared_cq = optional_at<bool>(o, "shared_cq"),
                      .events = optional_at<bool>(o, "events"),
                      .iters = o["iters"].get<std::uint64_t>(),
                      .duration_s = o["duration_s"].get<double>(),
                      .warmup = o["warmup"].get<std::uint64_t>(),
                      .memory = o["memory"].get<std::string>(),
                      .server_memory = optional_at<std::string>(o, "server_memory"),
                      .api = optional_at<std::string>(o, "api")};
}

Json to_json(const BenchResult& r) {
    Json object = Json::object();
    if (const auto& t = r.throughput) {
        object["ops"] = t->ops;
        object["bytes"] = t->bytes;
        object["seconds"] = t->seconds;
        object["gib_per_s"] = t->gib_per_s;
        object["gb_per_s"] = t->gb_per_s;
        object["mops"] = t->mops;
    }
    if (const auto& v = r.receiver)
        object["receiver"] =
            Json{{"messages", v->messages}, {"bytes", v->bytes}, {"lost", v->lost},
                 {"seconds", v->seconds},   {"mops", v->mops},   {"gib_per_s", v->gib_per_s}};
    put(object, "atomic_counter", r.atomic_counter);
    put(object, "verified", r.verified);
    if (const auto& l = r.latency)
        object["latency"] = Json{
            {"reported_as", l->reported_as}, {"samples", l->samples}, {"min_us", l->min_us},
            {"median_us", l->median_us},     {"mean_us", l->mean_us}, {"stdev_us", l->stdev_us},
            {"p99_us", l->p99_us},           {"p999_us", l->p999_us}, {"max_us", l->max_us}};
    object["cpu"] = Json{{"client_s", r.cpu.client_s},
                         {"server_s", r.cpu.server_s},
                         {"client_us_per_op", r.cpu.client_us_per_op},
                         {"server_us_per_op", r.cpu.server_us_per_op},
                         {"client_utilization", r.cpu.client_utilization},
                         {"server_utilization", r.cpu.server_utilization}};
    return object;
}
BenchResult result_from_json(const Json& o) {
    BenchResult r;
    // The bandwidth figures come together; a record with some of them only is refused.
    const std::vector<const char*> flat = {"ops",       "bytes",    "seconds",
                                           "gib_per_s", "gb_per_s", "mops"};
    std::size_t present = 0;
    for (const char* key : flat) present += o.contains(key) ? 1 : 0;
    if (present != 0 && present != flat.size())
        fail("result: ops, bytes, seconds, gib_per_s, gb_per_s and mops come together");
    if (present)
        r.throughput = BenchThroughput{.ops = o["ops"].get<std::uint64_t>(),
                                       .bytes = o["bytes"].get<std::uint64_t>(),
                                       .seconds = o["seconds"].get<double>(),
                                       .gib_per_s = o["gib_per_s"].get<double>(),
                                       .gb_per_s = o["gb_per_s"].get<double>(),
                                       .mops = o["mops"].get<double>()};
    if (o.contains("receiver")) {
        const Json& v = o["receiver"];
        r.receiver = BenchReceiver{.messages = v["messages"].get<std::uint64_t>(),
                                   .bytes = v["bytes"].get<std::uint64_t>(),
                                   .lost = v["lost"].get<std::uint64_t>(),
                                   .seconds = v["seconds"].get<double>(),
                                   .mops = v["mops"].get<double>(),
                                   .gib_per_s = v["gib_per_s"].get<double>()};
    }
    r.atomic_counter = optional_at<std::uint64_t>(o, "atomic_counter");
    r.verified = optional_at<bool>(o, "verified");
    if (o.contains("latency")) {
        const Json& l = o["latency"];
        r.latency = BenchLatency{.reported_as = l["reported_as"].get<std::string>(),
                                 .samples = l["samples"].get<std::uint64_t>(),
                                 .min_us = l["min_us"].get<double>(),
                                 .median_us = l["median_us"].get<double>(),
                                 .mean_us = l["mean_us"].get<double>(),
                                 .stdev_us = l["stdev_us"].get<double>(),
                                 .p99_us = l["p99_us"].get<double>(),
                                 .p999_us = l["p999_us"].get<double>(),
                                 .max_us = l["max_us"].get<double>()};
    }
    const Json& c = o["cpu"];
    r.cpu = BenchCpu{.client_s = c["client_s"].get<double>(),
                     .server_s = c["server_s"].get<double>(),
                     .client_us_per_op = c["client_us_per_op"].get<double>(),
                     .server_us_per_op = c["server_us_per_op"].get<double>(),
                     .client_utilization = c["client_utilization"].get<double>(),
                     .server_utilization = c["server_utilization"].get<double>()};
    return r;
}

}  // namespace

const std::vector<Field> kBenchSchema = bench_fields();

Json to_json(const BenchRecord& record) {
    Json object{{"tool", record.tool}, {"config", to_json(record.config)}};
    if (const auto& m = record.memory) {
        object["memory"] = Json{{"client", to_json(m->client)}, {"server", to_json(m->server)}};
        put(object["memory"], "note", m->note);
    }
    object["result"] = to_json(record.result);
    object["environment"] = to_json(record.environment);
    return object;
}

BenchRecord bench_from_json(const Json& o, const std::string& where) {
    check_schema(o, kBenchSchema, where);
    BenchRecord record{.tool = o["tool"].get<std::string>(),
                       .config = knobs_from_json(o["config"]),
                       .memory = std::nullopt,
                       .result = {},
                       .environment = environment_from_json(o["environment"])};
    if (o.contains("memory"))
        record.memory = BenchMemory{.client = memory_side_from_json(o["memory"]["client"]),
                                    .server = memory_side_from_json(o["memory"]["server"]),
                                    .note = optional_at<std::string>(o["memory"], "note")};
    try {
        record.result = result_from_json(o["result"]);
    } catch (const Error& e) {
        fail(fmt::format("{}: {}", where, e.what()));
    }
    return record;
}

bool is_bench_record(const Json& object) {
    return object.is_object() && object.contains("tool") && object["tool"].is_string() &&
           object["tool"].get_ref<const std::string&>().starts_with("rdma-bench ");
}

Schema schema_of(const Json& record, const std::string& where) {
    if (is_bench_record(record)) return kBenchSchema;
    if (is_allreduce_record(record)) return kAllreduceSchema;
    if (is_transfer_record(record)) return kTransferSchema;
    fail(
        fmt::format("{}: not a record this project writes (its \"tool\" is neither rdma-bench, "
                    "an allreduce program nor transfer-bench)",
                    where));
}

std::vector<Json> read_record_file(const std::string& path) {
    std::vector<Json> records = read_json_file(path);
    for (std::size_t i = 0; i < records.size(); ++i) {
        const std::string where = fmt::format("{}: record {}", path, i);
        if (is_bench_record(records[i]))
            records[i] = to_json(bench_from_json(records[i], where));
        else if (is_allreduce_record(records[i]))
            records[i] = to_json(allreduce_from_json(records[i], where));
        else if (is_transfer_record(records[i]))
            records[i] = to_json(transfer_from_json(records[i], where));
        else
            schema_of(records[i], where);  // refuses it, naming the record
    }
    return records;
}

}  // namespace rdmalab::records
