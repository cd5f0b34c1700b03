// Where a PCI device sits (its sysfs path, the bridges above it, and its NUMA node) and how far
// two devices are apart: shared by rdma-doctor's GPU rules (a GPU's nearest NIC) and the
// transfer engine's choice of rails (the NICs nearest a GPU), so both measure distance the same
// way. The relation is pure logic over the paths, unit-tested on made-up hosts; read_pci_place
// reads a real host's sysfs.
#pragma once

#include <optional>
#include <string>

namespace rdmalab {

// A device's place on the PCI bus: its canonical sysfs path with the bridges above it
// ("/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0") and its NUMA node (-1 unknown).
struct PciPlace {
    std::string sysfs_path;
    int numa_node = -1;
    bool operator==(const PciPlace&) const = default;
};

// How far apart two PCI devices are, in nvidia-smi topo's terms: behind one PCIe switch (PIX),
// through bridges below the host bridge (PXB), through the host bridge (PHB), across host
// bridges of one NUMA node (NODE), across NUMA nodes (SYS).
enum class PcieRelation { kPix, kPxb, kPhb, kNode, kSys };
PcieRelation pcie_relation(const PciPlace& a, const PciPlace& b);
const char* pcie_relation_name(PcieRelation relation);
// The relation in words: "behind the same PCIe switch", "across NUMA nodes (…)".
const char* pcie_relation_text(PcieRelation relation);

// The bridges a transfer between a and b passes through on the bus: those above each below
// where their paths meet, and the one where they meet (two under one host bridge: that
// bridge). Devices under different host bridges count every bridge above each, both host
// bridges included. Finer than the relation: two NICs both PIX to a GPU may sit under nested
// switches at different depths.
int pci_bridges_between(const PciPlace& a, const PciPlace& b);

// The place of the device a sysfs link points to (/sys/class/infiniband/mlx5_0/device,
// /sys/bus/pci/devices/0000:3b:00.0): its canonical path and numa_node. nullopt when the link
// does not resolve to a device under /sys/devices/pci* (a software device has no place).
std::optional<PciPlace> read_pci_place(const std::string& device_link);

}  // namespace rdmalab
