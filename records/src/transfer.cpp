// transfer-bench's record (see transfer.hpp).
#include "rdmalab/records/transfer.hpp"

#include <utility>

namespace rdmalab::records {

namespace {

std::vector<Field> transfer_fields() {
    std::vector<Field> fields = {
        {"tool", "string", true, "the program and its record's version (\"transfer-bench 1\")"},
        {"config", "object", true, "the run, as transfer-bench's options name it"},
        {"config.op", "string", true, "write (to the server) or read (from it)"},
        {"config.rails", "integer", true, "rails: one RDMA device each, side by side"},
        {"config.devices", "string[]", true, "each rail's device, in rail order"},
        {"config.block", "integer", true, "bytes per request (-s)"},
        {"config.batch", "integer", true, "requests per batch"},
        {"config.batches", "integer", true, "batches, one after another"},
        {"config.slice", "integer", true, "bytes per slice: a request is cut into slices"},
        {"config.policy", "string", true, "how a slice's rail is chosen: score or round-robin"},
        {"config.retry_cnt", "integer", true, "the QPs' retry count"},
        {"config.ack_timeout", "integer", true, "the QPs' timeout: 4.096 us x 2^N"},
        {"config.rail_retry_ms", "integer", true,
         "ms before a rail that went down is tried again (0: never), doubling while it fails"},
        {"config.rail_retry_max_ms", "integer", true, "the longest wait between tries, ms"},
        {"config.check", "boolean", true, "every byte verified (--check)"},
        {"config.qps_per_rail", "integer", false, "RC QPs per rail (--qps; absent: 1)"},
        {"config.mem", "string", false, "the client's memory (--mem: host, cuda:N, rocm:N)"},
        {"config.registration", "string", false,
         "the rung that registered it: host, dma-buf or peer memory"},
        {"result", "object", true, "what the client measured"},
        {"result.bytes", "integer", true, "bytes moved: block x batch x batches"},
        {"result.seconds", "number", true, "the batches' time, s"},
        {"result.gbit_per_s", "number", true, "bytes x 8 / seconds, Gbit/s (10^9 bit/s)"},
        {"result.batch_p50_ms", "number", true, "a batch's latency, submit to done: median, ms"},
        {"result.batch_p99_ms", "number", true, "… 99th percentile, ms"},
        {"result.batch_p999_ms", "number", true, "… 99.9th percentile, ms"},
        {"result.reposted", "integer", true, "slices posted again after their rail failed"},
        {"result.verified", "boolean", true, "every byte was checked, and right"},
        {"result.rails", "object[]", true, "each rail, in rail order"},
        {"result.rails[].device", "string", true, "its RDMA device"},
        {"result.rails[].bytes", "integer", true, "bytes of the slices that landed through it"},
        {"result.rails[].up", "boolean", true, "up at the end"},
        {"result.rails[].failures", "integer", true,
         "times it went down (a failed probe or renewal included)"},
        {"result.rails[].restored", "integer", true, "times it came back"},
        {"result.rails[].detect_ms", "number", false,
         "went down: ms from its last completion to its first error"},
        {"result.rails[].down_because", "string", false, "down at the end: why"},
    };
    fields.insert(fields.end(), environment_fields().begin(), environment_fields().end());
    return fields;
}

Json rail_json(const TransferRail& rail) {
    Json json{{"device", rail.device},
              {"bytes", rail.bytes},
              {"up", rail.up},
              {"failures", rail.failures},
              {"restored", rail.restored}};
    if (rail.detect_ms) json["detect_ms"] = *rail.detect_ms;
    if (rail.down_because) json["down_because"] = *rail.down_because;
    return json;
}

TransferRail rail_from_json(const Json& o) {
    TransferRail rail{.device = o["device"].get<std::string>(),
                      .bytes = o["bytes"].get<std::uint64_t>(),
                      .up = o["up"].get<bool>(),
                      .failures = o["failures"].get<std::uint32_t>(),
                      .restored = o["restored"].get<std::uint32_t>()};
    if (o.contains("detect_ms")) rail.detect_ms = o["detect_ms"].get<double>();
    if (o.contains("down_because")) rail.down_because = o["down_because"].get<std::string>();
    return rail;
}

}  // namespace

const std::vector<Field> kTransferSchema = transfer_fields();

Json to_json(const TransferRecord& record) {
    const TransferConfig& c = record.config;
    const TransferResult& r = record.result;
    Json rails = Json::array();
    for (const TransferRail& rail : r.rails) rails.push_back(rail_json(rail));
    Json json{{"tool", record.tool},
              {"config",
               {{"op", c.op},
                {"rails", c.rails},
                {"devices", c.devices},
                {"block", c.block},
                {"batch", c.batch},
                {"batches", c.batches},
                {"slice", c.slice},
                {"policy", c.policy},
                {"retry_cnt", c.retry_cnt},
                {"ack_timeout", c.ack_timeout},
                {"rail_retry_ms", c.rail_retry_ms},
                {"rail_retry_max_ms", c.rail_retry_max_ms},
                {"check", c.check}}},
              {"result",
               {{"bytes", r.bytes},
                {"seconds", r.seconds},
                {"gbit_per_s", r.gbit_per_s},
                {"batch_p50_ms", r.batch_p50_ms},
                {"batch_p99_ms", r.batch_p99_ms},
                {"batch_p999_ms", r.batch_p999_ms},
                {"reposted", r.reposted},
                {"verified", r.verified},
                {"rails", std::move(rails)}}},
              {"environment", to_json(record.environment)}};
    if (c.qps_per_rail) json["config"]["qps_per_rail"] = *c.qps_per_rail;
    if (c.mem) json["config"]["mem"] = *c.mem;
    if (c.registration) json["config"]["registration"] = *c.registration;
    return json;
}

TransferRecord transfer_from_json(const Json& o, const std::string& where) {
    check_schema(o, kTransferSchema, where);
    const Json& c = o["config"];
    const Json& r = o["result"];
    TransferRecord record{.tool = o["tool"].get<std::string>(),
                          .config = {.op = c["op"].get<std::string>(),
                                     .rails = c["rails"].get<std::uint32_t>(),
                                     .devices = c["devices"].get<std::vector<std::string>>(),
                                     .block = c["block"].get<std::uint64_t>(),
                                     .batch = c["batch"].get<std::uint32_t>(),
                                     .batches = c["batches"].get<std::uint32_t>(),
                                     .slice = c["slice"].get<std::uint64_t>(),
                                     .policy = c["policy"].get<std::string>(),
                                     .retry_cnt = c["retry_cnt"].get<int>(),
                                     .ack_timeout = c["ack_timeout"].get<int>(),
                                     .rail_retry_ms = c["rail_retry_ms"].get<int>(),
                                     .rail_retry_max_ms = c["rail_retry_max_ms"].get<int>(),
                                     .check = c["check"].get<bool>(),
                                     .qps_per_rail = {}},
                          .result = {.bytes = r["bytes"].get<std::uint64_t>(),
                                     .seconds = r["seconds"].get<double>(),
                                     .gbit_per_s = r["gbit_per_s"].get<double>(),
                                     .batch_p50_ms = r["batch_p50_ms"].get<double>(),
                                     .batch_p99_ms = r["batch_p99_ms"].get<double>(),
                                     .batch_p999_ms = r["batch_p999_ms"].get<double>(),
                                     .reposted = r["reposted"].get<std::uint32_t>(),
                                     .verified = r["verified"].get<bool>(),
                                     .rails = {}},
                          .environment = environment_from_json(o["environment"])};
    if (c.contains("qps_per_rail"))
        record.config.qps_per_rail = c["qps_per_rail"].get<std::uint32_t>();
    if (c.contains("mem")) record.config.mem = c["mem"].get<std::string>();
    if (c.contains("registration"))
        record.config.registration = c["registration"].get<std::string>();
    for (const Json& rail : r["rails"]) record.result.rails.push_back(rail_from_json(rail));
    return record;
}

bool is_transfer_record(const Json& object) {
    return object.is_object() && object.contains("tool") && object["tool"].is_string() &&
           object["tool"].get_ref<const std::string&>().starts_with("transfer-bench ");
}

void write_transfer_records(const std::string& path, const TransferRecord& record) {
    write_file(path, to_json(std::vector<Json>{to_json(record)}));
}

}  // namespace rdmalab::records
