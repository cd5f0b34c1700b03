// trace-merge: each host's --trace events and its own capture's packets (rdma-wire --json)
// → one timeline file for the site's viewer, checked for causal order.
//   trace-merge -o OUT.json --host NAME ADDRESS EVENTS.jsonl PACKETS.json [--host …]
//               [--meta META.json]
// Exit 0: written, every check passed; 1: written, a check failed (each violation on stderr);
// 2: bad input (one line saying which file and why), nothing written.
#include "merge.hpp"

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <sstream>

using namespace rdmalab::trace_merge;

namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw InputError(fmt::format("{}: cannot read it", path));
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Merge program traces and packet captures into one timeline", "trace-merge"};
    std::string output, meta_path;
    std::vector<std::vector<std::string>> host_args;
    app.add_option("-o,--output", output, "the timeline file to write")->required();
    app.add_option("--host", host_args,
                   "NAME ADDRESS EVENTS.jsonl PACKETS.json (first: reference clock)")
        ->expected(4)
        ->allow_extra_args(false)
        ->required();
    app.add_option("--meta", meta_path,
                   "a JSON object copied into the timeline (run, environment)");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);
        fmt::print(stderr, "trace-merge: {} (run with --help for usage)\n", e.what());
        return 2;
    }
    try {
        std::vector<HostInput> hosts;
        for (const auto& h : host_args)
            hosts.push_back({h[0], h[1], parse_events(read_text(h[2]), h[2]),
                             parse_packets(read_text(h[3]), h[3])});
        nlohmann::json meta = nlohmann::json::object();
        if (!meta_path.empty()) {
            meta = nlohmann::json::parse(read_text(meta_path), nullptr, false);
            if (meta.is_discarded() || !meta.is_object())
                throw InputError(fmt::format("{}: not a JSON object", meta_path));
        }
        const nlohmann::json merged = merge(hosts, meta);
        std::ofstream out(output);
        if (!(out << merged.dump(1) << '\n'))
            throw InputError(fmt::format("{}: cannot write it", output));
        std::vector<std::string> failures;
        const bool ok = checks_pass(merged, failures);
        for (const auto& c : merged["checks"])
            fmt::print("trace-merge: {} {} ({} checked)\n", c["ok"].get<bool>() ? "ok  " : "FAIL",
                       c["name"].get<std::string>(), c["checked"].get<std::size_t>());
        for (const auto& f : failures) fmt::print(stderr, "trace-merge: {}\n", f);
        fmt::print("trace-merge: {} events, {} packets → {}\n", merged["events"].size(),
                   merged["packets"].size(), output);
        return ok ? 0 : 1;
    } catch (const InputError& e) {
        fmt::print(stderr, "trace-merge: {}\n", e.what());
        return 2;
    } catch (const std::exception& e) {  // nlohmann's type errors on a field of the wrong kind
        fmt::print(stderr, "trace-merge: malformed input: {}\n", e.what());
        return 2;
    }
}
