// rdma-doctor: names what is wrong with an RDMA host, or between two hosts — one line per finding
// with why it matters and the command that fixes it, then the checks that passed. Exit 0:
// healthy; 1: findings (a peer that cannot be reached is one: the layer that fails, named);
// 2: bad usage. Runs unprivileged; what needs root is said in the fixes.
//   rdma-doctor [-d DEVICE] [--window SECONDS] [--json]                 this host
//   rdma-doctor --respond [--pair-port P] [--wait SECONDS]              on the peer, first
//   rdma-doctor --peer ADDRESS [--gid-index N] [--tclass T] [...]       this host and the pair
// --gid-index and --tclass default to NCCL_IB_GID_INDEX and NCCL_IB_TC when those are set: the
// pair is checked with the settings the application will use.
// While it watches the counters, SIGINT or SIGTERM ends the watch early (a report still comes).
#include "doctor.hpp"
#include "gather.hpp"
#include "pair.hpp"
#include "pair_probe.hpp"
#include "rdmalab/tcp_exchange.hpp"
#include "reach.hpp"
#include "reach_probe.hpp"

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>

namespace {
std::atomic<bool> g_stop_watching{false};
extern "C" void on_interrupt(int) {
    g_stop_watching.store(true);
}

// A setting from the command line, else from the environment variable an application reads.
// Throws CLI::ValidationError naming the variable when its value is not a number 0..255.
std::optional<unsigned> setting(const std::optional<unsigned>& option, const char* variable,
                                std::string& source, const std::string& option_name) {
    if (option) {
        source = option_name;
        return option;
    }
    const char* text = std::getenv(variable);
    if (!text || !*text) return std::nullopt;
    const std::string_view value(text);
    unsigned number = 0;
    auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (error != std::errc{} || end != value.data() + value.size() || number > 255)
        throw CLI::ValidationError(variable,
                                   fmt::format("'{}' is not a number from 0 to 255", value));
    source = variable;
    return number;
}
}  // namespace

int main(int argc, char** argv) {
    // First of all, so that a signal sent at any time after the start ends only the watch.
    struct sigaction interrupt {};
    interrupt.sa_handler = on_interrupt;
    sigaction(SIGINT, &interrupt, nullptr);
    sigaction(SIGTERM, &interrupt, nullptr);
    CLI::App app{
        "Names what is wrong with this host's RDMA set-up (or a pair's), with the fix for "
        "each finding",
        "rdma-doctor"};
    std::string device;
    double window_s = 1.0;
    bool json = false;
    std::string peer;
    bool respond = false;
    std::uint16_t pair_port = rdmalab::doctor::kDefaultPairPort;
    double wait_s = 60;
    double connect_wait_s = 10;
    std::optional<unsigned> gid_index_option;
    std::optional<unsigned> tclass_option;
    app.add_option("-d,--device", device, "check only this RDMA device (e.g. rxe0, mlx5_0)");
    app.add_option("--window", window_s,
                   "seconds to watch the port counters (0: skip; at most 3600; Ctrl-C ends the "
                   "watch early and reports what rose so far)")
        ->check(CLI::Range(0.0, 3600.0));
    app.add_flag("--json", json, "the report as JSON (format rdma-doctor, version 1)");
    auto* peer_option = app.add_option("--peer", peer,
                                       "also check the pair with this host, where rdma-doctor "
                                       "--respond runs (numeric IP address)");
    auto* respond_option = app.add_flag(
        "--respond", respond, "answer one rdma-doctor --peer from another host, then exit");
    respond_option->excludes(peer_option);
    app.add_option("--pair-port", pair_port, "TCP port of the pair's conversation (default 18516)")
        ->check(CLI::Range(1, 65535));
    app.add_option("--wait", wait_s, "--respond: seconds to wait for the prober (1..3600)")
        ->check(CLI::Range(1.0, 3600.0));
    app.add_option("--connect-wait", connect_wait_s,
                   "--peer: seconds to wait for the responder's TCP port to answer (1..600); when "
                   "it does not, the doctor reads why, layer by layer")
        ->check(CLI::Range(1.0, 600.0));
    app.add_option("--gid-index", gid_index_option,
                   "--peer: the GID index the application uses (default: NCCL_IB_GID_INDEX if set)")
        ->check(CLI::Range(0, 255));
    app.add_option("--tclass", tclass_option,
                   "--peer: the traffic class the application uses (default: NCCL_IB_TC if set, "
                   "else 0)")
        ->check(CLI::Range(0, 255));
    rdmalab::doctor::ProbeOptions probe;
    try {
        app.parse(argc, argv);
        probe.gid_index =
            setting(gid_index_option, "NCCL_IB_GID_INDEX", probe.gid_index_source, "--gid-index");
        probe.tclass =
            setting(tclass_option, "NCCL_IB_TC", probe.tclass_source, "--tclass").value_or(0);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);
        fmt::print(stderr, "rdma-doctor: {} (rdma-doctor --help)\n", e.what());
        return 2;
    }
    try {
        using namespace rdmalab::doctor;
        if (respond) {
            rdmalab::doctor::respond(
                {pair_port, device, std::chrono::milliseconds(static_cast<long>(wait_s * 1000))});
            return 0;
        }
        const HostFacts host =
            gather({device, std::chrono::milliseconds(static_cast<long>(window_s * 1000)),
                    &g_stop_watching});
        if (!device.empty() && host.rdma_in_kernel && host.devices.empty()) {
            fmt::print(stderr,
                       "rdma-doctor: no RDMA device named '{}' (ls /sys/class/infiniband)\n",
                       device);
            return 2;
        }
        Diagnosis diagnosis = diagnose(host);
        std::optional<PairFacts> pair;
        std::optional<ReachFacts> reach;
        if (!peer.empty() && !host.devices.empty()) {
            probe.peer = peer;
            probe.port = pair_port;
            probe.device = device;
            const auto connect_wait =
                std::chrono::milliseconds(static_cast<long>(connect_wait_s * 1000));
            int connect_error = 0;
            // A responder started at the same moment may not listen yet: refusals are tried
            // again for a few seconds (at most the whole wait) before they count.
            auto tcp = rdmalab::TcpExchange::try_connect(
                peer, pair_port, connect_wait,
                std::min(connect_wait, rdmalab::TcpExchange::kStartupGrace), connect_error);
            if (tcp) {
                pair = probe_peer(probe, host, std::move(*tcp));
                diagnose_pair(*pair, diagnosis);
            } else {
                reach = probe_reach(peer, pair_port, connect_wait_s, connect_error);
                diagnose_reach(*reach, diagnosis);
            }
        }
        if (json) {
            rdmalab::records::DoctorReport report = report_record(host, diagnosis);
            if (pair) report.pair = pair_record(*pair);
            if (reach) report.reach = reach_record(*reach);
            std::fputs((rdmalab::records::to_json(report).dump(2) + "\n").c_str(), stdout);
        } else {
            std::fputs(render_text(diagnosis).c_str(), stdout);
        }
        return diagnosis.findings.empty() ? 0 : 1;
    } catch (const std::exception& e) {
        fmt::print(stderr, "rdma-doctor: {}\n", e.what());
        return 2;
    }
}
