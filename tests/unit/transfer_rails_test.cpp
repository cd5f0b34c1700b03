// The transfer engine's choice of rails on made-up hosts (transfer/rail_choice.hpp): every device
// up by default, a NUMA node's, a GPU's nearest by PCI bridges, and why each other device was
// left out; and the --near text parsed or refused.
#include "rdmalab/transfer/rail_choice.hpp"

#include <gtest/gtest.h>

namespace rdmalab::transfer {
namespace {

// Two NUMA nodes, two NICs each. On node 0, mlx5_1 shares a PCIe switch with the GPU
// 0000:3d:00.0 and mlx5_0 hangs off another root port; node 1's mlx5_3 has its port down.
std::vector<DeviceFacts> two_socket_host() {
    const std::string node0 = "/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0";
    return {
        {"mlx5_3", "DOWN", "Ethernet",
         PciPlace{"/sys/devices/pci0000:ae/0000:ae:02.0/0000:b0:00.0", 1}},
        {"mlx5_2", "ACTIVE", "Ethernet",
         PciPlace{"/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0", 1}},
        {"mlx5_1", "ACTIVE", "Ethernet", PciPlace{node0 + "/0000:3c:04.0/0000:3e:00.0", 0}},
        {"mlx5_0", "ACTIVE", "Ethernet",
         PciPlace{"/sys/devices/pci0000:3a/0000:3a:02.0/0000:50:00.0", 0}},
    };
}

const PciPlace kSwitchGpu{
    "/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/0000:3c:00.0/0000:3d:00.0", 0};

RailTarget gpu_target(const PciPlace& place) {
    RailTarget target = std::get<RailTarget>(parse_rail_target("gpu:3d:00.0"));
    target.gpu_place = place;
    return target;
}

std::string why_left(const RailChoice& choice, const std::string& device) {
    for (const LeftOut& left : choice.left_out)
        if (left.device == device) return left.why;
    return "(not left out)";
}

TEST(RailChoice, EveryActiveDeviceByDefaultInNameOrder) {
    const auto host = two_socket_host();
    const RailChoice choice = choose_rails(host, {});
    EXPECT_EQ(choice.rails, (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2"}));
    ASSERT_EQ(choice.left_out.size(), 1U);
    EXPECT_EQ(why_left(choice, "mlx5_3"), "port 1 is DOWN, not ACTIVE");
    EXPECT_EQ(describe_choice(choice),
              "rails: mlx5_0 (port 1 ACTIVE), mlx5_1 (port 1 ACTIVE), mlx5_2 (port 1 ACTIVE); "
              "left out: mlx5_3 (port 1 is DOWN, not ACTIVE)");
}

TEST(RailChoice, ANumaNodeKeepsItsOwnNics) {
    const auto host = two_socket_host();
    const RailChoice zero = choose_rails(host, std::get<RailTarget>(parse_rail_target("numa:0")));
    EXPECT_EQ(zero.rails, (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
    EXPECT_EQ(zero.why.front(), "NUMA node 0");
    EXPECT_EQ(why_left(zero, "mlx5_2"), "on NUMA node 1, not 0");
    EXPECT_EQ(why_left(zero, "mlx5_3"), "port 1 is DOWN, not ACTIVE");
    // Node 1's other NIC is down: one rail left.
    const RailChoice one = choose_rails(host, std::get<RailTarget>(parse_rail_target("numa:1")));
    EXPECT_EQ(one.rails, std::vector<std::string>{"mlx5_2"});
    // No NIC on node 2: no rail, and every device's reason.
    const RailChoice two = choose_rails(host, std::get<RailTarget>(parse_rail_target("numa:2")));
    EXPECT_TRUE(two.rails.empty());
    EXPECT_EQ(two.left_out.size(), 4U);
    EXPECT_NE(describe_choice(two).find("rails: none; left out:"), std::string::npos);
}

TEST(RailChoice, AGpuKeepsTheNicsFewestBridgesAway) {
    const auto host = two_socket_host();
    const RailChoice choice = choose_rails(host, gpu_target(kSwitchGpu));
    EXPECT_EQ(choice.rails, std::vector<std::string>{"mlx5_1"});
    EXPECT_EQ(choice.why.front(), "PIX to the GPU, 3 PCI bridges between");
    EXPECT_EQ(why_left(choice, "mlx5_0"),
              "farther from GPU 0000:3d:00.0: PHB to the GPU, 5 PCI bridges between; mlx5_1 is "
              "PIX to the GPU, 3 PCI bridges between");
    EXPECT_NE(why_left(choice, "mlx5_2").find("SYS to the GPU"), std::string::npos);
    EXPECT_EQ(why_left(choice, "mlx5_3"), "port 1 is DOWN, not ACTIVE");
}

TEST(RailChoice, NicsEquallyNearAGpuAreAllRailsNearestFirst) {
    auto host = two_socket_host();
    // A second NIC under the GPU's switch, and a GPU with both: two rails.
    host.push_back({"mlx5_4", "ACTIVE", "Ethernet",
                    PciPlace{"/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/0000:3c:08.0/"
                             "0000:3f:00.0",
                             0}});
    EXPECT_EQ(choose_rails(host, gpu_target(kSwitchGpu)).rails,
              (std::vector<std::string>{"mlx5_1", "mlx5_4"}));
    // A GPU on node 1 with no NIC under its switch: node 1's up NIC, nearer than any on node 0.
    const RailChoice far =
        choose_rails(host, gpu_target({"/sys/devices/pci0000:ae/0000:ae:00.0/0000:c0:00.0", 1}));
    EXPECT_EQ(far.rails, std::vector<std::string>{"mlx5_2"});
    EXPECT_EQ(far.why.front(), "PXB to the GPU, 1 PCI bridge between");
}

TEST(RailChoice, SoftwareDevicesAndMixedLinkLayers) {
    const std::vector<DeviceFacts> host = {
        {"rxe0", "ACTIVE", "Ethernet", PciPlace{"/sys/devices/pci0000:00/0000:00:03.0", -1}},
        {"rxe1", "ACTIVE", "Ethernet", std::nullopt},
        {"ib0", "ACTIVE", "InfiniBand", std::nullopt},
        {"rxe2", "", "Ethernet", std::nullopt},
    };
    const RailChoice any = choose_rails(host, {});
    EXPECT_EQ(any.rails, (std::vector<std::string>{"rxe0", "rxe1"}));
    EXPECT_EQ(why_left(any, "ib0"),
              "its link layer is InfiniBand, the other rails' Ethernet (RoCE)");
    EXPECT_EQ(why_left(any, "rxe2"), "it has no port 1");
    const RailChoice numa = choose_rails(host, std::get<RailTarget>(parse_rail_target("numa:0")));
    EXPECT_TRUE(numa.rails.empty());
    EXPECT_EQ(why_left(numa, "rxe0"), "its NUMA node is unknown, not 0");
    const RailChoice gpu = choose_rails(host, gpu_target(kSwitchGpu));
    EXPECT_EQ(gpu.rails, std::vector<std::string>{"rxe0"});
    EXPECT_EQ(why_left(gpu, "rxe1"), "no place on the PCI bus: no distance to the GPU");
}

TEST(RailChoice, NoMoreRailsThanTheEngineDrives) {
    std::vector<DeviceFacts> host;
    for (int i = 10; i >= 0; --i)
        host.push_back({"mlx5_" + std::to_string(i), "ACTIVE", "InfiniBand", std::nullopt});
    const RailChoice choice = choose_rails(host, {});
    ASSERT_EQ(choice.rails.size(), kMaxRails);
    EXPECT_EQ(choice.rails.back(), "mlx5_7");  // mlx5_10 after mlx5_9, as a person counts
    EXPECT_EQ(why_left(choice, "mlx5_10"), "past the 8 rails the engine drives");
}

TEST(RailChoice, TheNearTextIsANumaNodeOrAGpuAddress) {
    const auto numa = parse_rail_target("numa:1");
    ASSERT_TRUE(std::holds_alternative<RailTarget>(numa));
    EXPECT_EQ(std::get<RailTarget>(numa).numa_node, 1);
    const auto gpu = parse_rail_target("gpu:0000:3D:00.0");
    ASSERT_TRUE(std::holds_alternative<RailTarget>(gpu));
    EXPECT_EQ(std::get<RailTarget>(gpu).gpu_address, "0000:3d:00.0");
    for (const char* bad : {"numa:", "numa:-1", "numa:x", "numa:1x", "gpu:", "gpu:3d:00",
                            "gpu:3d:00.8", "gpu:zz:00.0", "socket:0", ""}) {
        const auto refused = parse_rail_target(bad);
        ASSERT_TRUE(std::holds_alternative<std::string>(refused)) << bad;
        EXPECT_NE(std::get<std::string>(refused).find("give numa:N"), std::string::npos);
    }
}

TEST(PciPlace, BridgesBetweenTwoDevices) {
    const PciPlace nic{
        "/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/0000:3c:04.0/0000:3e:00.0", 0};
    EXPECT_EQ(pci_bridges_between(kSwitchGpu, nic), 3);  // 3c:00.0, the switch 3b:00.0, 3c:04.0
    EXPECT_EQ(pci_bridges_between(kSwitchGpu, kSwitchGpu), 0);
    // Under two host bridges: every bridge above each, both host bridges included.
    EXPECT_EQ(
        pci_bridges_between(kSwitchGpu, {"/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0", 1}),
        6);
    EXPECT_EQ(pcie_relation(kSwitchGpu, nic), PcieRelation::kPix);
    EXPECT_STREQ(pcie_relation_text(PcieRelation::kPix), "behind the same PCIe switch");
}

}  // namespace
}  // namespace rdmalab::transfer
