// The allreduce lessons' and mpi-allreduce's record (see allreduce.hpp).
#include "rdmalab/records/allreduce.hpp"

#include <array>
#include <string_view>
#include <utility>

namespace rdmalab::records {

namespace {

std::vector<Field> allreduce_fields() {
    std::vector<Field> fields = {
        {"tool", "string", true, "the program and its record's version (\"ring-allreduce 2\")"},
        {"config", "object", true, "how the rank ran"},
        {"config.algorithm", "string", true, "\"ring\", \"recursive doubling\", \"MPI_Allreduce\""},
        {"config.ranks", "integer", true, "ranks taking part"},
        {"config.rank", "integer", true, "this rank"},
        {"config.bytes", "integer", true, "the vector, bytes per rank"},
        {"config.segment", "integer", true, "bytes per WRITE (0: one per transfer, or not said)"},
        {"config.slots", "integer", true, "receive slots per link"},
        {"config.iterations", "integer", true, "allreduces timed"},
        {"result", "object", true, "what the rank measured"},
        {"result.median_ms", "number", true, "the median allreduce's time, ms"},
        {"result.algbw_mb_s", "number", true, "bytes / median time, MB/s"},
        {"result.busbw_mb_s", "number", true, "algbw × 2(n-1)/n, MB/s"},
        {"result.busbw_min_mb_s", "number", true, "busbw of the slowest allreduce"},
        {"result.busbw_max_mb_s", "number", true, "busbw of the fastest allreduce"},
        {"result.times_ms", "number[]", true, "every allreduce's time, ms"},
        {"result.step_ms", "number[]", true, "the last allreduce's steps, each one's own ms"},
        {"result.bytes_sent", "integer", true,
         "written by this rank in one allreduce (0: not counted)"},
        {"result.right_rank", "integer|null", true, "a ring's right neighbour; null for others"},
        {"result.link_share", "number", true,
         "2(n-1)/n, the vector's share each ring link carries"},
    };
    fields.insert(fields.end(), environment_fields().begin(), environment_fields().end());
    return fields;
}

constexpr std::array<std::string_view, 3> kAllreducePrograms = {
    "ring-allreduce ", "recursive-doubling ", "mpi-allreduce "};

}  // namespace

const std::vector<Field> kAllreduceSchema = allreduce_fields();

AllreduceRecord allreduce_record(const AllreduceRuns& runs, const AllreduceSettings& settings,
                                 Environment environment) {
    const AllreduceMeasures measures = measure_allreduce(runs);
    return AllreduceRecord{.tool = settings.tool,
                           .config = {.algorithm = settings.algorithm,
                                      .ranks = runs.ranks,
                                      .rank = settings.rank,
                                      .bytes = runs.bytes,
                                      .segment = settings.segment,
                                      .slots = settings.slots,
                                      .iterations = runs.times_ms.size()},
                           .result = {.median_ms = measures.median_ms,
                                      .algbw_mb_s = measures.algbw_mb_s,
                                      .busbw_mb_s = measures.busbw_mb_s,
                                      .busbw_min_mb_s = measures.busbw_min_mb_s,
                                      .busbw_max_mb_s = measures.busbw_max_mb_s,
                                      .times_ms = runs.times_ms,
                                      .step_ms = measures.step_ms,
                                      .bytes_sent = runs.bytes_sent,
                                      .right_rank = runs.right,
                                      .link_share = measures.link_share},
                           .environment = std::move(environment)};
}

Json to_json(const AllreduceRecord& record) {
    const AllreduceConfig& c = record.config;
    const AllreduceResult& r = record.result;
    return Json{{"tool", record.tool},
                {"config",
                 {{"algorithm", c.algorithm},
                  {"ranks", c.ranks},
                  {"rank", c.rank},
                  {"bytes", c.bytes},
                  {"segment", c.segment},
                  {"slots", c.slots},
                  {"iterations", c.iterations}}},
                {"result",
                 {{"median_ms", r.median_ms},
                  {"algbw_mb_s", r.algbw_mb_s},
                  {"busbw_mb_s", r.busbw_mb_s},
                  {"busbw_min_mb_s", r.busbw_min_mb_s},
                  {"busbw_max_mb_s", r.busbw_max_mb_s},
                  {"times_ms", r.times_ms},
                  {"step_ms", r.step_ms},
                  {"bytes_sent", r.bytes_sent},
                  {"right_rank", r.right_rank ? Json(*r.right_rank) : Json(nullptr)},
                  {"link_share", r.link_share}}},
                {"environment", to_json(record.environment)}};
}

AllreduceRecord allreduce_from_json(const Json& o, const std::string& where) {
    check_schema(o, kAllreduceSchema, where);
    const Json& c = o["config"];
    const Json& r = o["result"];
    return AllreduceRecord{.tool = o["tool"].get<std::string>(),
                           .config = {.algorithm = c["algorithm"].get<std::string>(),
                                      .ranks = c["ranks"].get<int>(),
                                      .rank = c["rank"].get<int>(),
                                      .bytes = c["bytes"].get<std::uint64_t>(),
                                      .segment = c["segment"].get<std::uint64_t>(),
                                      .slots = c["slots"].get<std::uint32_t>(),
                                      .iterations = c["iterations"].get<std::uint64_t>()},
                           .result = {.median_ms = r["median_ms"].get<double>(),
                                      .algbw_mb_s = r["algbw_mb_s"].get<double>(),
                                      .busbw_mb_s = r["busbw_mb_s"].get<double>(),
                                      .busbw_min_mb_s = r["busbw_min_mb_s"].get<double>(),
                                      .busbw_max_mb_s = r["busbw_max_mb_s"].get<double>(),
                                      .times_ms = r["times_ms"].get<std::vector<double>>(),
                                      .step_ms = r["step_ms"].get<std::vector<double>>(),
                                      .bytes_sent = r["bytes_sent"].get<std::uint64_t>(),
                                      .right_rank = r["right_rank"].is_null()
                                                        ? std::nullopt
                                                        : std::optional(r["right_rank"].get<int>()),
                                      .link_share = r["link_share"].get<double>()},
                           .environment = environment_from_json(o["environment"])};
}

bool is_allreduce_record(const Json& object) {
    if (!object.is_object() || !object.contains("tool") || !object["tool"].is_string())
        return false;
    const auto& tool = object["tool"].get_ref<const std::string&>();
    for (std::string_view program : kAllreducePrograms)
        if (tool.starts_with(program)) return true;
    return false;
}

void write_allreduce_records(const std::string& path, const AllreduceRuns& runs,
                             const AllreduceSettings& settings) {
    write_file(path, to_json(std::vector<Json>{to_json(
                         allreduce_record(runs, settings, host_environment(settings.tool)))}));
}

}  // namespace rdmalab::records
