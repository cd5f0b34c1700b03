// Unit tests for the shared command line: sizes, addresses, and one-line errors on bad input.
#include "rdmalab/options.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <CLI/CLI.hpp>

#include <vector>

using namespace rdmalab;

namespace {

// Parses args (program name first) into options; CLI11 throws on bad input.
ConnectionOptions parse(std::vector<std::string> args) {
    CLI::App app{"test", "lesson"};
    ConnectionOptions options;
    add_connection_options(app, options);
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    app.parse(static_cast<int>(argv.size()), argv.data());
    return options;
}

// Runs parse_or_exit in a child process: bad input must exit 2 with one line on stderr.
void parse_or_exit_with(std::vector<std::string> args) {
    CLI::App app{"test", "lesson"};
    ConnectionOptions options;
    add_connection_options(app, options);
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    parse_or_exit(app, static_cast<int>(argv.size()), argv.data());
    std::exit(0);
}

}  // namespace

TEST(ParseSize, AcceptsPlainNumbersAndBinarySuffixes) {
    EXPECT_EQ(parse_size("1"), 1u);
    EXPECT_EQ(parse_size("4096"), 4096u);
    EXPECT_EQ(parse_size("64K"), 64u * 1024);
    EXPECT_EQ(parse_size("1M"), 1u << 20);
    EXPECT_EQ(parse_size("2G"), 2ull << 30);
    EXPECT_EQ(parse_size("8KiB"), 8192u);
}

TEST(ParseSize, RejectsZeroGarbageAndOverflow) {
    for (const char* bad : {"0", "", "-1", "abc", "12x", "1.5K", "K", " 5", "0K",
                            "99999999999999999999999", "17179869184G"})
        EXPECT_FALSE(parse_size(bad).has_value()) << bad;
}

TEST(ParseIpAddress, AcceptsNumericIpv4AndIpv6) {
    auto v4 = parse_ip_address("198.51.100.1", 18515);
    ASSERT_TRUE(v4);
    const auto* in = reinterpret_cast<const sockaddr_in*>(&*v4);
    EXPECT_EQ(in->sin_family, AF_INET);
    EXPECT_EQ(ntohs(in->sin_port), 18515);
    auto v6 = parse_ip_address("::1", 7);
    ASSERT_TRUE(v6);
    EXPECT_EQ(v6->ss_family, AF_INET6);
}

TEST(ParseIpAddress, RejectsNamesAndGarbage) {
    for (const char* bad : {"", "localhost", "banana", "198.51.100", "198.51.100.256", "1.2.3.4:5"})
        EXPECT_FALSE(parse_ip_address(bad, 1).has_value()) << bad;
}

TEST(ConnectionOptions, ServerAndClientWithDefaults) {
    auto server = parse({"lesson", "server"});
    EXPECT_TRUE(server.server);
    EXPECT_EQ(server.port, kDefaultPort);
    EXPECT_EQ(server.size, 4096u);
    auto client =
        parse({"lesson", "client", "198.51.100.1", "-s", "64K", "-p", "7000", "-d", "rxe0"});
    EXPECT_FALSE(client.server);
    EXPECT_EQ(client.server_address, "198.51.100.1");
    EXPECT_EQ(client.size, 65536u);
    EXPECT_EQ(client.port, 7000);
    EXPECT_EQ(client.device, "rxe0");
}

TEST(ConnectionOptions, SharedOptionsMayComeBeforeTheRole) {
    auto client = parse({"lesson", "-s", "1M", "client", "198.51.100.1", "--timeout", "2.5"});
    EXPECT_EQ(client.size, 1u << 20);
    EXPECT_DOUBLE_EQ(client.timeout_s, 2.5);
}

TEST(ConnectionOptions, BadInputThrows) {
    EXPECT_THROW(parse({"lesson"}), CLI::ParseError);
    EXPECT_THROW(parse({"lesson", "client"}), CLI::ParseError);
    EXPECT_THROW(parse({"lesson", "client", "banana"}), CLI::ParseError);
    EXPECT_THROW(parse({"lesson", "server", "-s", "0"}), CLI::ParseError);
    EXPECT_THROW(parse({"lesson", "server", "-p", "0"}), CLI::ParseError);
    EXPECT_THROW(parse({"lesson", "server", "-p", "70000"}), CLI::ParseError);
    EXPECT_THROW(parse({"lesson", "server", "--timeout", "abc"}), CLI::ParseError);
    EXPECT_THROW(parse({"lesson", "server", "--bind", "somehost"}), CLI::ParseError);
    EXPECT_THROW(parse({"lesson", "frobnicate"}), CLI::ParseError);
    EXPECT_THROW(parse({"lesson", "server", "--no-such-option"}), CLI::ParseError);
}

