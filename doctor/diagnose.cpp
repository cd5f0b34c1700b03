// rdma-doctor's rules: from the facts of a host to findings, each with why it matters and the
// command that fixes it. No I/O here (see gather.cpp), so tests/unit/doctor_test.cpp can give
// every rule a host made up to break it.
#include "doctor.hpp"

#include <arpa/inet.h>
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace rdmalab::doctor {
namespace {

std::string size_text(std::uint64_t bytes) {
    if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0)
        return fmt::format("{} GiB", bytes >> 30);
    if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0)
        return fmt::format("{} MiB", bytes >> 20);
    if (bytes >= (1ull << 10) && bytes % (1ull << 10) == 0)
        return fmt::format("{} KiB", bytes >> 10);
    return fmt::format("{} bytes", bytes);
}

std::string port_name(const DeviceFact& device, const PortFact& port) {
    return fmt::format("{} port {}", device.name, port.number);
}

std::string first_netdev(const HostFacts& host) {
    return host.ethernet_netdevs.empty() ? "IF" : host.ethernet_netdevs.front();
}

bool loaded(const HostFacts& host, std::string_view module) {
    return std::find(host.modules.begin(), host.modules.end(), module) != host.modules.end();
}

// Counters (rxe's and mlx5's names) that rise when RC recovers from loss or reordering, when a
// receiver was not ready, and when a QP gave up.
constexpr std::array kLossCounters{
    "out_of_seq_request",    "rcvd_seq_err",   "duplicate_request",   "completer_retry_err",
    "local_ack_timeout_err", "packet_seq_err", "implied_nak_seq_err", "out_of_sequence"};
constexpr std::array kRnrCounters{"rcvd_rnr_err", "send_rnr_err", "rnr_nak_retry_err"};
constexpr std::array kGiveUpCounters{"retry_exceeded_err", "retry_rnr_exceeded_err"};

template <std::size_t N>
std::string rises(const PortFact& port, const std::array<const char*, N>& names) {
    std::string text;
    for (const char* name : names) {
        auto found = port.counter_increase.find(name);
        if (found == port.counter_increase.end() || found->second == 0) continue;
        text += fmt::format("{}{} +{}", text.empty() ? "" : ", ", name, found->second);
    }
    return text;
}

void check_device_nodes(const HostFacts& host, Diagnosis& out) {
    bool any_uverbs = false;
    bool problems = false;
    for (const DeviceNode& node : host.device_nodes) {
        const bool uverbs = node.path.find("uverbs") != std::string::npos;
        any_uverbs = any_uverbs || uverbs;
        if (node.usable) continue;
        problems = true;
        out.findings.push_back(
            {"device-nodes", Severity::kProblem,
             fmt::format("{} cannot be opened for reading and writing by this user (mode {})",
                         node.path, node.mode),
             uverbs ? "every verbs program fails in ibv_open_device (or finds no device)"
                    : "every rdma_cm program fails in rdma_create_event_channel",
             fmt::format("sudo chmod 666 {} (lasting: a udev rule, or join the group that owns "
                         "it: ls -l {})",
                         node.path, node.path)});
    }
    if (!any_uverbs) {
        problems = true;
        out.findings.push_back(
            {"device-nodes", Severity::kProblem, "no /dev/infiniband/uverbs* device file",
             "user-space verbs reach the device only through it", "sudo modprobe ib_uverbs"});
    }
    if (std::none_of(host.device_nodes.begin(), host.device_nodes.end(),
                     [](const DeviceNode& n) { return n.path.ends_with("rdma_cm"); })) {
        problems = true;
        out.findings.push_back(
            {"device-nodes", Severity::kProblem, "no /dev/infiniband/rdma_cm",
             "every program that connects through rdma_cm (rping, perftest -R, most lessons here) "
             "fails in rdma_create_event_channel",
             "sudo modprobe rdma_ucm"});
    }
    if (!problems)
        out.healthy.push_back(
            {"device-nodes", fmt::format("{} device files in /dev/infiniband, all usable",
                                         host.device_nodes.size())});
}

