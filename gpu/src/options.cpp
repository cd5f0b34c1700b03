// --mem and --path for programs that use GPU memory: see options.hpp.
#include "rdmalab/gpu/options.hpp"

#include <CLI/CLI.hpp>

namespace rdmalab::gpu {

void add_memory_options(CLI::App& app, MemoryOptions& options) {
    app.add_option_function<std::string>(
           "--mem",
           [&options](const std::string& text) {
               auto spec = parse_memory_spec(text);
               if (!spec)
                   throw CLI::ValidationError(
                       "--mem", "'" + text + "' is not a memory kind (host, cuda[:N], rocm[:N])");
               options.memory = *spec;
           },
           "memory the buffer lives in: host, cuda[:N] or rocm[:N] (this build: " +
               built_backends() + ")")
        ->default_str("host");
    app.add_option_function<std::string>(
           "--path",
           [&options](const std::string& text) {
               auto request = parse_path_request(text);
               if (!request)
                   throw CLI::ValidationError(
                       "--path",
                       "'" + text + "' is not a registration path (auto, dma-buf, peer, staging)");
               options.path = *request;
           },
           "how the NIC reaches the buffer: auto (dma-buf, then peer memory, then staging) or one "
           "of them")
        ->default_str("auto");
    // Checked once everything is parsed, whatever the order of the two options.
    app.final_callback([&options] {
        if (options.memory.kind == MemoryKind::kHost &&
            (options.path == PathRequest::kDmaBuf || options.path == PathRequest::kPeerMemory))
            throw CLI::ValidationError(
                "--path", std::string("'") + path_request_name(options.path) +
                              "' needs GPU memory (--mem cuda or rocm); host memory is "
                              "registered as it is or staged");
    });
}

}  // namespace rdmalab::gpu