TEST(ParseOrExit, BadInputExitsTwoWithOneLine) {
    // The regex must match the whole stderr: one line ending in the usage hint.
    EXPECT_EXIT(parse_or_exit_with({"lesson", "client", "198.51.100.1", "-s", "0"}),
                testing::ExitedWithCode(2),
                "^lesson: [^\n]*--size[^\n]*\\(run with --help for usage\\)\n$");
    EXPECT_EXIT(parse_or_exit_with({"lesson", "server", "--what"}), testing::ExitedWithCode(2),
                "^lesson: [^\n]*\\(run with --help for usage\\)\n$");
    EXPECT_EXIT(parse_or_exit_with({"lesson"}), testing::ExitedWithCode(2),
                "^lesson: [^\n]*\\(run with --help for usage\\)\n$");
}

TEST(ParseOrExit, HelpExitsZero) {
    EXPECT_EXIT(parse_or_exit_with({"lesson", "--help"}), testing::ExitedWithCode(0), "");
}

TEST(CommandLine, AnotherSubcommandBesideServerAndClient) {
    auto parse_line = [](std::vector<std::string> args, ConnectionOptions& options,
                         CommandLine& cli) {
        cli.add_connection_options(options);
        cli.add_subcommand("no-nic", "a mode without a peer");
        std::vector<char*> argv;
        for (auto& arg : args) argv.push_back(arg.data());
        cli.app().parse(static_cast<int>(argv.size()), argv.data());
    };
    {
        CommandLine cli{"test", "lesson"};
        ConnectionOptions options;
        parse_line({"lesson", "no-nic", "-s", "64"}, options, cli);
        EXPECT_TRUE(cli.chose("no-nic"));
        EXPECT_FALSE(cli.chose("server"));
        EXPECT_FALSE(cli.chose("client"));
        EXPECT_EQ(options.size, 64u);  // the program's options reach the new subcommand
    }
    {
        CommandLine cli{"test", "lesson"};
        ConnectionOptions options;
        parse_line({"lesson", "server"}, options, cli);
        EXPECT_FALSE(cli.chose("no-nic"));
        EXPECT_TRUE(options.server);
    }
    {
        CommandLine cli{"test", "lesson"};
        ConnectionOptions options;
        EXPECT_THROW(parse_line({"lesson", "no-nic", "server"}, options, cli), CLI::ParseError);
    }
}

TEST(CommandLine, SizeAtLeastRefusesSmallerSizesOnly) {
    auto parse_line = [](std::vector<std::string> args) {
        CommandLine cli{"test", "lesson"};
        ConnectionOptions options;
        cli.add_connection_options(options);
        cli.existing("--size").size_at_least(8, "every message starts with an 8-byte header");
        std::vector<char*> argv;
        for (auto& arg : args) argv.push_back(arg.data());
        cli.app().parse(static_cast<int>(argv.size()), argv.data());
        return options.size;
    };
    EXPECT_EQ(parse_line({"lesson", "server", "-s", "8"}), 8u);
    EXPECT_EQ(parse_line({"lesson", "server", "-s", "1K"}), 1024u);
    EXPECT_EQ(parse_line({"lesson", "server"}), 4096u);  // the default is not checked
    try {
        parse_line({"lesson", "server", "-s", "4"});
        FAIL() << "a size below the minimum was accepted";
    } catch (const CLI::ValidationError& e) {
        EXPECT_NE(std::string(e.what()).find(
                      "'4' is too small: every message starts with an 8-byte header"),
                  std::string::npos)
            << e.what();
    }
    // Garbage is the option's own check's to name, not this one's.
    try {
        parse_line({"lesson", "server", "-s", "abc"});
        FAIL() << "garbage was accepted";
    } catch (const CLI::ValidationError& e) {
        EXPECT_EQ(std::string(e.what()).find("too small"), std::string::npos) << e.what();
    }
}

TEST(CommandLine, IsSizeRefusesTextThatIsNotASize) {
    auto parse_line = [](std::vector<std::string> args) {
        CommandLine cli{"test", "tool"};
        std::string size = "64K";
        cli.option("-s,--size", size, "bytes").is_size();
        std::vector<char*> argv;
        for (auto& arg : args) argv.push_back(arg.data());
        cli.app().parse(static_cast<int>(argv.size()), argv.data());
        return size;
    };
    EXPECT_EQ(parse_line({"tool", "-s", "1M"}), "1M");
    EXPECT_EQ(parse_line({"tool"}), "64K");
    try {
        parse_line({"tool", "-s", "3X"});
        FAIL() << "'3X' was accepted as a size";
    } catch (const CLI::ValidationError& e) {
        EXPECT_NE(std::string(e.what()).find("'3X' is not a size (examples: 4096, 64K, 1M)"),
                  std::string::npos)
            << e.what();
    }
}
