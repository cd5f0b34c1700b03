// Unit tests of the GPU memory layer that need neither a GPU nor an RDMA device.
#include "device_pattern.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/gpu/memory.hpp"
#include "rdmalab/gpu/options.hpp"
#include "rdmalab/pattern.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

namespace gpu = rdmalab::gpu;
using gpu::MemoryKind;
using gpu::MemorySpec;

TEST(GpuMemorySpec, ParsesKindsAndDevices) {
    EXPECT_EQ(gpu::parse_memory_spec("host"), (MemorySpec{MemoryKind::kHost, 0}));
    EXPECT_EQ(gpu::parse_memory_spec("cuda"), (MemorySpec{MemoryKind::kCuda, 0}));
    EXPECT_EQ(gpu::parse_memory_spec("cuda:3"), (MemorySpec{MemoryKind::kCuda, 3}));
    EXPECT_EQ(gpu::parse_memory_spec("rocm:1"), (MemorySpec{MemoryKind::kRocm, 1}));
    EXPECT_EQ(gpu::to_string({MemoryKind::kCuda, 2}), "cuda:2");
    EXPECT_EQ(gpu::to_string({MemoryKind::kHost, 0}), "host");
}

TEST(GpuMemorySpec, RefusesAnythingElse) {
    for (const char* bad : {"", "gpu", "CUDA", "cuda:", "cuda:-1", "cuda:x", "cuda:1x", "host:0",
                            "rocm:99999", "cuda:1:2", " cuda"})
        EXPECT_FALSE(gpu::parse_memory_spec(bad)) << bad;
}

TEST(GpuMemorySpec, PathRequests) {
    EXPECT_EQ(gpu::parse_path_request("auto"), gpu::PathRequest::kAuto);
    EXPECT_EQ(gpu::parse_path_request("dma-buf"), gpu::PathRequest::kDmaBuf);
    EXPECT_EQ(gpu::parse_path_request("peer"), gpu::PathRequest::kPeerMemory);
    EXPECT_EQ(gpu::parse_path_request("staging"), gpu::PathRequest::kStaging);
    EXPECT_FALSE(gpu::parse_path_request("bounce"));
}

TEST(GpuOptions, ParseAndRefuseImpossibleCombinations) {
    auto parse = [](std::vector<std::string> args, gpu::MemoryOptions& options) {
        CLI::App app{"test"};
        gpu::add_memory_options(app, options);
        std::reverse(args.begin(), args.end());
        app.parse(args);
    };
    gpu::MemoryOptions options;
    parse({"--mem", "cuda:1", "--path", "staging"}, options);
    EXPECT_EQ(options.memory, (MemorySpec{MemoryKind::kCuda, 1}));
    EXPECT_EQ(options.path, gpu::PathRequest::kStaging);
    gpu::MemoryOptions bad;
    EXPECT_THROW(parse({"--mem", "gpu"}, bad), CLI::ValidationError);
    EXPECT_THROW(parse({"--path", "dma-buf"}, bad),
                 CLI::ValidationError);  // host memory by default
}

// The kernels compute the pattern with device_pattern_byte; the CPU side with pattern_byte.
TEST(GpuPattern, DeviceFunctionMatchesTheCpuPattern) {
    for (std::uint64_t seed : {0ull, 0x57ull, 0x52ull, ~0ull})
        for (std::size_t i = 0; i < 100000; i += 7)
            ASSERT_EQ(static_cast<unsigned char>(rdmalab::pattern_byte(seed, i)),
                      gpu::device_pattern_byte(seed, i));
}

TEST(GpuHostMemory, FillVerifyAndCopy) {
    gpu::DeviceMemory memory({MemoryKind::kHost, 0}, 1000);
    EXPECT_EQ(memory.find_mismatch(9, 0), std::nullopt);  // zero-filled
    memory.fill_pattern(9, 600);
    EXPECT_EQ(memory.find_mismatch(9, 600), std::nullopt);
    EXPECT_EQ(memory.find_mismatch(9, 601), 600u);  // byte 600 was not written
    EXPECT_EQ(memory.find_mismatch(9, 500), 500u);  // bytes past the count must be zero
    std::vector<std::byte> copy(600);
    memory.copy_to_host(copy);
    EXPECT_EQ(rdmalab::find_pattern_mismatch(copy, 9), std::nullopt);
    std::vector<std::byte> one{std::byte{0x5a}};
    memory.copy_from_host(one, 10);
    EXPECT_EQ(memory.find_mismatch(9, 600), 10u);
    EXPECT_THROW(memory.copy_from_host(one, 1000), rdmalab::Error);
}

