// Command-line conventions every lesson shares: `server` or `client ADDR`, then -d device,
// -p port, -s size, --gid-index, --timeout, as rdma-core's and perftest's tools do. CLI11 does
// the parsing inside options.cpp only: it is header-only and slow to compile, so a lesson
// describes its options through CommandLine and never includes it.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace rdmalab {

inline constexpr std::uint16_t kDefaultPort = 18515;  // perftest's default port

struct ConnectionOptions {
    bool server = false;
    std::string server_address;  // client: where the server listens
    std::string bind_address;    // server: the local address to listen on (empty: all)
    std::string device;          // -d: require this RDMA device (empty: whichever the address uses)
    std::uint16_t port = kDefaultPort;
    std::size_t size = 4096;
    int gid_index = -1;  // -1: accept the GID rdma_cm derives from the IP address
    int tclass = -1;  // --tclass: the IP header's traffic class (DSCP << 2 | ECN); -1: the default
    double timeout_s = 10;         // every wait during a connection
    double accept_timeout_s = 60;  // how long a server waits for its client

    // The same as the durations every wait takes (converted here, and only here).
    std::chrono::milliseconds timeout() const;
    std::chrono::milliseconds accept_timeout() const;
};

// Seconds as given on a command line → the duration a wait takes.
std::chrono::milliseconds to_milliseconds(double seconds);

// The connection options plus -i/--ib-port, for programs that connect QPs by hand: without
// rdma_cm there is no IP address to pick the device, so -d chooses it (default: the first
// device) and --gid-index the source GID.
struct QpOptions : ConnectionOptions {
    std::uint8_t ib_port = 1;
};

// One option of a CommandLine, to refine after adding it.
class OptionRef {
  public:
    explicit OptionRef(CLI::Option* option) : option_(option) {}
    template <typename T>
    OptionRef& range(T min, T max);  // refuse values outside [min, max]
    OptionRef& choices(const std::vector<std::string>& allowed);
    // A check of the text given: returns "" if it is fine, else what is wrong.
    OptionRef& check(std::function<std::string(const std::string&)> validator);
    // For a size (parse_size): text that is not one is refused, "'3X' is not a size (examples:
    // 4096, 64K, 1M)".
    OptionRef& is_size();
    // For a size (parse_size): one below minimum is refused, "'4' is too small: WHY". Text that
    // is not a size is left to the option's own check.
    OptionRef& size_at_least(std::size_t minimum, const std::string& why);
    OptionRef& description(const std::string& text);
    OptionRef& show_default();  // print the current value as the default in --help
    OptionRef& required();

  private:
    CLI::Option* option_;
};

// A program's command line (or one of its subcommands: subcommand() returns a view).
class CommandLine {
  public:
    CommandLine(const std::string& description, const std::string& name);
    ~CommandLine();
    CommandLine(CommandLine&&) noexcept;
    CommandLine(const CommandLine&) = delete;
    CommandLine& operator=(const CommandLine&) = delete;

    // Adds the `server` and `client ADDR` subcommands and the shared options.
    void add_connection_options(ConnectionOptions& options);
    // "-n,--iters": an option that sets value (int, unsigned, size_t, uint8/16, double, string).
    template <typename T>
    OptionRef option(const std::string& names, T& value, const std::string& help);
    OptionRef flag(const std::string& names, bool& value, const std::string& help);
    // "--trace FILE" (trace.hpp), as the connection options have it: for programs that make
    // their connections themselves.
    void add_trace_option();
    OptionRef existing(const std::string& name);  // an option added before (to re-describe)
    void remove(const std::string& name);
    CommandLine subcommand(const std::string& name);  // "server" or "client"
    // Another subcommand beside server and client (a mode that needs no peer, for example); the
    // program's options fall through to it. After parsing, chose(name) says whether it was given.
    CommandLine add_subcommand(const std::string& name, const std::string& description);
    bool chose(const std::string& subcommand) const;
    void describe(const std::string& text);
    void alias(const std::string& name);
    // Parses argv. --help prints usage and exits 0; bad input prints one line
    // "program: what is wrong (run with --help for usage)" and exits 2.
    void parse_or_exit(int argc, char** argv);
    bool given(const std::string& name) const;  // after parsing: was the option on the line?
    CLI::App& app() { return *app_; }           // for code that includes CLI11 itself

  private:
    explicit CommandLine(CLI::App* view);  // a subcommand: not owned
    std::unique_ptr<CLI::App> owned_;
    CLI::App* app_;
};

// The connection options and -i/--ib-port, described for a hand-made connection.
void add_qp_options(CommandLine& cli, QpOptions& options);

// The same for a CLI::App of one's own (tools that include CLI11 themselves).
void add_connection_options(CLI::App& app, ConnectionOptions& options);
void parse_or_exit(CLI::App& app, int argc, char** argv);

// "4096", "64K", "1M", "2G" (powers of 1024) → bytes; nullopt for 0, garbage or overflow.
std::optional<std::size_t> parse_size(const std::string& text);

// A numeric IPv4 or IPv6 address and port → socket address; nullopt if not numeric.
std::optional<sockaddr_storage> parse_ip_address(const std::string& text, std::uint16_t port);

}  // namespace rdmalab
