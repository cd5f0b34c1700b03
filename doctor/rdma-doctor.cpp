// rdma-doctor: names what is wrong with an RDMA host — one line per finding with why it matters
// and the command that fixes it, then the checks that passed. Exit 0: healthy; 1: findings;
// 2: bad usage. Runs unprivileged; what needs root is said in the fixes.
//   rdma-doctor [-d DEVICE] [--window SECONDS] [--json]
// While it watches the counters, SIGINT or SIGTERM ends the watch early (a report still comes).
#include "doctor.hpp"
#include "gather.hpp"

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>

namespace {
std::atomic<bool> g_stop_watching{false};
extern "C" void on_interrupt(int) {
    g_stop_watching.store(true);
}
}  // namespace

int main(int argc, char** argv) {
    // First of all, so that a signal sent at any time after the start ends only the watch.
    struct sigaction interrupt {};
    interrupt.sa_handler = on_interrupt;
    sigaction(SIGINT, &interrupt, nullptr);
    sigaction(SIGTERM, &interrupt, nullptr);
    CLI::App app{"Names what is wrong with this host's RDMA set-up, with the fix for each finding",
                 "rdma-doctor"};
    std::string device;
    double window_s = 1.0;
    bool json = false;
    app.add_option("-d,--device", device, "check only this RDMA device (e.g. rxe0, mlx5_0)");
    app.add_option("--window", window_s,
                   "seconds to watch the port counters (0: skip; at most 3600; Ctrl-C ends the "
                   "watch early and reports what rose so far)")
        ->check(CLI::Range(0.0, 3600.0));
    app.add_flag("--json", json, "the report as JSON (format rdma-doctor, version 1)");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);
        fmt::print(stderr, "rdma-doctor: {} (rdma-doctor --help)\n", e.what());
        return 2;
    }
    try {
        using namespace rdmalab::doctor;
        const HostFacts host =
            gather({device, std::chrono::milliseconds(static_cast<long>(window_s * 1000)),
                    &g_stop_watching});
        if (!device.empty() && host.rdma_in_kernel && host.devices.empty()) {
            fmt::print(stderr,
                       "rdma-doctor: no RDMA device named '{}' (ls /sys/class/infiniband)\n",
                       device);
            return 2;
        }
        const Diagnosis diagnosis = diagnose(host);
        const std::string report = json ? render_json(host, diagnosis) : render_text(diagnosis);
        std::fputs(report.c_str(), stdout);
        return diagnosis.findings.empty() ? 0 : 1;
    } catch (const std::exception& e) {
        fmt::print(stderr, "rdma-doctor: {}\n", e.what());
        return 2;
    }
}
