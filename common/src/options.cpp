// Shared command-line handling: see options.hpp.
#include "rdmalab/options.hpp"

#include "rdmalab/trace.hpp"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <netinet/in.h>
#include <CLI/CLI.hpp>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace rdmalab {

std::optional<std::size_t> parse_size(const std::string& text) {
    if (text.empty() || !std::isdigit(static_cast<unsigned char>(text.front()))) return {};
    std::size_t digits = 0;
    unsigned long long value = 0;
    for (; digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]));
         ++digits) {
        unsigned d = static_cast<unsigned>(text[digits] - '0');
        if (value > (std::numeric_limits<unsigned long long>::max() - d) / 10) return {};
        value = value * 10 + d;
    }
    std::string suffix = text.substr(digits);
    unsigned shift = 0;
    if (suffix == "K" || suffix == "k" || suffix == "KiB")
        shift = 10;
    else if (suffix == "M" || suffix == "m" || suffix == "MiB")
        shift = 20;
    else if (suffix == "G" || suffix == "g" || suffix == "GiB")
        shift = 30;
    else if (!suffix.empty())
        return {};
    if (value == 0 || value > (std::numeric_limits<std::size_t>::max() >> shift)) return {};
    return static_cast<std::size_t>(value) << shift;
}

std::optional<sockaddr_storage> parse_ip_address(const std::string& text, std::uint16_t port) {
    sockaddr_storage storage{};
    auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
    if (inet_pton(AF_INET, text.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        return storage;
    }
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
    if (inet_pton(AF_INET6, text.c_str(), &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        return storage;
    }
    return {};
}

namespace {

void add_trace_option(CLI::App& app) {
    // Opened while parsing, so a file that cannot be written is a one-line usage error.
    app.add_option_function<std::string>(
           "--trace",
           [](const std::string& path) {
               try {
                   trace::open(path);
               } catch (const std::exception& e) {
                   throw CLI::ValidationError("--trace", e.what());
               }
           },
           "write this process's verbs calls, completions and steps to FILE as JSON lines")
        ->type_name("FILE");
}

void add_shared_options(CLI::App& app, ConnectionOptions& options) {
    app.add_option("-d,--ib-dev", options.device,
                   "RDMA device to use (default: the one the address is on)");
    app.add_option("-p,--port", options.port, "TCP-style port rdma_cm listens on / connects to")
        ->check(CLI::Range(1, 65535));
    app.add_option_function<std::string>(
           "-s,--size",
           [&options](const std::string& text) {
               auto size = parse_size(text);
               if (!size)
                   throw CLI::ValidationError(
                       "--size",
                       "'" + text + "' is not a size of at least 1 byte (examples: 4096, 64K, 1M)");
               options.size = *size;
           },
           "message/buffer size in bytes (K, M, G suffixes allowed)")
        ->default_str(std::to_string(options.size));
    app.add_option(
           "--gid-index", options.gid_index,
           "GID index the connection must use (default: the one rdma_cm picks from the address)")
        ->check(CLI::Range(0, 1023));
    app.add_option("--tclass", options.tclass,
                   "traffic class of this side's packets: DSCP << 2 | ECN (106: DSCP 26, ECT(0)); "
                   "with rdma_cm the client's class is the connection's")
        ->check(CLI::Range(0, 255));
    app.add_option("--timeout", options.timeout_s, "seconds to wait for each step of a connection")
        ->check(CLI::Range(0.1, 3600.0))
        ->capture_default_str();
    add_trace_option(app);
}

}  // namespace

void add_connection_options(CLI::App& app, ConnectionOptions& options) {
    add_shared_options(app, options);
    app.require_subcommand(1);
    auto* server = app.add_subcommand("server", "wait for a client, then serve it");
    server->fallthrough();
    server->add_option("-b,--bind", options.bind_address,
                       "local IP address to listen on (default: all)");
    server->add_option("--accept-timeout", options.accept_timeout_s, "seconds to wait for a client")
        ->check(CLI::Range(0.1, 86400.0))
        ->capture_default_str();
    server->callback([&options] {
        options.server = true;
        if (!options.bind_address.empty() && !parse_ip_address(options.bind_address, options.port))
            throw CLI::ValidationError(
                "--bind", "'" + options.bind_address + "' is not a numeric IPv4/IPv6 address");
    });
    auto* client = app.add_subcommand("client", "connect to a server");
    client->fallthrough();
    client
        ->add_option("address", options.server_address,
                     "the server's IP address on its RDMA interface")
        ->required();
    client->callback([&options] {
        options.server = false;
        if (!parse_ip_address(options.server_address, options.port))
            throw CLI::ValidationError(
                "address",
                "'" + options.server_address +
                    "' is not a numeric IPv4/IPv6 address (give the server's IP address)");
    });
}

void parse_or_exit(CLI::App& app, int argc, char** argv) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        std::exit(app.exit(e));
    } catch (const CLI::CallForAllHelp& e) {
        std::exit(app.exit(e));
    } catch (const CLI::ParseError& e) {
        // One line, whatever CLI11's message looks like.
        std::string message = e.what();
        for (char& c : message)
            if (c == '\n') c = ' ';
        fmt::print(stderr, "{}: {} (run with --help for usage)\n", app.get_name(), message);
        std::exit(2);
    }
}

