// Unit tests of rdma-doctor's rules (doctor/diagnose.cpp): a healthy made-up host has no
// finding, and each way of breaking it gives the finding that names the cause, with its fix.
// The same worlds, broken for real, are tests/lab/doctor.sh.
#include "doctor.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

using namespace rdmalab::doctor;

namespace {

HostFacts healthy_host() {
    HostFacts host;
    host.rdma_in_kernel = true;
    host.modules = {"ib_core", "ib_uverbs", "rdma_ucm", "rdma_rxe"};
    host.ethernet_netdevs = {"eth1"};
    host.device_nodes = {{"/dev/infiniband/rdma_cm", true, "crw-rw-rw-"},
                         {"/dev/infiniband/uverbs0", true, "crw-rw-rw-"}};
    PortFact port;
    port.number = 1;
    port.state = "ACTIVE";
    port.physical_state = "LinkUp";
    port.link_layer = "Ethernet";
    port.active_mtu = 1024;
    port.max_mtu = 4096;
    port.netdev = "eth1";
    port.netdev_mtu = 1500;
    port.netdev_up = true;
    port.ipv4_addresses = {"198.51.100.1"};
    port.gids = {{0, "fe80:0000:0000:0000:0000:0000:0000:0001", "IB/RoCE v1", "eth1"},
                 {1, "fe80:0000:0000:0000:0000:0000:0000:0001", "RoCE v2", "eth1"},
                 {2, "0000:0000:0000:0000:0000:ffff:c633:6401", "IB/RoCE v1", "eth1"},
                 {3, "0000:0000:0000:0000:0000:ffff:c633:6401", "RoCE v2", "eth1"}};
    host.devices = {{"rxe0", "rdma_rxe", true, "", {port}, std::nullopt}};
    host.memlock_bytes = std::nullopt;
    host.transparent_hugepages = "madvise";
    host.counter_window_s = 1.0;
    return host;
}

// The first finding of a check, as a copy (the diagnosis is often a temporary).
std::optional<Finding> finding(const Diagnosis& diagnosis, const std::string& check) {
    auto found = std::find_if(diagnosis.findings.begin(), diagnosis.findings.end(),
                              [&](const Finding& f) { return f.check == check; });
    if (found == diagnosis.findings.end()) return std::nullopt;
    return *found;
}

PortFact& port_of(HostFacts& host) {
    return host.devices.front().ports.front();
}

}  // namespace

TEST(Doctor, HealthyHostHasNoFinding) {
    const Diagnosis diagnosis = diagnose(healthy_host());
    EXPECT_TRUE(diagnosis.findings.empty()) << render_text(diagnosis);
    const std::string text = render_text(diagnosis);
    EXPECT_NE(text.find("198.51.100.1 is GID index 3 (RoCE v2)"), std::string::npos) << text;
    EXPECT_NE(text.find("rdma-doctor: healthy"), std::string::npos) << text;
}

TEST(Doctor, KernelWithoutRdmaSaysSoInOneLine) {
    HostFacts host;
    const Diagnosis diagnosis = diagnose(host);
    ASSERT_EQ(diagnosis.findings.size(), 1u);
    EXPECT_EQ(diagnosis.findings[0].check, "kernel");
    EXPECT_NE(diagnosis.findings[0].fix.find("./rdmalab lab"), std::string::npos);
}

TEST(Doctor, NoDeviceWithRxeUnloaded) {
    HostFacts host = healthy_host();
    host.devices.clear();
    host.modules = {"ib_core"};
    const std::optional<Finding> f = finding(diagnose(host), "devices");
    ASSERT_TRUE(f.has_value());
    EXPECT_NE(f->fix.find("modprobe rdma_rxe"), std::string::npos) << f->fix;
    EXPECT_NE(f->fix.find("netdev eth1"), std::string::npos) << f->fix;
}

