// Command-line conventions every lesson shares (CLI11): `server` or `client ADDR`, then
// -d device, -p port, -s size, --gid-index, --timeout, as rdma-core's and perftest's tools do.
#pragma once

#include <sys/socket.h>
#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace rdmalab {

inline constexpr std::uint16_t kDefaultPort = 18515;  // perftest's default port

struct ConnectionOptions {
    bool server = false;
    std::string server_address;  // client: where the server listens
    std::string bind_address;    // server: the local address to listen on (empty: all)
    std::string device;          // -d: require this RDMA device (empty: whichever the address uses)
    std::uint16_t port = kDefaultPort;
    std::size_t size = 4096;
    int gid_index = -1;            // -1: accept the GID rdma_cm derives from the IP address
    double timeout_s = 10;         // every wait during a connection
    double accept_timeout_s = 60;  // how long a server waits for its client
};

// Adds the `server` and `client ADDR` subcommands and the shared options to app.
void add_connection_options(CLI::App& app, ConnectionOptions& options);

// Parses argv. --help prints usage and exits 0; bad input prints one line
// "program: what is wrong (run with --help for usage)" and exits 2.
void parse_or_exit(CLI::App& app, int argc, char** argv);

// "4096", "64K", "1M", "2G" (powers of 1024) → bytes; nullopt for 0, garbage or overflow.
std::optional<std::size_t> parse_size(const std::string& text);

// A numeric IPv4 or IPv6 address and port → socket address; nullopt if not numeric.
std::optional<sockaddr_storage> parse_ip_address(const std::string& text, std::uint16_t port);

}  // namespace rdmalab