void check_port_state(const DeviceFact& device, const PortFact& port, Diagnosis& out) {
    if (port.state == "ACTIVE") {
        out.healthy.push_back(
            {"port-state",
             fmt::format("{} ACTIVE ({}{}{})", port_name(device, port), port.link_layer,
                         port.netdev.empty() ? "" : ", netdev ", port.netdev)});
        return;
    }
    std::string fix;
    if (port.link_layer == "Ethernet" && !port.netdev.empty() && !port.netdev_up)
        fix = fmt::format("sudo ip link set {} up", port.netdev);
    else if (port.link_layer == "Ethernet")
        fix = fmt::format("ip link show {}: bring the link up (cable, switch port, peer)",
                          port.netdev.empty() ? "IF" : port.netdev);
    else
        fix = "ibstat: check the cable, and that a subnet manager runs (opensm)";
    out.findings.push_back(
        {"port-state", Severity::kProblem,
         fmt::format("{} is {} (physical state {}){}", port_name(device, port),
                     port.state.empty() ? "not ACTIVE" : port.state,
                     port.physical_state.empty() ? "unknown" : port.physical_state,
                     port.netdev.empty() || port.netdev_up
                         ? ""
                         : fmt::format("; its netdev {} is down", port.netdev)),
         "no packet leaves or enters a port that is not ACTIVE: connections fail (RTR, rdma_cm "
         "ADDR_ERROR) or time out",
         fix});
}

void check_gids(const DeviceFact& device, const PortFact& port, Diagnosis& out) {
    if (port.link_layer != "Ethernet") return;
    const std::string netdev = port.netdev.empty() ? "IF" : port.netdev;
    if (port.ipv4_addresses.empty()) {
        out.findings.push_back(
            {"gid", Severity::kProblem,
             fmt::format("{} has no IPv4 address, so {} has no IPv4-mapped GID", netdev,
                         port_name(device, port)),
             "rdma_cm cannot resolve an IPv4 address to this port, and a hand-made RoCE v2 QP has "
             "no routable GID to use",
             fmt::format("sudo ip addr add ADDRESS/PREFIX dev {}", netdev)});
        return;
    }
    for (const std::string& address : port.ipv4_addresses) {
        const std::string wanted = ipv4_mapped_gid(address);
        const GidFact* v2 = nullptr;
        const GidFact* v1 = nullptr;
        for (const GidFact& gid : port.gids) {
            if (gid.gid != wanted) continue;
            if (gid.type == "RoCE v2" && !v2) v2 = &gid;
            if (gid.type != "RoCE v2" && !v1) v1 = &gid;
        }
        if (v2) {
            out.healthy.push_back(
                {"gid",
                 fmt::format("{} is GID index {} (RoCE v2) on {}: what rdma_cm picks; for "
                             "QPs brought up by hand use --gid-index {} "
                             "(NCCL_IB_GID_INDEX={})",
                             address, v2->index, port_name(device, port), v2->index, v2->index)});
        } else if (v1) {
            out.findings.push_back(
                {"gid", Severity::kWarning,
                 fmt::format("{} has only a RoCE v1 GID (index {}) on {}", address, v1->index,
                             port_name(device, port)),
                 "RoCE v1 is not routed (no IP/UDP header): a peer on another subnet, or one "
                 "that speaks only v2, never answers",
                 fmt::format("sudo cma_roce_mode -d {} -p {} -m 2 (and use the v2 GID's index)",
                             device.name, port.number)});
        } else {
            out.findings.push_back(
                {"gid", Severity::kProblem,
                 fmt::format("no GID for {} on {} (the GID table does not follow {})", address,
                             port_name(device, port), netdev),
                 "connections to or from this address fail to resolve (rdma_cm ADDR_ERROR)",
                 fmt::format("rdma link show: the device must sit on {} (sudo rdma link add "
                             "rxe0 type rxe netdev {} for Soft-RoCE)",
                             netdev, netdev)});
        }
    }
}

void check_mtu(const DeviceFact& device, const PortFact& port, Diagnosis& out) {
    if (port.active_mtu == 0) return;
    const std::string netdev =
        port.netdev_mtu > 0 ? fmt::format(" on a {}-byte netdev ({})", port.netdev_mtu, port.netdev)
                            : "";
    if (port.active_mtu < 1024) {
        out.findings.push_back(
            {"mtu", Severity::kWarning,
             fmt::format("{}'s active MTU is {}{}", port_name(device, port), port.active_mtu,
                         netdev),
             "every message is cut into packets this small: more headers, ACKs and per-packet "
             "work; a peer or application asking for more fails at RTR",
             fmt::format("sudo ip link set {} mtu 1500 (or more: the same on every host and "
                         "switch port)",
                         port.netdev.empty() ? "IF" : port.netdev)});
        return;
    }
    out.healthy.push_back(
        {"mtu", fmt::format("{} active MTU {}{}: the largest path_mtu a QP here may use",
                            port_name(device, port), port.active_mtu, netdev)});
}

