// rdma-wire (./rdmalab wire): the RoCE v2 packets of a capture as a ladder a person can read —
// time, host → host, transport and opcode, QPN, PSN, ACK/NAK with its syndrome, RETH, ImmDt,
// AtomicETH, DETH, payload size — then a count per opcode and of the packets sent again; and the
// same packets as one JSON record each (wire/packet.hpp). tshark's RoCE v2 dissector decodes.
//   rdma-wire CAPTURE [--json OUT.json] [--brief] [--quiet]
//   rdma-wire CAPTURE --count|--print F,F… [--where COND]…     a test's question
//   rdma-wire CAPTURE --flows [--where COND]…   per stream: packets, bytes, ECN marks, NAKs,
//                                              goodput; Jain's fairness (tab-separated)
//   rdma-wire CAPTURE --check-predicted CLIENT.out [--client IP] [--server IP]
//   rdma-wire --schema                                          the record's JSON Schema
// CAPTURE: a pcap/pcapng (tcpdump -w, the lab's --capture, ibdump) or a packet file that
// --json wrote. Exit 0 done; 2 bad input (one line on stderr).
#include "packet.hpp"
#include "report.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace rdmalab::wire;

namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(fmt::format("{}: no such readable file", path));
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// A packet file (JSON) is read as it is; anything else goes to tshark.
std::vector<Packet> load(const std::string& path) {
    if (::access(path.c_str(), R_OK) != 0 || std::filesystem::is_directory(path))
        throw InputError(fmt::format("{}: no such readable file", path));
    std::ifstream in(path, std::ios::binary);
    char first = 0;
    while (in.get(first) && std::isspace(static_cast<unsigned char>(first))) {
    }
    // tshark would open JSON too (as a file of JSON text): lab/wire.sh's old array, '[', is
    // refused as a packet file instead.
    if (in && (first == '{' || first == '[')) return read_document(read_text(path), path);
    return run_tshark(path);
}

void write_file(const std::string& path, const std::string& text) {
    const std::filesystem::path target(path);
    const auto folder = target.has_parent_path() ? target.parent_path() : ".";
    if (!std::filesystem::is_directory(folder) || ::access(folder.c_str(), W_OK) != 0)
        throw InputError(
            fmt::format("--json {}: {} is not a writable folder", path, folder.string()));
    const std::string scratch = path + ".partial";
    {
        std::ofstream out(scratch, std::ios::binary);
        if (!(out << text) || !out.flush())
            throw InputError(fmt::format("--json {}: cannot write it", path));
    }
    std::filesystem::rename(scratch, path);
}

std::vector<std::string> split_commas(const std::string& text) {
    std::vector<std::string> pieces;
    std::istringstream in(text);
    std::string piece;
    while (std::getline(in, piece, ',')) pieces.push_back(piece);
    return pieces;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"A capture's RoCE v2 packets as a ladder and as JSON (tshark decodes)",
                 "rdma-wire"};
    std::string capture, json_out, print_fields, predicted;
    std::string client = "198.51.100.2", server = "198.51.100.1";
    std::vector<std::string> where;
    bool brief = false, quiet = false, count = false, schema = false, flows = false;
    app.add_option("capture", capture, "a pcap/pcapng file, or a packet file --json wrote");
    app.add_option("--json", json_out, "write the packets as JSON (the packet record's schema)");
    app.add_flag("--brief", brief, "a run of packets of one opcode, direction and QP on one line");
    app.add_flag("--quiet", quiet, "no ladder on stdout (with --json)");
    auto* count_opt = app.add_flag("--count", count, "print how many packets match --where");
    auto* flows_opt = app.add_flag("--flows", flows,
                                   "per stream (direction and QP) of the packets matching --where: "
                                   "packets, data bytes, resent, ECT, CE, ACKs, NAKs, goodput; "
                                   "then Jain's fairness (tab-separated)");
    auto* print_opt = app.add_option("--print", print_fields,
                                     "print these fields (comma-separated, dotted for a header's: "
                                     "reth.length) of each packet matching --where, tab-separated");
    app.add_option("--where", where,
                   "NAME=TEXT, NAME~REGEX or NAME: a packet's field is TEXT, holds REGEX, exists")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    auto* predicted_opt =
        app.add_option("--check-predicted", predicted,
                       "the on-the-wire client's output: hold its predicted packets against these");
    app.add_option("--client", client, "the client's address (--check-predicted)");
    app.add_option("--server", server, "the server's address (--check-predicted)");
    app.add_flag("--schema", schema, "print the packet record's JSON Schema and exit");
    count_opt->excludes(print_opt)->excludes(flows_opt);
    print_opt->excludes(flows_opt);
    predicted_opt->excludes(count_opt)->excludes(print_opt)->excludes(flows_opt);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);
        fmt::print(stderr, "wire: {} (rdma-wire --help)\n", e.what());
        return 2;
    }
    try {
        if (schema) {
            fmt::print("{}\n", packet_schema_json().dump(2));
            return 0;
        }
        if (capture.empty()) throw InputError("no capture given (rdma-wire CAPTURE, --help)");
        std::vector<Condition> conditions;
        for (const auto& w : where) {
            try {
                conditions.push_back(parse_condition(w));
            } catch (const std::exception& e) {
                throw InputError(fmt::format("--where '{}': {}", w, e.what()));
            }
        }
        if (!conditions.empty() && !count && print_fields.empty() && !flows)
            throw InputError("--where goes with --count, --print or --flows");
        if (!json_out.empty()) {
            const std::filesystem::path target(json_out);
            const auto folder = target.has_parent_path() ? target.parent_path() : ".";
            if (!std::filesystem::is_directory(folder) || ::access(folder.c_str(), W_OK) != 0)
                throw InputError(fmt::format("--json {}: {} is not a writable folder", json_out,
                                             folder.string()));
        }
        const auto packets = load(capture);
        if (!json_out.empty()) write_file(json_out, write_document(packets));
        if (count) {
            std::size_t n = 0;
            for (const auto& p : packets) n += matches(p, conditions) ? 1 : 0;
            fmt::print("{}\n", n);
        } else if (!print_fields.empty()) {
            const auto fields = split_commas(print_fields);
            for (const auto& f : fields)
                parse_condition(f);  // a known field (std::invalid_argument otherwise)
            for (const auto& p : packets) {
                if (!matches(p, conditions)) continue;
                std::string line;
                for (std::size_t i = 0; i < fields.size(); ++i)
                    line += (i ? "\t" : "") + field_text(p, fields[i]);
                fmt::print("{}\n", line);
            }
        } else if (flows) {
            std::vector<Packet> chosen;
            for (const auto& p : packets)
                if (matches(p, conditions)) chosen.push_back(p);
            fmt::print("{}", flows_table(flow_summaries(chosen)));
        } else if (!predicted.empty()) {
            const auto result = check_prediction(packets, read_text(predicted), client, server);
            fmt::print("{}\n", result.summary());
            for (const auto& m : result.missing_lines) fmt::print("{}\n", m);
        } else if (!quiet) {
            fmt::print("{}", ladder(packets, {.brief = brief}));
        }
        return 0;
    } catch (const InputError& e) {
        fmt::print(stderr, "wire: {}\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        fmt::print(stderr, "wire: {}\n", e.what());
        return 2;
    }
}
