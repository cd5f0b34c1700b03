// rdma-bench: measures RDMA operations the way perftest does (server + client), with sweeps of
// every knob in one run, receiver-side counts, latency percentiles, CPU cost, JSON/CSV records
// and SVG figures (`rdma-bench plot`). Run `rdma-bench --help`.
#include "rdmalab/bench/config.hpp"
#include "rdmalab/bench/control.hpp"
#include "rdmalab/bench/knobs.hpp"
#include "rdmalab/bench/plot.hpp"
#include "rdmalab/bench/records.hpp"
#include "rdmalab/bench/session.hpp"
#include "rdmalab/bench/sweep.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/gpu/options.hpp"
#include "rdmalab/options.hpp"

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <map>
#include <set>

namespace {

using namespace rdmalab;
using namespace rdmalab::bench;

struct Knob {
    const char* name;     // as in records and PinnedKnobs
    CLI::Option* option;  // the option that sets it (to know whether it was given)
};

// The names of the knobs given on the command line ("srq" by --srq or by --use-srq).
std::set<std::string> given_knobs(const std::vector<Knob>& knobs) {
    std::set<std::string> given;
    for (const Knob& knob : knobs)
        if (knob.option->count() > 0) given.insert(knob.name);
    return given;
}

void add_knob_options(CLI::App& app, KnobTexts& k, std::vector<Knob>& knobs) {
    knobs = {
        {"op",
         app.add_option("-o,--op", k.op, op_names() + " (a list sweeps)")->capture_default_str()},
        {"transport", app.add_option("-c,--connection", k.transport, "RC, UC or UD (list)")
                          ->capture_default_str()},
        {"mode", app.add_option("-m,--mode", k.mode,
                                "bw (bandwidth/message rate) or lat (ping-pong latency) (list)")
                     ->capture_default_str()},
        {"size", app.add_option("-s,--size", k.size,
                                "message bytes: 64, 4K, a list 64,4096 or a range 32..8192 "
                                "(default 64K bw, 2 lat, 8 atomics)")},
        {"window",
         app.add_option("-t,--tx-depth,--window", k.window, "outstanding WRs per QP (list/range)")
             ->capture_default_str()},
        {"qps",
         app.add_option("-q,--qp", k.qps, "queue pairs (list/range)")->capture_default_str()},
        {"post_list", app.add_option("-l,--post-list", k.post_list,
                                     "WRs per ibv_post_send, chained with wr.next (list/range)")
                          ->capture_default_str()},
        {"signal_every", app.add_option("-Q,--cq-mod,--signal-every", k.signal_every,
                                        "signal one WR in N (default min(100, window); list)")},
        {"inline", app.add_option("-I,--inline-size", k.inline_size,
                                  "send messages up to N bytes inline (list)")
                       ->capture_default_str()},
        {"sge", app.add_option("--sge", k.sge, "scatter/gather entries per WR (list)")
                    ->capture_default_str()},
        {"srq", app.add_option("--srq", k.srq, "server receives from one SRQ: on, off or on,off")
                    ->capture_default_str()},
        {"shared_cq",
         app.add_option("--shared-cq", k.shared_cq, "one CQ for all QPs: on, off or on,off")
             ->capture_default_str()},
        {"events", app.add_option("--events", k.events,
                                  "completion channel instead of polling: on, off or on,off")
                       ->capture_default_str()},
    };
    knobs.push_back({"srq", app.add_flag("--use-srq", k.use_srq, "same as --srq on (perftest)")});
    knobs.push_back(
        {"events", app.add_flag("-e", k.events_flag, "same as --events on (perftest)")});
    app.add_flag("-a,--all", k.all_sizes, "sizes 2..8M (perftest -a)");
    app.add_option("-n,--iters", k.iters,
                   "operations per QP, or round trips (default 5000 bw, 1000 lat)")
        ->check(CLI::Range(1ull, 1ull << 32));
    app.add_option("-D,--duration", k.duration_s, "measure for SEC seconds instead of -n")
        ->check(CLI::Range(0.001, 3600.0));
    app.add_option("--warmup", k.warmup, "un-timed operations per QP before each measurement")
        ->capture_default_str()
        ->check(CLI::Range(0ull, 1ull << 24));
}

void add_session_options(CLI::App& app, SessionOptions& s) {
    app.add_option_function<std::string>(
           "--staging-copies",
           [&s](const std::string& text) {
               if (text != "per-phase" && text != "per-message")
                   throw CLI::ValidationError("--staging-copies",
                                              "'" + text + "' is not per-phase or per-message");
               s.stage_each_message = text == "per-message";
           },
           "on the staging path: copy GPU <-> bounce buffer once per phase, outside the timed loop "
           "(the RDMA half), "
           "or per message, inside it")
        ->default_str("per-phase");
    app.add_option_function<std::string>(
           "--api",
           [&s](const std::string& text) {
               if (text != "classic" && text != "ex")
                   throw CLI::ValidationError("--api", "'" + text + "' is not classic or ex");
               s.api = text == "ex" ? PostApi::kExtended : PostApi::kClassic;
           },
           "how WRs are posted: classic (ibv_post_send) or ex (ibv_wr_start … ibv_wr_complete on "
           "a QP from ibv_create_qp_ex)")
        ->default_str("classic");
    app.add_option("-d,--ib-dev", s.device, "RDMA device (default: the first)");
    app.add_option("-i,--ib-port", s.ib_port, "device port")
        ->default_str(std::to_string(s.ib_port))  // a uint8_t would print as a character
        ->check(CLI::Range(1, 255));
    app.add_option("-x,--gid-index", s.gid_index,
                   "source GID index (default: the RoCE v2 GID with an IPv4 address)")
        ->check(CLI::Range(0, 1023));
    app.add_option("--tclass", s.tclass,
                   "traffic class of this side's packets, DSCP << 2 | ECN (106: DSCP 26, ECT(0)); "
                   "each side sets its own, as with perftest's --tclass")
        ->check(CLI::Range(0, 255));
    app.add_option("-p,--port", s.port, "TCP port of the control connection")
        ->capture_default_str()
        ->check(CLI::Range(1, 65535));
    app.add_option("--timeout", s.timeout_s, "seconds any wait may pass without progress")
        ->capture_default_str()
        ->check(CLI::Range(0.1, 3600.0));
    app.add_option("--max-phase", s.max_phase_s, "seconds one measurement may take")
        ->capture_default_str()
        ->check(CLI::Range(1.0, 86400.0));
}

// `rdma-bench records FILE` and `rdma-bench json FILE`: --get/--count PATH, repeatable, answered
// in the order given.
struct FieldReader {
    CLI::App* command;
    ReadRequest request;
    std::vector<std::string> gets, counts;
};

void add_field_reader(CLI::App& app, FieldReader& reader, const char* name, const char* what,
                      bool records) {
    reader.request.records = records;
    reader.command = app.add_subcommand(name, what);
    reader.command->add_option("file", reader.request.file, "the JSON file")->required();
    reader.command
        ->add_option("--get", reader.gets,
                     "print the values at PATH, one line each (compact JSON), e.g. "
                     "records/0/result/gib_per_s or records/*/config/size ('*': every element; "
                     "below it, null where an element lacks the rest)")
        ->allow_extra_args(false)
        ->take_all();
    reader.command
        ->add_option("--count", reader.counts,
                     "print how many elements the array (or object) at PATH has, e.g. records")
        ->allow_extra_args(false)
        ->take_all();
    reader.command->add_flag("--raw", reader.request.raw,
                             "print strings without quotes (one without line breaks)");
}

// The queries in command-line order (CLI11 keeps each option's values apart).
int read_fields_in_order(FieldReader& reader) {
    std::map<const CLI::Option*, std::size_t> taken;
    const CLI::Option* get = reader.command->get_option("--get");
    const CLI::Option* count = reader.command->get_option("--count");
    for (const CLI::Option* option : reader.command->parse_order()) {
        if (option == get)
            reader.request.queries.push_back({FieldQuery::Kind::kGet, reader.gets[taken[get]++]});
        else if (option == count)
            reader.request.queries.push_back(
                {FieldQuery::Kind::kCount, reader.counts[taken[count]++]});
    }
    return read_fields(reader.request, "rdma-bench", std::cout, std::cerr);
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("rdma-bench", [&] {
        CLI::App app{
            "rdma-bench: RDMA bandwidth, message rate, latency and CPU cost, with sweeps, JSON/CSV "
            "and plots.\n"
            "Run `rdma-bench server` on one host and `rdma-bench client ADDR [options]` on the "
            "other; knobs take\n"
            "a value, a list (4,64) or a power-of-two range (32..8192) and the client runs every "
            "combination.",
            "rdma-bench"};
        app.require_subcommand(1);
        SessionOptions session;
        KnobTexts knobs;
        std::vector<Knob> server_knobs, client_knobs;
        bool quiet = false;

        CLI::App* server =
            app.add_subcommand("server", "wait for one client and serve its whole run");
        add_session_options(*server, session);
        add_knob_options(*server, knobs, server_knobs);
        gpu::add_memory_options(*server, session.memory);
        server->add_option("--bind", session.bind_address, "listen on this address only");
        server
            ->add_option("--accept-timeout", session.accept_timeout_s,
                         "seconds to wait for the client")
            ->capture_default_str()
            ->check(CLI::Range(0.1, 86400.0));

        CLI::App* client = app.add_subcommand("client", "run the configurations against a server");
        client->add_option("address", session.server_address, "server address (numeric)")
            ->required();
        add_session_options(*client, session);
        add_knob_options(*client, knobs, client_knobs);
        gpu::add_memory_options(*client, session.memory);
        client->add_option("--json", session.json_path,
                           "write one record per configuration to FILE");
        client->add_option("--csv", session.csv_path, "… and as CSV");
        client->add_flag("--gbps", session.gbps, "also print Gb/s");
        client->add_flag("--no-progress", quiet, "no progress line on a terminal");

        PlotOptions plot_options;
        CLI::App* plot_cmd = app.add_subcommand(
            "plot",
            "draw records (from --json files) as an SVG figure against their size (or --x)");
        plot_cmd->add_option("files", plot_options.inputs, "JSON files written by --json")
            ->required()
            ->check(CLI::ExistingFile);
        plot_cmd->add_option("-o,--output", plot_options.output, "SVG file to write")->required();
        plot_cmd
            ->add_option("--y", plot_options.y,
                         "gib, gbps, mops, recv-mops, recv-gib, lat, lat-p99 (rdma-bench records), "
                         "busbw (allreduce records), gbit (transfer-bench records)")
            ->capture_default_str();
        plot_cmd->add_option("--x", plot_options.x,
                             "the x axis's key, on a log2 axis (default: the measure's size; "
                             "rails: transfer-bench's rails)");
        plot_cmd->add_option("--series", plot_options.series,
                             "config keys that name a line (default: every knob that varies)");
        plot_cmd->add_option("--title", plot_options.title, "figure title");

        FieldReader records_reader, json_reader;
        add_field_reader(app, records_reader, "records",
                         "print fields of a --json file's records (rdma-bench's, the allreduce "
                         "programs', transfer-bench's), each read through its type: the one reader "
                         "scripts and tests "
                         "use (paths start at records: records/0/config/size; a path must name a "
                         "field of the records' schema, records/schema/)",
                         true);
        add_field_reader(app, json_reader, "json",
                         "print fields of another tool's JSON (rdma-mesh's mesh.json, "
                         "gpu-memory-bench --json, rdma-doctor --json), read through its type: "
                         "the same paths, from the document (ranks/0/host); a path must name a "
                         "field of its schema (records/schema/)",
                         false);

        parse_or_exit(app, argc, argv);
        session.progress = !quiet;
        if (plot_cmd->parsed()) {
            plot_files(plot_options, kToolVersion);
            return 0;
        }
        if (records_reader.command->parsed()) return read_fields_in_order(records_reader);
        if (json_reader.command->parsed()) return read_fields_in_order(json_reader);
        if (server->parsed()) {
            // Knobs given to the server pin what a client may ask for; the rest follow the client.
            PinnedKnobs pinned;
            try {
                if (knobs.iters || knobs.duration_s > 0)
                    fail("give -n/-D to the client: the server follows its plan");
                pinned = pinned_knobs(knobs, given_knobs(server_knobs));
            } catch (const Error& e) {
                fmt::print(stderr, "rdma-bench: {} (run with --help for usage)\n", e.what());
                return 2;
            }
            return run_server(session, pinned);
        }
        if (!parse_ip_address(session.server_address, session.port)) {
            fmt::print(stderr,
                       "rdma-bench: '{}' is not a numeric IPv4 or IPv6 address (run with --help "
                       "for usage)\n",
                       session.server_address);
            return 2;
        }
        std::vector<BenchConfig> configs;
        try {
            configs =
                expand_knobs(knobs, client->get_option("--size")->count() > 0 || knobs.all_sizes);
        } catch (const Error& e) {
            // A combination that can never run is bad input, like a malformed option.
            fmt::print(stderr, "rdma-bench: {} (run with --help for usage)\n", e.what());
            return 2;
        }
        return run_client(session, configs);
    });
}
