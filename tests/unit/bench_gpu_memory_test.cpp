// gpu-memory-bench's record and report (bench/include/rdmalab/bench/gpu_memory_record.hpp): the
// rounding, the sizes measured, each part of the record from made-up numbers, and the Markdown
// report made from the record alone.
#include "rdmalab/bench/gpu_memory_record.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/records/gpu_memory.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

// In the namespace, not with a using-directive: one would reach the test files after this one
// in its unity batch (tests/CMakeLists.txt).
namespace rdmalab::bench::gpu_memory {
namespace {

// The keys of a record, in its order.
std::vector<std::string> gpu_memory_keys(const records::Json& record) {
    std::vector<std::string> keys;
    for (const auto& [key, value] : record.items()) keys.push_back(key);
    return keys;
}

bool gpu_memory_has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::string gpu_memory_text_of(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), {}};
}

// A whole record of a host-memory run with round numbers: 1 MB copies at 10 GB/s (100 µs),
// the ceiling 4 × 1 MB at 20 GB/s (200 µs).
records::GpuMemoryRecord gpu_memory_sample() {
    const records::GpuMemoryEnvironment environment{.host = {.host = "box",
                                                             .kernel = "6.1",
                                                             .date = "2026-11-28T00:00:00Z",
                                                             .tool_version = kToolVersion},
                                                    .device = {{"cpu", "a|b"}}};
    const CopyPair ceiling{200, 200};
    const std::size_t ceiling_bytes = 1'000'000 * kCeilingCopies;
    const std::vector<records::GpuCopyRow> pinned = {
        copy_numbers(1'000'000, CopyPair{100, 100}, ceiling, ceiling_bytes)};
    return run_record(
        config_record("host", {1'000'000}, 3, 1'000'000),
        memory_record("host", false, "host memory", "memcpy", "aligned_alloc"), environment,
        allocation_record(12.5, {AllocationRow{1'000'000, 1, 2, 3, 4, 5, 6}}),
        export_record(ExportResult{1'000'000, false, "", 0, "not here", 0.25, 1}),
        kernel_record("the CPU (host backend)", KernelResult{1'000'000, 50, 25, 0}),
        copies_record("memcpy", copy_verification(1'000'000, 1'000'000),
                      ceiling_record(1'000'000, ceiling), pinned,
                      copy_numbers(1'000'000, CopyPair{400, 200}, ceiling, ceiling_bytes)));
}

}  // namespace

TEST(GpuMemoryRecord, TimesKeepNanosecondsAndSpeedsFourDecimals) {
    EXPECT_DOUBLE_EQ(microseconds(1.2345678e-3), 1234.568);
    EXPECT_DOUBLE_EQ(gigabytes_per_second(1e9, 0.3), 3.3333);
    EXPECT_DOUBLE_EQ(rounded(0.123456, 1e-5), 0.12346);
    EXPECT_EQ(percent(0.12345), "12.3%");
    EXPECT_EQ(percent(1.5), "150.0%");
}

TEST(GpuMemoryRecord, AllocationIsMeasuredAtTheSmallestTheLargestAndTheCeilingsSize) {
    EXPECT_EQ(allocation_sizes({4096, 65536}, 1 << 20),
              (std::vector<std::size_t>{4096, 65536, 1 << 20}));
    EXPECT_EQ(allocation_sizes({4096, 16384, 65536}, 4096),
              (std::vector<std::size_t>{4096, 65536}));
    EXPECT_EQ(allocation_sizes({4096}, 4096), (std::vector<std::size_t>{4096}));
    EXPECT_EQ(allocation_sizes({1 << 20, 1 << 26}, 1 << 24),
              (std::vector<std::size_t>{1 << 20, 1 << 24, 1 << 26}));
}

TEST(GpuMemoryRecord, CopyNumbersAreSpeedsAndFractionsOfTheSameDirectionsCeiling) {
    const records::GpuCopyRow row =
        copy_numbers(1'000'000, CopyPair{100, 400}, CopyPair{200, 100}, 1'000'000 * kCeilingCopies);
    EXPECT_EQ(gpu_memory_keys(records::to_json(gpu_memory_sample())["copies"]["pinned"][0]),
              (std::vector<std::string>{"size", "h2d_gbps", "h2d_us", "h2d_of_ceiling", "d2h_gbps",
                                        "d2h_us", "d2h_of_ceiling"}));
    EXPECT_DOUBLE_EQ(row.h2d_gbps, 10);
    EXPECT_DOUBLE_EQ(row.d2h_gbps, 2.5);
    EXPECT_DOUBLE_EQ(row.h2d_of_ceiling, 0.5);     // of 20 GB/s
    EXPECT_DOUBLE_EQ(row.d2h_of_ceiling, 0.0625);  // of 40 GB/s
    const records::GpuCeiling ceiling = ceiling_record(1'000'000, CopyPair{200, 100});
    EXPECT_DOUBLE_EQ(ceiling.h2d_gbps, 20);
    EXPECT_DOUBLE_EQ(ceiling.d2h_gbps, 40);
    EXPECT_EQ(ceiling.copies, kCeilingCopies);
    EXPECT_EQ(ceiling.statistic, "best of reps");
}