TEST(Doctor, NoDeviceWithRxeLoaded) {
    HostFacts host = healthy_host();
    host.devices.clear();
    const std::optional<Finding> f = finding(diagnose(host), "devices");
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->fix, "sudo rdma link add rxe0 type rxe netdev eth1");
}

TEST(Doctor, PortDownBecauseItsNetdevIsDown) {
    HostFacts host = healthy_host();
    port_of(host).state = "DOWN";
    port_of(host).physical_state = "Disabled";
    port_of(host).netdev_up = false;
    const std::optional<Finding> f = finding(diagnose(host), "port-state");
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->fix, "sudo ip link set eth1 up");
    EXPECT_NE(f->what.find("DOWN"), std::string::npos);
}

TEST(Doctor, AddressRemovedMeansNoMappedGid) {
    HostFacts host = healthy_host();
    port_of(host).ipv4_addresses.clear();
    port_of(host).gids.resize(2);
    const std::optional<Finding> f = finding(diagnose(host), "gid");
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->severity, Severity::kProblem);
    EXPECT_NE(f->fix.find("ip addr add"), std::string::npos);
}

TEST(Doctor, OnlyRoceV1GidIsAWarning) {
    HostFacts host = healthy_host();
    port_of(host).gids.pop_back();
    const std::optional<Finding> f = finding(diagnose(host), "gid");
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->severity, Severity::kWarning);
    EXPECT_NE(f->what.find("only a RoCE v1 GID (index 2)"), std::string::npos) << f->what;
}

TEST(Doctor, MemlockTooLowForAnUnprivilegedProgram) {
    HostFacts host = healthy_host();
    host.memlock_bytes = 64 * 1024;
    const std::optional<Finding> f = finding(diagnose(host), "memlock");
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->severity, Severity::kProblem);
    EXPECT_NE(f->what.find("64 KiB"), std::string::npos) << f->what;
    host.can_lock_memory = true;  // root: the limit does not bind this process
    EXPECT_FALSE(finding(diagnose(host), "memlock").has_value());
    host.can_lock_memory = false;
    host.memlock_bytes = kMemlockFloor;
    EXPECT_FALSE(finding(diagnose(host), "memlock").has_value());
}

TEST(Doctor, UnusableDeviceFile) {
    HostFacts host = healthy_host();
    host.device_nodes[1].usable = false;
    host.device_nodes[1].mode = "c---------";
    const std::optional<Finding> f = finding(diagnose(host), "device-nodes");
    ASSERT_TRUE(f.has_value());
    EXPECT_NE(f->what.find("/dev/infiniband/uverbs0"), std::string::npos);
    EXPECT_NE(f->fix.find("chmod 666 /dev/infiniband/uverbs0"), std::string::npos);
}

TEST(Doctor, MissingRdmaCmFile) {
    HostFacts host = healthy_host();
    host.device_nodes.erase(host.device_nodes.begin());
    const std::optional<Finding> f = finding(diagnose(host), "device-nodes");
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->fix, "sudo modprobe rdma_ucm");
}

TEST(Doctor, SmallMtuIsAWarning) {
    HostFacts host = healthy_host();
    port_of(host).active_mtu = 512;
    port_of(host).netdev_mtu = 1000;
    const std::optional<Finding> f = finding(diagnose(host), "mtu");
    ASSERT_TRUE(f.has_value());
    EXPECT_NE(f->fix.find("ip link set eth1 mtu"), std::string::npos);
}

TEST(Doctor, RetransmissionsClimbing) {
    HostFacts host = healthy_host();
    port_of(host).counter_increase = {{"out_of_seq_request", 12}, {"sent_pkts", 1000}};
    const std::optional<Finding> f = finding(diagnose(host), "counters");
    ASSERT_TRUE(f.has_value());
    EXPECT_NE(f->what.find("out_of_seq_request +12 in 1.0 s"), std::string::npos) << f->what;
    EXPECT_EQ(f->what.find("sent_pkts"), std::string::npos);
}