// A window of the buffer checked on its own (rdma-bench's destination slot): pattern, then zeros.
TEST(GpuHostMemory, VerifiesAWindow) {
    gpu::DeviceMemory memory({MemoryKind::kHost, 0}, 1000);
    std::vector<std::byte> pattern(300);
    rdmalab::fill_pattern(pattern, 4);
    memory.copy_from_host(pattern, 500);
    EXPECT_EQ(memory.find_mismatch(4, 300, 500, 500), std::nullopt);
    EXPECT_EQ(memory.find_mismatch(4, 301, 500, 500), 300u);  // counted from the window's start
    EXPECT_EQ(memory.find_mismatch(4, 300, 499, 501), 0u);    // a shifted window fails at once
    EXPECT_EQ(memory.find_mismatch(5, 300, 500, 500), 0u);    // another seed's pattern
    std::vector<std::byte> stray{std::byte{1}};
    memory.copy_from_host(stray, 999);
    EXPECT_EQ(memory.find_mismatch(4, 300, 500, 500), 499u);               // a byte past the count
    EXPECT_THROW(memory.find_mismatch(4, 300, 800, 300), rdmalab::Error);  // past the end
    EXPECT_THROW(memory.find_mismatch(4, 301, 500, 300), rdmalab::Error);  // count > length
}

namespace {
std::filesystem::path fake_sysfs(std::initializer_list<const char*> dirs) {
    auto root = std::filesystem::temp_directory_path() /
                ("gpu-sysfs-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()));
    std::filesystem::create_directories(root / "module");
    for (const char* dir : dirs) std::filesystem::create_directories(root / dir);
    return root;
}
}  // namespace

TEST(GpuPeerMemoryProbe, AbsentSaysWhatWasMissing) {
    auto root = fake_sysfs({});
    auto probe = gpu::probe_peer_memory(MemoryKind::kCuda, root);
    EXPECT_FALSE(probe.usable);
    EXPECT_EQ(probe.line,
              "peer memory: absent (no nvidia_peermem or nv_peer_mem module, no "
              "/sys/kernel/mm/memory_peers): ibv_reg_mr cannot pin GPU memory here");
    auto amd = gpu::probe_peer_memory(MemoryKind::kRocm, root);
    EXPECT_FALSE(amd.usable);
    EXPECT_NE(amd.line.find("no amdkfd peer client"), std::string::npos) << amd.line;
    std::filesystem::remove_all(root);
}

TEST(GpuPeerMemoryProbe, FindsModulesAndClients) {
    auto root = fake_sysfs({"module/nvidia_peermem", "kernel/mm/memory_peers/amdkfd"});
    auto nvidia = gpu::probe_peer_memory(MemoryKind::kCuda, root);
    EXPECT_TRUE(nvidia.usable);
    EXPECT_EQ(nvidia.line, "peer memory: module nvidia_peermem loaded");
    auto amd = gpu::probe_peer_memory(MemoryKind::kRocm, root);
    EXPECT_TRUE(amd.usable);
    EXPECT_EQ(amd.line, "peer memory: amdkfd's client in /sys/kernel/mm/memory_peers");
    std::filesystem::remove_all(root);
    auto only_amd = fake_sysfs({"kernel/mm/memory_peers/amdkfd"});
    auto none_for_cuda = gpu::probe_peer_memory(MemoryKind::kCuda, only_amd);
    EXPECT_FALSE(none_for_cuda.usable);
    EXPECT_NE(none_for_cuda.line.find("memory_peers has only amdkfd"), std::string::npos)
        << none_for_cuda.line;
    std::filesystem::remove_all(only_amd);
}

// Without a backend, or without the driver, --mem cuda is one clear line (on a GPU machine
// the allocation simply works, and this test only checks that).
TEST(GpuCudaMemory, MissingBackendOrDriverIsOneClearLine) {
    try {
        gpu::DeviceMemory memory({MemoryKind::kCuda, 0}, 4096);
        EXPECT_TRUE(gpu::backend_built(MemoryKind::kCuda));
        EXPECT_EQ(memory.find_mismatch(1, 0), std::nullopt);
    } catch (const rdmalab::Error& e) {
        const std::string message = e.what();
        EXPECT_EQ(message.find('\n'), std::string::npos);
        EXPECT_EQ(message.rfind("--mem cuda: ", 0), 0u) << message;
        if (!gpu::backend_built(MemoryKind::kCuda)) {
            EXPECT_NE(message.find("no CUDA backend"), std::string::npos) << message;
        } else if (void* driver = dlopen("libcuda.so.1", RTLD_NOW)) {
            dlclose(driver);  // a driver but no usable device: the runtime's reason
            EXPECT_NE(message.find("cuda"), std::string::npos) << message;
        } else {
            EXPECT_EQ(message, "--mem cuda: no CUDA driver (libcuda.so.1 not found)");
        }
    }
}
