// trace-merge: each host's --trace events and its own capture's packets (rdma-wire --json)
// → one timeline file for the site's viewer, checked for causal order.
//   trace-merge -o OUT.json --host NAME ADDRESS EVENTS.jsonl PACKETS.json [--host …]
//               [--lesson NAME] [--arguments TEXT] [--ranks N] [--environment KEY=VALUE …]
// Exit 0: written, every check passed; 1: written, a check failed (each violation on stderr);
// 2: bad input (one line saying which file and why), nothing written. The run's "meta" is
// written from the options (story.hpp's RunMeta).
//   trace-merge --story TRACE.json
// prints what a merged trace shows, a line per fact (story.hpp): how tests read a trace.
#include "merge.hpp"
#include "story.hpp"
#include "timeline.hpp"

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
    std::string output, story;
    std::vector<std::vector<std::string>> host_args;
    RunMeta run;
    std::vector<std::string> environment;
    CLI::Option* output_option =
        app.add_option("-o,--output", output, "the timeline file to write");
    CLI::Option* host_option =
        app.add_option("--host", host_args,
                       "NAME ADDRESS EVENTS.jsonl PACKETS.json (first: reference clock)")
            ->expected(4)
            ->allow_extra_args(false);
    app.add_option("--lesson", run.lesson, "meta: the lesson run");
    app.add_option("--arguments", run.arguments, "meta: its arguments, as one text");
    app.add_option("--ranks", run.ranks, "meta: a collective's ranks, rank R on host R+1");
    app.add_option("--environment", environment,
                   "meta: KEY=VALUE, a string of the run's environment (repeatable)");
    app.add_option("--story", story, "print what a merged trace shows, a line per fact")
        ->excludes(output_option)
        ->excludes(host_option);
    try {
        app.parse(argc, argv);
        if (story.empty() && (output.empty() || host_args.empty()))
            throw CLI::ValidationError("-o and --host are required (or --story TRACE.json)");
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);
        fmt::print(stderr, "trace-merge: {} (run with --help for usage)\n", e.what());
        return 2;
    }
    try {
        if (!story.empty()) {
            std::string lines;
            for (const std::string& line : story_lines(read_trace(read_text(story), story)))
                lines += line + "\n";
            fmt::print("{}", lines);
            return 0;
        }
        std::vector<HostInput> hosts;
        for (const auto& h : host_args)
            hosts.push_back({h[0], h[1], parse_events(read_text(h[2]), h[2]),
                             parse_packets(read_text(h[3]), h[3])});
        run.host_count = static_cast<int>(hosts.size());
        for (const std::string& pair : environment)
            run.environment.push_back(environment_pair(pair));
        const Trace merged = merge(hosts, trace_meta(run));
        std::ofstream out(output);
        if (!(out << write_trace(merged)))
            throw InputError(fmt::format("{}: cannot write it", output));
        std::vector<std::string> failures;
        const bool ok = checks_pass(merged, failures);
        for (const CheckRecord& c : merged.checks)
            fmt::print("trace-merge: {} {} ({} checked)\n", c.ok ? "ok  " : "FAIL", c.name,
                       c.checked);
        for (const auto& f : failures) fmt::print(stderr, "trace-merge: {}\n", f);
        fmt::print("trace-merge: {} events, {} packets → {}\n", merged.events.size(),
                   merged.packets.size(), output);
        return ok ? 0 : 1;
    } catch (const InputError& e) {
        fmt::print(stderr, "trace-merge: {}\n", e.what());
        return 2;
    } catch (const std::exception& e) {  // nlohmann's type errors on a field of the wrong kind
        fmt::print(stderr, "trace-merge: malformed input: {}\n", e.what());
        return 2;
    }
}