std::chrono::milliseconds to_milliseconds(double seconds) {
    return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
}
std::chrono::milliseconds ConnectionOptions::timeout() const {
    return to_milliseconds(timeout_s);
}
std::chrono::milliseconds ConnectionOptions::accept_timeout() const {
    return to_milliseconds(accept_timeout_s);
}

// ---- CommandLine: CLI11 behind a small interface.

template <typename T>
OptionRef& OptionRef::range(T min, T max) {
    option_->check(CLI::Range(min, max));
    return *this;
}
template OptionRef& OptionRef::range<int>(int, int);
template OptionRef& OptionRef::range<unsigned>(unsigned, unsigned);
template OptionRef& OptionRef::range<unsigned long>(unsigned long, unsigned long);
template OptionRef& OptionRef::range<double>(double, double);

OptionRef& OptionRef::choices(const std::vector<std::string>& allowed) {
    option_->check(CLI::IsMember(allowed));
    return *this;
}

OptionRef& OptionRef::check(std::function<std::string(const std::string&)> validator) {
    option_->check(CLI::Validator(
        [validator = std::move(validator)](std::string& text) { return validator(text); }, ""));
    return *this;
}

OptionRef& OptionRef::size_at_least(std::size_t minimum, const std::string& why) {
    return check([minimum, why](const std::string& text) {
        auto size = parse_size(text);
        return size && *size < minimum ? fmt::format("'{}' is too small: {}", text, why)
                                       : std::string();
    });
}

OptionRef& OptionRef::is_size() {
    return check([](const std::string& text) {
        return parse_size(text) ? std::string()
                                : fmt::format("'{}' is not a size (examples: 4096, 64K, 1M)", text);
    });
}

OptionRef& OptionRef::description(const std::string& text) {
    option_->description(text);
    return *this;
}

OptionRef& OptionRef::show_default() {
    option_->capture_default_str();
    return *this;
}

OptionRef& OptionRef::required() {
    option_->required();
    return *this;
}

CommandLine::CommandLine(const std::string& description, const std::string& name)
    : owned_(std::make_unique<CLI::App>(description, name)), app_(owned_.get()) {}
CommandLine::CommandLine(CLI::App* view) : app_(view) {}
CommandLine::~CommandLine() = default;
CommandLine::CommandLine(CommandLine&&) noexcept = default;

void CommandLine::add_connection_options(ConnectionOptions& options) {
    rdmalab::add_connection_options(*app_, options);
}

template <typename T>
OptionRef CommandLine::option(const std::string& names, T& value, const std::string& help) {
    CLI::Option* option = app_->add_option(names, value, help);
    if constexpr (std::is_same_v<T, std::uint8_t>)  // would print as a character
        option->default_str(std::to_string(value));
    return OptionRef(option);
}
template OptionRef CommandLine::option<int>(const std::string&, int&, const std::string&);
template OptionRef CommandLine::option<unsigned>(const std::string&, unsigned&, const std::string&);
template OptionRef CommandLine::option<unsigned long>(const std::string&, unsigned long&,
                                                      const std::string&);
template OptionRef CommandLine::option<std::uint8_t>(const std::string&, std::uint8_t&,
                                                     const std::string&);
template OptionRef CommandLine::option<std::uint16_t>(const std::string&, std::uint16_t&,
                                                      const std::string&);
template OptionRef CommandLine::option<double>(const std::string&, double&, const std::string&);
template OptionRef CommandLine::option<std::string>(const std::string&, std::string&,
                                                    const std::string&);

void CommandLine::add_trace_option() {
    rdmalab::add_trace_option(*app_);
}

OptionRef CommandLine::flag(const std::string& names, bool& value, const std::string& help) {
    return OptionRef(app_->add_flag(names, value, help));
}

OptionRef CommandLine::existing(const std::string& name) {
    return OptionRef(app_->get_option(name));
}

void CommandLine::remove(const std::string& name) {
    app_->remove_option(app_->get_option(name));
}

CommandLine CommandLine::subcommand(const std::string& name) {
    return CommandLine(app_->get_subcommand(name));
}

CommandLine CommandLine::add_subcommand(const std::string& name, const std::string& description) {
    CLI::App* sub = app_->add_subcommand(name, description);
    sub->fallthrough();
    return CommandLine(sub);
}

bool CommandLine::chose(const std::string& subcommand) const {
    return app_->get_subcommand(subcommand)->parsed();
}

void CommandLine::describe(const std::string& text) {
    app_->description(text);
}

void CommandLine::alias(const std::string& name) {
    app_->alias(name);
}

void CommandLine::parse_or_exit(int argc, char** argv) {
    rdmalab::parse_or_exit(*app_, argc, argv);
}

bool CommandLine::given(const std::string& name) const {
    return app_->get_option(name)->count() > 0;
}

void add_qp_options(CommandLine& cli, QpOptions& options) {
    cli.add_connection_options(options);
    // Same flags as the rdma_cm lessons, but here nothing is derived from an IP address.
    cli.existing("--ib-dev").description("RDMA device to use (default: the first one)");
    cli.existing("--port").description("TCP port of the out-of-band exchange");
    cli.existing("--gid-index")
        .description("source GID index (default: the RoCE v2 GID with an IPv4 address)");
    cli.option("-i,--ib-port", options.ib_port, "port of the RDMA device").range(1, 255);
}

}  // namespace rdmalab