TEST(Doctor, ReceiversNotReady) {
    HostFacts host = healthy_host();
    port_of(host).counter_increase = {{"rcvd_rnr_err", 40}};
    const std::optional<Finding> f = finding(diagnose(host), "counters");
    ASSERT_TRUE(f.has_value());
    EXPECT_NE(f->what.find("receivers not ready"), std::string::npos);
}

TEST(Doctor, BothEcnBitsInTheGlobalTrafficClass) {
    HostFacts host = healthy_host();
    port_of(host).global_traffic_class = 107;  // DSCP 26, ECN 11 (CE)
    const std::optional<Finding> f = finding(diagnose(host), "traffic-class");
    ASSERT_TRUE(f.has_value());
    EXPECT_NE(f->fix.find("echo 106"), std::string::npos) << f->fix;
    port_of(host).global_traffic_class = 106;
    EXPECT_FALSE(finding(diagnose(host), "traffic-class").has_value());
}

TEST(Doctor, IpV4MappedGid) {
    EXPECT_EQ(ipv4_mapped_gid("198.51.100.1"), "0000:0000:0000:0000:0000:ffff:c633:6401");
    EXPECT_EQ(ipv4_mapped_gid("10.0.0.255"), "0000:0000:0000:0000:0000:ffff:0a00:00ff");
    EXPECT_EQ(ipv4_mapped_gid("banana"), "");
}

TEST(Doctor, OneLinePerFindingAndJson) {
    HostFacts host = healthy_host();
    host.memlock_bytes = 64 * 1024;
    port_of(host).state = "DOWN";
    const Diagnosis diagnosis = diagnose(host);
    ASSERT_EQ(diagnosis.findings.size(), 2u);
    const std::string text = render_text(diagnosis);
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'),
              static_cast<long>(diagnosis.findings.size() + diagnosis.healthy.size() + 1));
    // The JSON, read back through its type.
    const rdmalab::records::DoctorReport report = rdmalab::records::doctor_from_json(
        rdmalab::records::parse_json(render_json(host, diagnosis), "the report"), "the report");
    EXPECT_EQ(report, report_record(host, diagnosis));
    EXPECT_EQ(report.format, "rdma-doctor");
    EXPECT_FALSE(report.healthy);
    ASSERT_EQ(report.findings.size(), 2u);
    EXPECT_EQ(report.findings[0].check, "port-state");
    EXPECT_EQ(report.findings[0].severity, "problem");
}

// ---- GPU hosts (the lab has no GPU: these rules are proven on made-up hosts only).

namespace {

HostFacts gpu_host() {
    HostFacts host = healthy_host();
    host.devices.front().name = "mlx5_0";
    host.devices.front().driver = "mlx5_core";
    host.devices.front().pci =
        PciPlace{"/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/0000:3c:04.0/0000:3e:00.0", 0};
    host.gpus = {
        {"0000:3d:00.0",
         "NVIDIA",
         {"/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/0000:3c:00.0/0000:3d:00.0", 0}}};
    host.modules.push_back("nvidia_peermem");
    host.kernel_release = "6.1.0-56-amd64";
    host.nvidia_driver = "550.54.15";
    return host;
}

std::vector<std::string> healthy_checks(const Diagnosis& diagnosis) {
    std::vector<std::string> checks;
    for (const Healthy& h : diagnosis.healthy) checks.push_back(h.check);
    return checks;
}

}  // namespace