TEST(GpuMemoryRecord, TheExportSaysItsFdOrWhyThereIsNone) {
    const ExportResult worked{4096, true, "cuMemGetHandleForAddressRange", 0, "", 1.5, 20};
    EXPECT_EQ(export_outcome(worked),
              "fd from cuMemGetHandleForAddressRange (offset 0); each fd closed");
    const records::GpuExport record = export_record(worked);
    EXPECT_EQ(gpu_memory_keys(records::to_json(gpu_memory_sample())["dmabuf_export"]),
              (std::vector<std::string>{"size", "exported", "call", "offset", "failure", "outcome",
                                        "median_us", "attempts"}));
    EXPECT_EQ(record.attempts, 20);
    EXPECT_EQ(export_outcome(ExportResult{4096, false, "", 0, "no dma-buf", 0, 1}),
              "failed: no dma-buf");
}

TEST(GpuMemoryRecord, KernelSpeedsAreTheSizeOverTheMedianTimes) {
    const records::GpuKernels kernels =
        kernel_record("GPU kernels", KernelResult{1'000'000, 50, 25, 7});
    EXPECT_DOUBLE_EQ(kernels.fill_gbps, 20);
    EXPECT_DOUBLE_EQ(kernels.verify_gbps, 40);
    EXPECT_EQ(kernels.verified, true);
    EXPECT_EQ(kernels.wrong_seed_caught_at, 7);
    EXPECT_EQ(kernels.worker, "GPU kernels");
}

TEST(GpuMemoryRecord, TheRecordHoldsEveryPartInItsOrder) {
    const records::Json r = records::to_json(gpu_memory_sample());
    EXPECT_EQ(gpu_memory_keys(r),
              (std::vector<std::string>{"tool", "units", "config", "memory", "environment",
                                        "allocation", "dmabuf_export", "kernels", "copies"}));
    EXPECT_EQ(r["tool"], kToolVersion);
    EXPECT_EQ(r["config"]["ceiling_copies"], kCeilingCopies);
    EXPECT_EQ(r["allocation"]["first_device_memory_us"], 12.5);
    EXPECT_EQ(r["allocation"]["rows"][0]["pinned_free_us"], 6);
    EXPECT_EQ(gpu_memory_keys(r["copies"]),
              (std::vector<std::string>{"method", "verified", "verification", "ceiling", "pinned",
                                        "pageable"}));
    EXPECT_EQ(r["copies"]["method"],
              "memcpy: one copy + synchronize per message (the staging path), median of reps");
    EXPECT_TRUE(
        gpu_memory_has(r["copies"]["verification"].get<std::string>(), "checked on the device"));
}

TEST(GpuMemoryRecord, TheMarkdownReportSaysWhatTheRecordSays) {
    const records::GpuMemoryRecord r = gpu_memory_sample();
    EXPECT_EQ(title(r.memory),
              "host memory, not a GPU: memcpy copies and CPU fill/verify (pinned buffers: "
              "aligned_alloc)");
    records::GpuMemoryFacts gpu = r.memory;
    gpu.gpu = true;
    gpu.description = "NVIDIA H200";
    EXPECT_EQ(title(gpu), "NVIDIA H200: memcpy copies, pinned host memory from aligned_alloc");
    EXPECT_EQ(markdown_cell("a|b|c"), "a\\|b\\|c");
    const std::string md = to_markdown(r);
    EXPECT_EQ(md.rfind("# gpu-memory-bench: host memory, not a GPU", 0), 0u);
    EXPECT_TRUE(gpu_memory_has(md, "| cpu | a\\|b |\n"));
    EXPECT_TRUE(gpu_memory_has(md, "| 1000000 | 1.0 | 2.0 | 3.0 | 4.0 | 5.0 | 6.0 |\n"));
    EXPECT_TRUE(gpu_memory_has(md, "failed: not here (1000000 B, median 0.25 us over 1 call(s))"));
    EXPECT_TRUE(gpu_memory_has(md, "| fill_pattern + synchronize | 20.00 | 50.0 |\n"));
    EXPECT_TRUE(gpu_memory_has(md, "| 1000000 | 10.00 | 50.0% | 10.00 | 50.0% |\n"));
    EXPECT_TRUE(gpu_memory_has(md, "H2D 2.50 GB/s (12.5% of ceiling), D2H 5.00 GB/s (25.0%)"));
}

