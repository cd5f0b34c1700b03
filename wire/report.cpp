// rdma-wire's work on packet records: see report.hpp.
#include "report.hpp"

#include <fmt/core.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

extern char** environ;

namespace rdmalab::wire {

namespace {

// Reads all of a file descriptor.
std::string read_all(int fd) {
    std::string text;
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return text;
        text.append(buffer, static_cast<std::size_t>(n));
    }
}

// "198.51.100.2" → "host2" (the lab's wire), any other address as it is.
std::string host(const std::string& ip) {
    static const std::regex kLab(R"(^198\.51\.100\.([0-9]+)$)");
    std::smatch m;
    return std::regex_match(ip, m, kLab) ? "host" + m[1].str() : ip;
}

std::string hex(std::uint64_t value, int digits) {
    return fmt::format("0x{:0{}x}", value, digits);
}

// Left-aligned in width bytes, as lab/wire.sh's awk printf padded ("→" is three bytes there
// too): the ladder's columns stay where they were.
std::string left(std::string text, std::size_t width) {
    if (text.size() < width) text.append(width - text.size(), ' ');
    return text;
}

std::string join(std::string a, std::string_view b) {
    if (!a.empty()) a += " · ";
    a += b;
    return a;
}

}  // namespace

std::vector<Packet> run_tshark(const std::string& capture) {
    std::vector<std::string> args = {
        "tshark", "-r",     capture, "-n",           "-Y", "infiniband.bth",
        "-T",     "fields", "-E",    "separator=/t", "-E", "occurrence=f"};
    for (auto field : kTsharkFields) {
        args.emplace_back("-e");
        args.emplace_back(field);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    int out[2];
    if (::pipe(out) != 0) throw InputError(fmt::format("pipe: {}", std::strerror(errno)));
    std::FILE* err = std::tmpfile();
    if (err == nullptr) throw InputError(fmt::format("a scratch file: {}", std::strerror(errno)));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, fileno(err), 2);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    pid_t pid = 0;
    const int spawned = ::posix_spawnp(&pid, "tshark", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    if (spawned != 0) {
        ::close(out[0]);
        std::fclose(err);
        if (spawned == ENOENT)
            throw InputError(
                "tshark is missing: install it with 'apt-get install tshark' (Wireshark's RoCE "
                "v2 dissector)");
        throw InputError(fmt::format("cannot start tshark: {}", std::strerror(spawned)));
    }
    const std::string text = read_all(out[0]);
    ::close(out[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::rewind(err);
    const std::string complaint = read_all(fileno(err));
    std::fclose(err);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        // Its first line that says something about the file (not the warning about root).
        std::istringstream lines(complaint);
        std::string line, reason;
        while (std::getline(lines, line))
            if (!line.empty() && line.rfind("Running as user", 0) != 0) {
                reason = line;
                break;
            }
        throw InputError(fmt::format("tshark cannot read {}: {}", capture,
                                     reason.empty() ? "no reason given" : reason));
    }
    return decode_fields(text, capture);
}

double FlowSummary::goodput_mbit() const {
    const double span = last_s - first_s;
    return span > 0 ? static_cast<double>(data_bytes) * 8 / span / 1e6 : 0;
}

std::vector<FlowSummary> flow_summaries(const std::vector<Packet>& packets) {
    std::vector<FlowSummary> flows;
    std::map<std::tuple<std::string, std::string, std::uint32_t>, std::size_t> index;
    for (const Packet& p : packets) {
        const auto key = std::make_tuple(p.src, p.dst, p.qpn);
        auto [at, added] = index.try_emplace(key, flows.size());
        if (added) flows.push_back({.src = p.src, .dst = p.dst, .qpn = p.qpn, .first_s = p.time_s});
        FlowSummary& flow = flows[at->second];
        ++flow.packets;
        flow.last_s = p.time_s;
        if (p.sent_again)
            ++flow.sent_again;
        else
            flow.data_bytes += p.payload_bytes;
        if (p.ecn == 3)
            ++flow.ce;
        else if (p.ecn != 0)
            ++flow.ect;
        if (p.aeth) {
            switch (p.aeth->kind()) {
                case AethKind::kAck:
                    ++flow.acks;
                    break;
                case AethKind::kNak:
                    ++flow.naks;
                    break;
                case AethKind::kRnrNak:
                    ++flow.rnr_naks;
                    break;
                case AethKind::kReserved:
                    break;
            }
        }
    }
    return flows;
}

double jain_fairness(const std::vector<FlowSummary>& flows) {
    double sum = 0, sum_of_squares = 0;
    std::size_t n = 0;
    for (const FlowSummary& flow : flows) {
        if (flow.data_bytes == 0) continue;
        const double x = flow.goodput_mbit();
        sum += x;
        sum_of_squares += x * x;
        ++n;
    }
    return n > 0 && sum_of_squares > 0 ? sum * sum / (static_cast<double>(n) * sum_of_squares) : 0;
}

std::string flows_table(const std::vector<FlowSummary>& flows) {
    std::string out =
        "src\tdst\tqpn\tpackets\tdata_bytes\tsent_again\tect\tce\tacks\tnaks\trnr_naks\t"
        "first_s\tlast_s\tgoodput_mbit\n";
    std::size_t with_data = 0;
    for (const FlowSummary& f : flows) {
        out +=
            fmt::format("{}\t{}\t{:#x}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.6f}\t{:.6f}\t{:.3f}\n",
                        f.src, f.dst, f.qpn, f.packets, f.data_bytes, f.sent_again, f.ect, f.ce,
                        f.acks, f.naks, f.rnr_naks, f.first_s, f.last_s, f.goodput_mbit());
        with_data += f.data_bytes > 0 ? 1 : 0;
    }
    out +=
        fmt::format("# jain_fairness\t{:.4f}\t{} data streams\n", jain_fairness(flows), with_data);
    return out;
}

std::string ladder(const std::vector<Packet>& packets, const LadderOptions& options) {
    std::string out =
        fmt::format("{:>10}  {}  {:<34} {:>8} {:>8}  {}\n", "time ms", left("from → to", 15),
                    "opcode", "QPN", "PSN", "headers · payload");
    std::vector<std::string> order;  // the names in first-seen order
    std::map<std::string, std::size_t> count, naks;
    std::vector<std::string> nak_order;
    std::size_t again = 0;
    // --brief: the current run of like packets.
    std::string run_key, run_line;
    std::size_t run_count = 0;
    std::uint32_t run_first = 0, run_last = 0;
    auto flush = [&] {
        if (run_count == 0) return;
        out += run_line + "\n";
        if (run_count > 1)
            out += fmt::format(
                "{:>10}  {:<15}  {:<34} {:>8} {:>8}  ··· {} packets like it in all, "
                "PSN {}–{}\n",
                "", "", "", "", "", run_count, run_first, run_last);
        run_count = 0;
    };
    for (std::size_t i = 0; i < packets.size(); ++i) {
        const Packet& p = packets[i];
        const std::string name = p.transport() + " " + p.opcode_name();
        std::string details;
        if (p.aeth) details = fmt::format("AETH {} msn {}", p.aeth->meaning(), p.aeth->msn);
        if (p.reth)
            details = join(details, fmt::format("RETH va {} rkey {} len {}", hex(p.reth->va, 16),
                                                hex(p.reth->rkey, 8), p.reth->length));
        if (p.immdt) details = join(details, "ImmDt " + hex(*p.immdt, 8));
        if (p.atomic)
            details = join(details, p.atomic->compare
                                        ? fmt::format("AtomicETH compare {} swap {}",
                                                      *p.atomic->compare, p.atomic->swap_or_add)
                                        : fmt::format("AtomicETH add {}", p.atomic->swap_or_add));
        if (p.atomic_ack_original)
            details =
                join(details, fmt::format("AtomicAckETH original {}", *p.atomic_ack_original));
        if (p.deth)
            details = join(details, fmt::format("DETH qkey {} src QP {}", hex(p.deth->qkey, 8),
                                                hex(p.deth->src_qp, 6)));
        if (p.transport() == "UD" && p.qpn == 1)
            details += " · rdma_cm connection management (QP1)";
        if (p.payload_bytes > 0)
            details = join(details, fmt::format("payload {} B", p.payload_bytes));
        if (p.ack_requested) details = join(details, "ack requested");
        if (p.dscp != 0 || p.ecn != 0)
            details = join(details, fmt::format("DSCP {} ECN {}", p.dscp, p.ecn));
        if (p.sent_again) {
            ++again;
            details += " · SENT AGAIN";
        }
        if (count[name]++ == 0) order.push_back(name);
        if (p.aeth && p.aeth->kind() != AethKind::kAck && naks[p.aeth->meaning()]++ == 0)
            nak_order.push_back(p.aeth->meaning());
        const std::string line = fmt::format(
            "{:>10.3f}  {}  {:<34} {:>8} {:>8}  {}", p.time_s * 1000,
            left(host(p.src) + "→" + host(p.dst), 15), name, hex(p.qpn, 6), p.psn, details);
        if (!options.brief) {
            out += line + "\n";
            continue;
        }
        // A run: the same direction, QP and opcode, headers alike but for the PSN.
        const bool alone =
            p.aeth || p.reth || p.immdt || p.atomic || p.atomic_ack_original || p.sent_again;
        const std::string key = fmt::format("{}>{}:{}:{}:{}", p.src, p.dst, p.qpn, p.opcode,
                                            alone ? std::to_string(i) : "");
        if (run_count > 0 && key == run_key) {
            ++run_count;
            run_last = p.psn;
        } else {
            flush();
            run_key = key;
            run_line = line;
            run_count = 1;
            run_first = run_last = p.psn;
        }
    }
    flush();
    out += fmt::format("\n{} RoCE v2 packets", packets.size());
    if (!packets.empty()) {
        out += ":";
        const char* sep = " ";
        for (const auto& name : order) {
            out += fmt::format("{}{} {}", sep, count[name], name);
            sep = ", ";
        }
    }
    out += "\n";
    for (const auto& n : nak_order) out += fmt::format("{} × {}\n", naks[n], n);
    if (again > 0)
        out += fmt::format("{} packets sent again (same direction, QP, PSN and opcode)\n", again);
    return out;
}

Condition parse_condition(std::string_view text) {
    const auto at = text.find_first_of("=~");
    Condition c{std::string(text.substr(0, at)), Condition::Kind::kHas, ""};
    if (at != std::string_view::npos) {
        c.kind = text[at] == '=' ? Condition::Kind::kEquals : Condition::Kind::kMatches;
        c.value = std::string(text.substr(at + 1));
        if (c.kind == Condition::Kind::kMatches) std::regex check(c.value);  // throws if bad
    }
    bool known = false;
    for (const auto& f : kSchema) known = known || f.name == c.field;
    if (!known)
        throw std::invalid_argument(fmt::format("no field '{}' in a packet record", c.field));
    return c;
}

std::string field_text(const Packet& packet, std::string_view field) {
    const auto j = to_json(packet);
    const nlohmann::ordered_json* value = &j;
    std::string_view rest = field;
    while (!rest.empty()) {
        const auto dot = rest.find('.');
        const std::string key(rest.substr(0, dot));
        if (!value->is_object() || !value->contains(key)) return "";
        value = &(*value)[key];
        rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
    }
    return value->is_string() ? value->get<std::string>() : value->dump();
}

bool matches(const Packet& packet, const std::vector<Condition>& conditions) {
    for (const auto& c : conditions) {
        const std::string text = field_text(packet, c.field);
        switch (c.kind) {
            case Condition::Kind::kHas:
                if (text.empty()) return false;
                break;
            case Condition::Kind::kEquals:
                if (text.empty() || text != c.value) return false;
                break;
            case Condition::Kind::kMatches:
                if (text.empty() || !std::regex_search(text, std::regex(c.value))) return false;
                break;
        }
    }
    return true;
}

std::string PredictionCheck::summary() const {
    return fmt::format("predicted {} found {} missing {} extra {} sent-again {}", predicted, found,
                       missing, extra, sent_again);
}

PredictionCheck check_prediction(const std::vector<Packet>& packets, std::string_view client_out,
                                 const std::string& client_address,
                                 const std::string& server_address) {
    PredictionCheck check;
    // How often the capture holds each (source, opcode, PSN, payload).
    std::map<std::string, long long> seen;
    auto key = [](const std::string& src, const std::string& opcode, std::uint32_t psn,
                  std::uint32_t payload) {
        return fmt::format("{}|{}|{}|{}", src, opcode, psn, payload);
    };
    for (const auto& p : packets) ++seen[key(p.src, p.opcode_name(), p.psn, p.payload_bytes)];

    static const std::regex kLine(
        R"(^client:   (client|server) → (client|server) (.*?)( × ([0-9]+))? +QP 0x([0-9a-fA-F]+) +PSN +([0-9]+)(–[0-9]+)? +([0-9]+) B.*$)");
    std::set<std::uint32_t> qpns;
    std::optional<std::uint32_t> first, last;
    std::istringstream lines{std::string(client_out)};
    std::string line;
    while (std::getline(lines, line)) {
        std::smatch m;
        if (!std::regex_match(line, m, kLine)) continue;
        const bool from_client = m[1] == "client";
        const std::string opcode = m[3];
        const int n = m[5].matched ? std::stoi(m[5]) : 1;
        const auto qpn = static_cast<std::uint32_t>(std::stoul(m[6], nullptr, 16));
        const auto psn = static_cast<std::uint32_t>(std::stoul(m[7]));
        const auto payload = static_cast<std::uint32_t>(std::stoul(m[9]));
        qpns.insert(qpn);
        for (int k = 0; k < n; ++k) {
            const std::uint32_t p = (psn + static_cast<std::uint32_t>(k)) % 16777216;
            ++check.predicted;
            if (!first) first = p;
            last = p;
            auto& s = seen[key(from_client ? client_address : server_address, opcode, p, payload)];
            if (s >= 1) {  // counted once: later predictions of the same packet find it too
                ++check.found;
                check.sent_again += static_cast<std::size_t>(s - 1);
                s = -s;
            } else if (s < 0) {
                ++check.found;
            } else {
                ++check.missing;
                check.missing_lines.push_back(fmt::format(
                    "missing: {} {} PSN {} {} B",
                    from_client ? "client → server" : "server → client", opcode, p, payload));
            }
        }
    }
    long long in_range = 0;
    if (first)
        for (const auto& p : packets) {
            if (!qpns.contains(p.qpn)) continue;
            const bool inside = *first <= *last ? (p.psn >= *first && p.psn <= *last)
                                                : (p.psn >= *first || p.psn <= *last);
            if (inside) ++in_range;
        }
    check.extra = in_range - static_cast<long long>(check.found + check.sent_again);
    return check;
}

}  // namespace rdmalab::wire
