// Which RDMA devices become the engine's rails on a real host, and why the others do not: every
// device whose port is up, or those nearest a target (a NUMA node, or a GPU by the PCI bridges
// between it and each NIC, as rdma-doctor measures a GPU's distance: rdmalab/pci_place.hpp).
// choose_rails is pure logic over the devices' facts (unit-tested on made-up hosts);
// read_host_devices reads those facts from sysfs, as rdma-doctor's gather does.
#pragma once

#include "rdmalab/pci_place.hpp"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace rdmalab::transfer {

// One RDMA device as the host describes it (port 1: the port a rail uses).
struct DeviceFacts {
    std::string name;                  // "mlx5_0", "rxe1"
    std::string port_state;            // "ACTIVE", "DOWN", "INIT"; "" when it has no port 1
    std::string link_layer;            // "Ethernet" (RoCE) or "InfiniBand"
    std::optional<PciPlace> pci = {};  // a software device's: its network interface's, if any
};

// What the rails should be near: anything (every device up), a NUMA node, or a GPU.
struct RailTarget {
    enum class Kind { kAny, kNuma, kGpu } kind = Kind::kAny;
    int numa_node = -1;
    std::string gpu_address = {};  // "0000:3d:00.0"
    PciPlace gpu_place = {};       // read from the host (read_pci_place) before choosing
};

// "numa:N" or "gpu:[DOMAIN:]BUS:DEVICE.FUNCTION" (hexadecimal; the domain 0000 when left out)
// → the target, its GPU's place not yet read; or why the text names none.
std::variant<RailTarget, std::string> parse_rail_target(std::string_view text);

struct LeftOut {
    std::string device;
    std::string why;  // "port 1 is DOWN", "on NUMA node 1, not 0", …
};
struct RailChoice {
    std::vector<std::string> rails;  // in rail order: nearest first, then by name
    std::vector<std::string> why;    // for each rail, why it was taken ("NUMA node 0")
    std::vector<LeftOut> left_out;   // in the devices' order
};

// The rails, at most kMaxRails: the devices whose port is ACTIVE, of the link layer most of them
// have (both hosts' rails pair up by index, each pair of one link layer), and with a target only
// those on its NUMA node, or those with the fewest PCI bridges to its GPU (relation first: PIX
// before PXB, PHB, NODE, SYS). Rails empty when none is left (the left-out list says why).
RailChoice choose_rails(std::span<const DeviceFacts> devices, const RailTarget& target);

// One line for a person: "rails: mlx5_0 (NUMA node 0), mlx5_1 (NUMA node 0); left out: mlx5_2
// (on NUMA node 1, not 0)".
std::string describe_choice(const RailChoice& choice);

// Every device under /sys/class/infiniband, by name: port 1's state and link layer, and its PCI
// place (a software device such as rxe: its parent network interface's). None when the kernel
// has no RDMA devices; throws rdmalab::Error naming the directory it could not read.
std::vector<DeviceFacts> read_host_devices();

}  // namespace rdmalab::transfer