void check_counters(const HostFacts& host, const DeviceFact& device, const PortFact& port,
                    Diagnosis& out) {
    if (host.counter_window_s <= 0) return;
    const std::string window = fmt::format("{:.1f} s", host.counter_window_s);
    bool quiet = true;
    if (std::string loss = rises(port, kLossCounters); !loss.empty()) {
        quiet = false;
        out.findings.push_back(
            {"counters", Severity::kWarning,
             fmt::format("{} is retransmitting: {} in {}", port_name(device, port), loss, window),
             "RC recovers from a lost packet by go-back-N: each loss costs a timeout or a NAK "
             "and a resend of everything after it; goodput falls long before anything fails",
             fmt::format("find the lossy hop: ethtool -S {}, tc -s qdisc show dev {}, the "
                         "switch's drop counters (RoCE wants a lossless or ECN-marking fabric)",
                         port.netdev.empty() ? "IF" : port.netdev,
                         port.netdev.empty() ? "IF" : port.netdev)});
    }
    if (std::string rnr = rises(port, kRnrCounters); !rnr.empty()) {
        quiet = false;
        out.findings.push_back(
            {"counters", Severity::kWarning,
             fmt::format("{} sees receivers not ready: {} in {}", port_name(device, port), rnr,
                         window),
             "a SEND found no receive posted: the sender waits min_rnr_timer and tries again, "
             "and after rnr_retry tries fails with IBV_WC_RNR_RETRY_EXC_ERR",
             "the receiving application must post receives earlier or more of them (or use an "
             "SRQ); rnr_retry 7 waits forever instead of failing"});
    }
    if (std::string gave_up = rises(port, kGiveUpCounters); !gave_up.empty()) {
        quiet = false;
        out.findings.push_back(
            {"counters", Severity::kProblem,
             fmt::format("{}: QPs gave up: {} in {}", port_name(device, port), gave_up, window),
             "a connection ended in IBV_WC_RETRY_EXC_ERR or RNR_RETRY_EXC_ERR: its QP is in ERROR "
             "and every WR after it was flushed",
             "the retransmission and RNR lines above say which: fix the lossy link, or make the "
             "receiver post receives in time; then reconnect (the QP cannot recover in place)"});
    }
    if (quiet)
        out.healthy.push_back({"counters", fmt::format("{}: no retransmission, RNR or retry error "
                                                       "counted over {}",
                                                       port_name(device, port), window)});
}

void check_traffic_class(const DeviceFact& device, const PortFact& port, Diagnosis& out) {
    if (!port.global_traffic_class) return;
    const unsigned tclass = *port.global_traffic_class;
    if ((tclass & 3u) == 3u) {
        out.findings.push_back(
            {"traffic-class", Severity::kProblem,
             fmt::format("{}'s global traffic class {} sets both ECN bits", port_name(device, port),
                         tclass),
             "ECN 11 is Congestion Experienced: every packet leaves already marked, so every "
             "receiver asks for a slow-down (CNPs) and DCQCN throttles traffic that saw no "
             "congestion; and this global value overrides every connection's own",
             fmt::format("echo {} | sudo tee /sys/class/infiniband/{}/tc/{}/traffic_class "
                         "(DSCP {} with ECT(0): DSCP × 4 + 2)",
                         (tclass & ~3u) | 2u, device.name, port.number, tclass >> 2)});
    } else {
        out.healthy.push_back(
            {"traffic-class",
             fmt::format("{}: global traffic class {} (DSCP {}, ECN {}) overrides every "
                         "connection's own",
                         port_name(device, port), tclass, tclass >> 2, tclass & 3u)});
    }
}

void check_memlock(const HostFacts& host, Diagnosis& out) {
    if (!host.memlock_bytes) {
        out.healthy.push_back({"memlock", "locked-memory limit unlimited"});
        return;
    }
    const std::uint64_t limit = *host.memlock_bytes;
    if (limit < kMemlockFloor && host.can_lock_memory) {
        out.healthy.push_back(
            {"memlock", fmt::format("locked-memory limit {}, which binds only programs without "
                                    "CAP_IPC_LOCK (this one has it: run as an ordinary user to "
                                    "check theirs)",
                                    size_text(limit))});
        return;
    }
    if (limit >= kMemlockFloor) {
        out.healthy.push_back({"memlock", fmt::format("locked-memory limit {}", size_text(limit))});
        return;
    }
    out.findings.push_back(
        {"memlock", Severity::kProblem,
         fmt::format("the locked-memory limit (ulimit -l) is {}", size_text(limit)),
         fmt::format("registering more than {} fails (ibv_reg_mr: ENOMEM) for a program without "
                     "CAP_IPC_LOCK; NCCL, UCX and perftest register tens of MiB",
                     size_text(limit)),
         "ulimit -l unlimited; lasting: memlock in /etc/security/limits.conf "
         "(LimitMEMLOCK=infinity for a systemd service, --ulimit memlock=-1 for a container)"});
}

}  // namespace

