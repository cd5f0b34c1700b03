// gpu-memory-bench's record (see gpu_memory.hpp).
#include "rdmalab/records/gpu_memory.hpp"

#include <utility>

namespace rdmalab::records {

namespace {

const std::vector<Field> kCopyRowFields = {
    {"size", "integer", true, "bytes per copy"},
    {"h2d_gbps", "number", true, "host to device, GB/s"},
    {"h2d_us", "number", true, "host to device, µs per copy (median)"},
    {"h2d_of_ceiling", "number", true, "host to device, of the ceiling's GB/s"},
    {"d2h_gbps", "number", true, "device to host, GB/s"},
    {"d2h_us", "number", true, "device to host, µs per copy (median)"},
    {"d2h_of_ceiling", "number", true, "device to host, of the ceiling's GB/s"},
};

std::vector<Field> gpu_memory_fields() {
    std::vector<Field> fields = {
        {"tool", "string", true, "the program and its version (\"gpu-memory-bench 0.1\")"},
        {"units", "object", true, "how the numbers are given, in words"},
        {"units.bandwidth", "string", true, "GB/s = 10^9 bytes/s"},
        {"units.time", "string", true, "microseconds"},
        {"units.size", "string", true, "bytes"},
        {"units.of_ceiling", "string", true, "what of_ceiling is a fraction of"},
        {"config", "object", true, "the options"},
        {"config.mem", "string", true, "--mem: the memory measured (\"cuda:0\", \"host\")"},
        {"config.sizes", "integer[]", true, "the copies' sizes, bytes"},
        {"config.reps", "integer", true, "repetitions per number"},
        {"config.ceiling_size", "integer", true, "bytes per copy of the ceiling"},
        {"config.ceiling_copies", "integer", true, "copies queued for the ceiling"},
        {"memory", "object", true, "what was measured"},
        {"memory.kind", "string", true, "the memory kind"},
        {"memory.gpu", "boolean", true, "a GPU's memory (else host memory)"},
        {"memory.description", "string", true, "the device, in words"},
        {"memory.copy_call", "string", true, "the copy call (\"cudaMemcpyAsync\")"},
        {"memory.pinned_call", "string", true, "where pinned host memory came from"},
        {"memory.buffer_size", "integer", false, "the buffer the run used, bytes"},
    };
    // The environment's "device" is the GPU's facts here, not an RDMA device's name.
    for (const Field& field : environment_fields())
        if (field.name != "environment.device") fields.push_back(field);
    const std::vector<Field> more = {
        {"environment.device", "string{}", true, "the device's facts, as its backend gave them"},
        {"allocation", "object", true, "allocation and release, medians"},
        {"allocation.first_device_memory_us", "number", true,
         "the run's first DeviceMemory, backend start-up included, µs"},
        {"allocation.rows", "object[]", true, "one size each"},
        {"allocation.rows[].size", "integer", true, "bytes"},
        {"allocation.rows[].device_memory_us", "number", true, "a new backend + allocate, µs"},
        {"allocation.rows[].device_memory_free_us", "number", true, "its release, µs"},
        {"allocation.rows[].allocate_us", "number", true, "Backend::allocate alone, µs"},
        {"allocation.rows[].release_us", "number", true, "Backend::release, µs"},
        {"allocation.rows[].pinned_us", "number", true, "PinnedHostMemory, µs"},
        {"allocation.rows[].pinned_free_us", "number", true, "its release, µs"},
        {"dmabuf_export", "object", true, "the dma-buf export of the whole buffer"},
        {"dmabuf_export.size", "integer", true, "bytes exported"},
        {"dmabuf_export.exported", "boolean", true, "whether an fd came back"},
        {"dmabuf_export.call", "string", true, "the export call that gave the fd"},
        {"dmabuf_export.offset", "integer", true, "the fd's offset"},
        {"dmabuf_export.failure", "string", true, "why there is no dma-buf; empty when there is"},
        {"dmabuf_export.outcome", "string", true, "the export in words"},
        {"dmabuf_export.median_us", "number", true, "the export call alone, µs"},
        {"dmabuf_export.attempts", "integer", true, "calls made"},
        {"kernels", "object", true, "fill and verify at the largest size, medians"},
        {"kernels.worker", "string", true, "what ran them: GPU kernels or the CPU"},
        {"kernels.size", "integer", true, "bytes"},
        {"kernels.fill_gbps", "number", true, "fill_pattern + synchronize, GB/s"},
        {"kernels.fill_us", "number", true, "µs"},
        {"kernels.verify_gbps", "number", true, "find_mismatch, GB/s"},
        {"kernels.verify_us", "number", true, "µs"},
        {"kernels.verified", "boolean", true, "no wrong byte was found"},
        {"kernels.wrong_seed_caught_at", "integer", true, "where another seed's pattern failed"},
        {"copies", "object", true, "the staging copies"},
        {"copies.method", "string", true, "how they were timed"},
        {"copies.verified", "boolean", true, "the data was checked both ways first"},
        {"copies.verification", "string", true, "how"},
        {"copies.ceiling", "object", true, "the copy engine's ceiling, each direction"},
        {"copies.ceiling.size", "integer", true, "bytes per copy"},
        {"copies.ceiling.copies", "integer", true, "copies queued before one synchronize"},
        {"copies.ceiling.statistic", "string", true, "\"best of reps\""},
        {"copies.ceiling.h2d_gbps", "number", true, "host to device, GB/s"},
        {"copies.ceiling.h2d_us", "number", true, "µs for them all"},
        {"copies.ceiling.d2h_gbps", "number", true, "device to host, GB/s"},
        {"copies.ceiling.d2h_us", "number", true, "µs for them all"},
        {"copies.pinned", "object[]", true, "pinned host memory, one size each"},
    };
    fields.insert(fields.end(), more.begin(), more.end());
    const std::vector<Field> pinned = fields_under("copies.pinned[]", kCopyRowFields);
    fields.insert(fields.end(), pinned.begin(), pinned.end());
    fields.push_back({"copies.pageable", "object", true, "pageable memory, for contrast"});
    const std::vector<Field> pageable = fields_under("copies.pageable", kCopyRowFields);
    fields.insert(fields.end(), pageable.begin(), pageable.end());
    return fields;
}

Json copy_row_json(const GpuCopyRow& r) {
    return Json{{"size", r.size},
                {"h2d_gbps", r.h2d_gbps},
                {"h2d_us", r.h2d_us},
                {"h2d_of_ceiling", r.h2d_of_ceiling},
                {"d2h_gbps", r.d2h_gbps},
                {"d2h_us", r.d2h_us},
                {"d2h_of_ceiling", r.d2h_of_ceiling}};
}

GpuCopyRow copy_row_from_json(const Json& o) {
    return GpuCopyRow{.size = o["size"].get<std::uint64_t>(),
                      .h2d_gbps = o["h2d_gbps"].get<double>(),
                      .h2d_us = o["h2d_us"].get<double>(),
                      .h2d_of_ceiling = o["h2d_of_ceiling"].get<double>(),
                      .d2h_gbps = o["d2h_gbps"].get<double>(),
                      .d2h_us = o["d2h_us"].get<double>(),
                      .d2h_of_ceiling = o["d2h_of_ceiling"].get<double>()};
}

// The environment's host part: all but "device" (the GPU's facts, not an RDMA device's name).
Environment host_part(const Json& environment) {
    Json host = environment;
    host.erase("device");
    return environment_from_json(host);
}

}  // namespace

const std::vector<Field> kGpuMemorySchema = gpu_memory_fields();

Json to_json(const GpuMemoryRecord& r) {
    Json memory{{"kind", r.memory.kind},
                {"gpu", r.memory.gpu},
                {"description", r.memory.description},
                {"copy_call", r.memory.copy_call},
                {"pinned_call", r.memory.pinned_call}};
    if (r.memory.buffer_size) memory["buffer_size"] = *r.memory.buffer_size;
    Json environment = to_json(r.environment.host);
    Json& device = environment["device"] = Json::object();
    for (const auto& [name, value] : r.environment.device) device[name] = value;
    Json rows = Json::array();
    for (const GpuAllocationRow& row : r.allocation.rows)
        rows.push_back(Json{{"size", row.size},
                            {"device_memory_us", row.device_memory_us},
                            {"device_memory_free_us", row.device_memory_free_us},
                            {"allocate_us", row.allocate_us},
                            {"release_us", row.release_us},
                            {"pinned_us", row.pinned_us},
                            {"pinned_free_us", row.pinned_free_us}});
    const GpuExport& e = r.dmabuf_export;
    const GpuKernels& k = r.kernels;
    const GpuCeiling& c = r.copies.ceiling;
    Json pinned = Json::array();
    for (const GpuCopyRow& row : r.copies.pinned) pinned.push_back(copy_row_json(row));
    return Json{{"tool", r.tool},
                {"units",
                 {{"bandwidth", r.units.bandwidth},
                  {"time", r.units.time},
                  {"size", r.units.size},
                  {"of_ceiling", r.units.of_ceiling}}},
                {"config",
                 {{"mem", r.config.mem},
                  {"sizes", r.config.sizes},
                  {"reps", r.config.reps},
                  {"ceiling_size", r.config.ceiling_size},
                  {"ceiling_copies", r.config.ceiling_copies}}},
                {"memory", std::move(memory)},
                {"environment", std::move(environment)},
                {"allocation",
                 {{"first_device_memory_us", r.allocation.first_device_memory_us},
                  {"rows", std::move(rows)}}},
                {"dmabuf_export",
                 {{"size", e.size},
                  {"exported", e.exported},
                  {"call", e.call},
                  {"offset", e.offset},
                  {"failure", e.failure},
                  {"outcome", e.outcome},
                  {"median_us", e.median_us},
                  {"attempts", e.attempts}}},
                {"kernels",
                 {{"worker", k.worker},
                  {"size", k.size},
                  {"fill_gbps", k.fill_gbps},
                  {"fill_us", k.fill_us},
                  {"verify_gbps", k.verify_gbps},
                  {"verify_us", k.verify_us},
                  {"verified", k.verified},
                  {"wrong_seed_caught_at", k.wrong_seed_caught_at}}},
                {"copies",
                 {{"method", r.copies.method},
                  {"verified", r.copies.verified},
                  {"verification", r.copies.verification},
                  {"ceiling",
                   {{"size", c.size},
                    {"copies", c.copies},
                    {"statistic", c.statistic},
                    {"h2d_gbps", c.h2d_gbps},
                    {"h2d_us", c.h2d_us},
                    {"d2h_gbps", c.d2h_gbps},
                    {"d2h_us", c.d2h_us}}},
                  {"pinned", std::move(pinned)},
                  {"pageable", copy_row_json(r.copies.pageable)}}}};
}

GpuMemoryRecord gpu_memory_from_json(const Json& o, const std::string& where) {
    check_schema(o, kGpuMemorySchema, where);
    const Json& u = o["units"];
    const Json& cf = o["config"];
    const Json& m = o["memory"];
    const Json& a = o["allocation"];
    const Json& e = o["dmabuf_export"];
    const Json& k = o["kernels"];
    const Json& cp = o["copies"];
    const Json& c = cp["ceiling"];
    GpuMemoryRecord r{
        .tool = o["tool"].get<std::string>(),
        .units = {.bandwidth = u["bandwidth"].get<std::string>(),
                  .time = u["time"].get<std::string>(),
                  .size = u["size"].get<std::string>(),
                  .of_ceiling = u["of_ceiling"].get<std::string>()},
        .config = {.mem = cf["mem"].get<std::string>(),
                   .sizes = cf["sizes"].get<std::vector<std::uint64_t>>(),
                   .reps = cf["reps"].get<int>(),
                   .ceiling_size = cf["ceiling_size"].get<std::uint64_t>(),
                   .ceiling_copies = cf["ceiling_copies"].get<int>()},
        .memory = {.kind = m["kind"].get<std::string>(),
                   .gpu = m["gpu"].get<bool>(),
                   .description = m["description"].get<std::string>(),
                   .copy_call = m["copy_call"].get<std::string>(),
                   .pinned_call = m["pinned_call"].get<std::string>()},
        .environment = {.host = host_part(o["environment"])},
        .allocation = {.first_device_memory_us = a["first_device_memory_us"].get<double>()},
        .dmabuf_export = {.size = e["size"].get<std::uint64_t>(),
                          .exported = e["exported"].get<bool>(),
                          .call = e["call"].get<std::string>(),
                          .offset = e["offset"].get<std::uint64_t>(),
                          .failure = e["failure"].get<std::string>(),
                          .outcome = e["outcome"].get<std::string>(),
                          .median_us = e["median_us"].get<double>(),
                          .attempts = e["attempts"].get<int>()},
        .kernels = {.worker = k["worker"].get<std::string>(),
                    .size = k["size"].get<std::uint64_t>(),
                    .fill_gbps = k["fill_gbps"].get<double>(),
                    .fill_us = k["fill_us"].get<double>(),
                    .verify_gbps = k["verify_gbps"].get<double>(),
                    .verify_us = k["verify_us"].get<double>(),
                    .verified = k["verified"].get<bool>(),
                    .wrong_seed_caught_at = k["wrong_seed_caught_at"].get<std::uint64_t>()},
        .copies = {.method = cp["method"].get<std::string>(),
                   .verified = cp["verified"].get<bool>(),
                   .verification = cp["verification"].get<std::string>(),
                   .ceiling = {.size = c["size"].get<std::uint64_t>(),
                               .copies = c["copies"].get<int>(),
                               .statistic = c["statistic"].get<std::string>(),
                               .h2d_gbps = c["h2d_gbps"].get<double>(),
                               .h2d_us = c["h2d_us"].get<double>(),
                               .d2h_gbps = c["d2h_gbps"].get<double>(),
                               .d2h_us = c["d2h_us"].get<double>()},
                   .pageable = copy_row_from_json(cp["pageable"])}};
    if (m.contains("buffer_size")) r.memory.buffer_size = m["buffer_size"].get<std::uint64_t>();
    for (const auto& [name, value] : o["environment"]["device"].items())
        r.environment.device.emplace_back(name, value.get<std::string>());
    for (const Json& row : a["rows"])
        r.allocation.rows.push_back(
            GpuAllocationRow{.size = row["size"].get<std::uint64_t>(),
                             .device_memory_us = row["device_memory_us"].get<double>(),
                             .device_memory_free_us = row["device_memory_free_us"].get<double>(),
                             .allocate_us = row["allocate_us"].get<double>(),
                             .release_us = row["release_us"].get<double>(),
                             .pinned_us = row["pinned_us"].get<double>(),
                             .pinned_free_us = row["pinned_free_us"].get<double>()});
    for (const Json& row : cp["pinned"]) r.copies.pinned.push_back(copy_row_from_json(row));
    return r;
}

bool is_gpu_memory_record(const Json& object) {
    return object.is_object() && object.contains("tool") && object["tool"].is_string() &&
           object["tool"].get_ref<const std::string&>().starts_with("gpu-memory-bench ");
}

}  // namespace rdmalab::records