TEST(DoctorGpu, PcieRelationsFollowTheBridges) {
    const PciPlace gpu{
        "/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/0000:3c:00.0/0000:3d:00.0", 0};
    EXPECT_EQ(
        pcie_relation(
            gpu,
            {"/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/0000:3c:04.0/0000:3e:00.0", 0}),
        PcieRelation::kPix);
    EXPECT_EQ(pcie_relation(gpu, {"/sys/devices/pci0000:3a/0000:3a:00.0/0000:40:00.0", 0}),
              PcieRelation::kPxb);
    EXPECT_EQ(pcie_relation(gpu, {"/sys/devices/pci0000:3a/0000:3a:02.0/0000:50:00.0", 0}),
              PcieRelation::kPhb);
    EXPECT_EQ(pcie_relation(gpu, {"/sys/devices/pci0000:5d/0000:5d:00.0/0000:5e:00.0", 0}),
              PcieRelation::kNode);
    EXPECT_EQ(pcie_relation(gpu, {"/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0", 1}),
              PcieRelation::kSys);
    EXPECT_STREQ(pcie_relation_name(PcieRelation::kSys), "SYS");
}

TEST(DoctorGpu, PeermemAndANicOnTheGpusSwitchAreHealthy) {
    const Diagnosis diagnosis = diagnose(gpu_host());
    EXPECT_TRUE(diagnosis.findings.empty());
    const auto checks = healthy_checks(diagnosis);
    EXPECT_NE(std::find(checks.begin(), checks.end(), "gpudirect"), checks.end());
    auto distance = std::find_if(diagnosis.healthy.begin(), diagnosis.healthy.end(),
                                 [](const Healthy& h) { return h.check == "gpu-distance"; });
    ASSERT_NE(distance, diagnosis.healthy.end());
    EXPECT_NE(distance->summary.find("GPU 0000:3d:00.0 ↔ mlx5_0: PIX"), std::string::npos);
}

TEST(DoctorGpu, NoPeermemAndNoDmabufPathIsNamed) {
    HostFacts host = gpu_host();
    host.modules.pop_back();
    host.nvidia_driver = "470.82.01";
    const auto f = finding(diagnose(host), "gpudirect");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->severity, Severity::kProblem);
    EXPECT_NE(f->why.find("EFAULT"), std::string::npos);
    EXPECT_NE(f->fix.find("sudo modprobe nvidia_peermem"), std::string::npos);
}

TEST(DoctorGpu, ADmabufCapableDriverAndKernelNeedNoPeermem) {
    HostFacts host = gpu_host();
    host.modules.pop_back();
    host.nvidia_driver = "535.104.05";
    EXPECT_TRUE(diagnose(host).findings.empty());
    host.kernel_release = "5.4.0-150-generic";  // before dma-buf registration
    EXPECT_TRUE(finding(diagnose(host), "gpudirect"));
}

TEST(DoctorGpu, TheNvidiaDriverNotLoaded) {
    HostFacts host = gpu_host();
    host.nvidia_driver.clear();
    const auto f = finding(diagnose(host), "gpudirect");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->fix, "sudo modprobe nvidia (install the driver if it is missing)");
}

TEST(DoctorGpu, ANicOnTheOtherSocketIsAWarning) {
    HostFacts host = gpu_host();
    host.devices.front().pci = PciPlace{"/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0", 1};
    const auto f = finding(diagnose(host), "gpu-distance");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->severity, Severity::kWarning);
    EXPECT_NE(f->what.find("SYS"), std::string::npos) << f->what;
    EXPECT_NE(f->fix.find("numactl -N 0"), std::string::npos) << f->fix;
}

TEST(DoctorGpu, OnlyASoftwareRdmaDeviceMeansNoGpuDirect) {
    HostFacts host = gpu_host();
    host.devices.front().name = "rxe0";
    host.devices.front().pci.reset();
    const auto f = finding(diagnose(host), "gpu-distance");
    ASSERT_TRUE(f);
    EXPECT_NE(f->what.find("no RDMA device on the PCI bus (rxe0 is software)"), std::string::npos)
        << f->what;
}

TEST(DoctorGpu, NoGpuNoGpuCheck) {
    const auto checks = healthy_checks(diagnose(healthy_host()));
    EXPECT_EQ(std::count(checks.begin(), checks.end(), "gpudirect"), 0);
    EXPECT_EQ(std::count(checks.begin(), checks.end(), "gpu-distance"), 0);
}