std::string ipv4_mapped_gid(const std::string& ipv4) {
    in_addr address{};
    if (inet_pton(AF_INET, ipv4.c_str(), &address) != 1) return {};
    const auto* b = reinterpret_cast<const unsigned char*>(&address.s_addr);
    return fmt::format("0000:0000:0000:0000:0000:ffff:{:02x}{:02x}:{:02x}{:02x}", b[0], b[1], b[2],
                       b[3]);
}

Diagnosis diagnose(const HostFacts& host) {
    Diagnosis out;
    if (!host.rdma_in_kernel) {
        out.findings.push_back(
            {"kernel", Severity::kProblem,
             "this kernel has no RDMA support (no /sys/class/infiniband)",
             "no verbs program can run on this machine",
             "run it where RDMA exists, e.g. in the lab: ./rdmalab lab -- build/bin/rdma-doctor"});
        return out;
    }
    if (host.devices.empty()) {
        const std::string netdev = first_netdev(host);
        out.findings.push_back(
            {"devices", Severity::kProblem, "no RDMA device",
             loaded(host, "rdma_rxe") ? "rdma_rxe is loaded but no Soft-RoCE device was created"
                                      : "no RDMA driver has made a device (rdma_rxe is not loaded)",
             loaded(host, "rdma_rxe")
                 ? fmt::format("sudo rdma link add rxe0 type rxe netdev {}", netdev)
                 : fmt::format("sudo modprobe rdma_rxe && sudo rdma link add rxe0 type rxe netdev "
                               "{} (Soft-RoCE), or load your NIC's RDMA driver (mlx5_ib, irdma, "
                               "bnxt_re…)",
                               netdev)});
        check_memlock(host, out);
        return out;
    }
    std::string names;
    for (const DeviceFact& device : host.devices)
        names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", device.name, device.driver);
    out.healthy.push_back({"devices", names});
    check_device_nodes(host, out);
    for (const DeviceFact& device : host.devices) {
        for (const PortFact& port : device.ports) {
            check_port_state(device, port, out);
            check_gids(device, port, out);
            check_mtu(device, port, out);
            check_traffic_class(device, port, out);
            check_counters(host, device, port, out);
        }
    }
    check_memlock(host, out);
    check_gpus(host, out);
    if (!host.transparent_hugepages.empty())
        out.healthy.push_back(
            {"hugepages", fmt::format("transparent huge pages: {}", host.transparent_hugepages)});
    return out;
}

std::string render_text(const Diagnosis& diagnosis) {
    std::string text;
    for (const Finding& f : diagnosis.findings)
        text +=
            fmt::format("{} {}: {} — {}. Fix: {}\n", f.severity == Severity::kProblem ? "✗" : "!",
                        f.check, f.what, f.why, f.fix);
    for (const Healthy& h : diagnosis.healthy)
        text += fmt::format("✓ {}: {}\n", h.check, h.summary);
    // Nothing could be checked (no RDMA in this kernel): the one finding says it all.
    if (diagnosis.healthy.empty() && diagnosis.findings.size() == 1) return text;
    text += diagnosis.findings.empty()
                ? fmt::format("rdma-doctor: healthy ({} checks)\n", diagnosis.healthy.size())
                : fmt::format("rdma-doctor: {} finding{} ({} checks healthy)\n",
                              diagnosis.findings.size(), diagnosis.findings.size() == 1 ? "" : "s",
                              diagnosis.healthy.size());
    return text;
}

records::DoctorReport report_record(const HostFacts& host, const Diagnosis& diagnosis) {
    records::DoctorReport report;
    report.healthy = diagnosis.findings.empty();
    for (const Finding& f : diagnosis.findings)
        report.findings.push_back(records::DoctorFinding{
            .check = f.check,
            .severity = f.severity == Severity::kProblem ? "problem" : "warning",
            .what = f.what,
            .why = f.why,
            .fix = f.fix});
    for (const Healthy& h : diagnosis.healthy)
        report.passed.push_back(records::DoctorPassed{h.check, h.summary});
    for (const DeviceFact& device : host.devices) {
        records::DoctorDevice out{device.name, device.driver, {}};
        for (const PortFact& port : device.ports)
            out.ports.push_back(records::DoctorPort{.port = port.number,
                                                    .state = port.state,
                                                    .link_layer = port.link_layer,
                                                    .active_mtu = port.active_mtu,
                                                    .netdev = port.netdev,
                                                    .ipv4 = port.ipv4_addresses});
        report.devices.push_back(std::move(out));
    }
    for (const GpuFact& gpu : host.gpus)
        report.gpus.push_back(records::DoctorGpu{gpu.address, gpu.vendor, gpu.place.numa_node});
    return report;
}

std::string render_json(const HostFacts& host, const Diagnosis& diagnosis) {
    return records::to_json(report_record(host, diagnosis)).dump(2) + "\n";
}

}  // namespace rdmalab::doctor