// The typed record (records/gpu_memory.hpp): what the tool writes keeps the schema and reads back
// equal; a misspelt field is refused by name; the schema file is the schema; every record in
// gpu/results reads back byte for byte, and its Markdown report, made again from the record
// alone, is the one committed beside it.
TEST(GpuMemoryRecord, TheTypedRecordRoundTripsAndKeepsItsSchema) {
    records::GpuMemoryRecord r = gpu_memory_sample();
    r.memory.buffer_size = 4'000'000;
    for (const records::GpuMemoryRecord& record : {gpu_memory_sample(), r}) {
        const records::Json json = records::to_json(record);
        EXPECT_EQ(records::schema_problems(json, records::kGpuMemorySchema),
                  std::vector<std::string>{});
        EXPECT_TRUE(records::is_gpu_memory_record(json));
        EXPECT_EQ(records::gpu_memory_from_json(json, "here"), record);
        EXPECT_EQ(records::to_json(records::gpu_memory_from_json(json, "here")), json);
    }
    records::Json json = records::to_json(r);
    json["copies"]["pinned"][0]["h2d_gbs"] = 1.0;
    json["environment"]["device"]["copy_engines"] = 3;
    json["kernels"].erase("verified");
    EXPECT_EQ(records::schema_problems(json, records::kGpuMemorySchema),
              (std::vector<std::string>{"environment.device.copy_engines: an integer, not string",
                                        "kernels.verified: missing",
                                        "copies.pinned[0].h2d_gbs: not in the schema"}));
    try {
        records::gpu_memory_from_json(json, "gpu.json");
        FAIL() << "a record outside its schema was read";
    } catch (const Error& e) {
        EXPECT_STREQ(
            e.what(),
            "gpu.json: environment.device.copy_engines: an integer, not string (and 2 more)");
    }
    EXPECT_TRUE(records::names_field(records::kGpuMemorySchema, "environment.device.pci_bus_id"));
    EXPECT_TRUE(records::names_field(records::kGpuMemorySchema, "copies.pinned.3.d2h_gbps"));
    EXPECT_TRUE(records::names_field(records::kGpuMemorySchema, "config.sizes.2"));
    EXPECT_FALSE(records::names_field(records::kGpuMemorySchema, "copies.pinned.3.d2h_gbs"));
    EXPECT_FALSE(records::names_field(records::kGpuMemorySchema, "environment.device.a.b"));
}

TEST(GpuMemoryRecord, TheSchemaFileIsTheSchema) {
    const std::string path = std::string(RDMALAB_SOURCE_DIR) + "/records/schema/gpu-memory.json";
    const std::string schema =
        records::schema_json("rdmalab gpu-memory-bench record",
                             "one run of gpu-memory-bench (records/gpu_memory.hpp)",
                             records::kGpuMemorySchema)
            .dump(2) +
        "\n";
    if (std::getenv("RDMALAB_UPDATE_SCHEMAS")) std::ofstream(path) << schema;
    EXPECT_EQ(gpu_memory_text_of(path), schema)
        << path << " differs from kGpuMemorySchema: RDMALAB_UPDATE_SCHEMAS=1 build/bin/unit_tests";
}

TEST(GpuMemoryRecord, EveryCommittedRecordReadsBackAndMakesItsReport) {
    int records_read = 0;
    for (const auto& entry : std::filesystem::directory_iterator(
             std::filesystem::path(RDMALAB_SOURCE_DIR) / "gpu/results")) {
        if (entry.path().extension() != ".json") continue;
        const std::string path = entry.path().string();
        const std::string text = gpu_memory_text_of(path);
        const records::GpuMemoryRecord record =
            records::gpu_memory_from_json(records::parse_json(text, path), path);
        EXPECT_EQ(records::to_json(record).dump(2) + "\n", text) << path;
        std::filesystem::path report = entry.path();
        report.replace_extension(".md");
        EXPECT_EQ(to_markdown(record), gpu_memory_text_of(report.string())) << report;
        ++records_read;
    }
    EXPECT_GE(records_read, 3);
}

}  // namespace rdmalab::bench::gpu_memory
