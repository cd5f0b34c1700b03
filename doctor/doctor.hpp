// rdma-doctor's two halves: what a host is (HostFacts, gathered from sysfs, procfs, the verbs
// library and the limits of this process: gather.cpp) and what is wrong with it (diagnose: pure
// logic over the facts, so every rule is unit-tested on made-up hosts and proven on broken ones
// in the lab, tests/lab/doctor.sh).
#pragma once

#include "rdmalab/pci_place.hpp"
#include "rdmalab/records/doctor.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rdmalab::doctor {

struct GidFact {
    unsigned index = 0;
    std::string gid;   // "0000:0000:0000:0000:0000:ffff:c633:6401", as sysfs writes it
    std::string type;  // "RoCE v2", "IB/RoCE v1", "" when the kernel does not say
    std::string netdev;
};

struct PortFact {
    unsigned number = 0;
    std::string state;           // "ACTIVE", "DOWN", "INIT", "ARMED"
    std::string physical_state;  // "LinkUp", "Disabled", "Polling"
    std::string link_layer;      // "Ethernet" (RoCE), "InfiniBand"
    unsigned active_mtu = 0;     // bytes; 0 when the port could not be queried
    unsigned max_mtu = 0;
    std::string netdev;                       // the Ethernet interface under a RoCE port
    int netdev_mtu = -1;                      // bytes, -1 unknown
    bool netdev_up = false;                   // IFF_UP
    std::vector<std::string> ipv4_addresses;  // on the netdev, "198.51.100.1"
    std::vector<GidFact> gids;                // the valid entries of the GID table
    // Counters that rise when packets are lost or refused, and by how much in the window.
    std::map<std::string, std::uint64_t> counter_increase;
    std::optional<unsigned> global_traffic_class;  // a per-port setting some drivers have
};

// Where a device sits on the PCI bus, and how far two are apart: common/'s, shared with the
// transfer engine's choice of rails (rdmalab/pci_place.hpp).
using rdmalab::pcie_relation;
using rdmalab::pcie_relation_name;
using rdmalab::PcieRelation;
using rdmalab::PciPlace;

struct GpuFact {
    std::string address;  // "0000:3b:00.0"
    std::string vendor;   // "NVIDIA", "AMD"
    PciPlace place;
};

struct DeviceFact {
    std::string name;     // "rxe0", "mlx5_0"
    std::string driver;   // "rdma_rxe", "mlx5_core"
    bool opened = false;  // ibv_open_device worked (else the port facts are sysfs's)
    std::string open_error;
    std::vector<PortFact> ports;
    std::optional<PciPlace> pci;  // none: a software device (rxe, siw) has no place on the bus
};

struct DeviceNode {
    std::string path;     // "/dev/infiniband/uverbs0"
    bool usable = false;  // this process may open it read-write
    std::string mode;     // "crw-------", for the finding
};

struct HostFacts {
    bool rdma_in_kernel = false;                // /sys/class/infiniband exists
    std::vector<std::string> modules;           // loaded modules that matter here
    std::vector<std::string> ethernet_netdevs;  // up or down, not loopback
    std::vector<DeviceFact> devices;
    std::vector<DeviceNode> device_nodes;        // /dev/infiniband/uverbs*, rdma_cm
    std::optional<std::uint64_t> memlock_bytes;  // soft limit; nullopt: unlimited
    bool can_lock_memory = false;                // CAP_IPC_LOCK: the limit does not apply
    std::string transparent_hugepages;           // "always", "madvise", "never"
    double counter_window_s = 0;                 // how long counters were watched
    std::vector<GpuFact> gpus;                   // NVIDIA and AMD GPUs on the PCI bus
    std::string kernel_release;                  // "6.1.0-56-amd64"
    std::string nvidia_driver;                   // "550.54.15"; "" when nvidia is not loaded
};

enum class Severity { kProblem, kWarning };

// One line of the report: what is wrong, why it matters, the command that fixes it.
struct Finding {
    std::string check;  // "port-state", "gid", "memlock"…: stable, for --json and the tests
    Severity severity = Severity::kProblem;
    std::string what;
    std::string why;
    std::string fix;
};

struct Healthy {
    std::string check;
    std::string summary;
};

struct Diagnosis {
    std::vector<Finding> findings;
    std::vector<Healthy> healthy;
};

// Below this soft memlock limit a program without CAP_IPC_LOCK fails to register a
// framework-sized buffer (NCCL, UCX and perftest register tens of MiB).
constexpr std::uint64_t kMemlockFloor = 64ull << 20;

Diagnosis diagnose(const HostFacts& host);

// The GPU checks (none on a host without a GPU): can the NIC register GPU memory (nvidia_peermem,
// dma-buf), and how far each GPU is from its nearest RDMA NIC (gpu_rules.cpp).
void check_gpus(const HostFacts& host, Diagnosis& out);

// The report: one line per finding, then the healthy checks; and the same as JSON.
std::string render_text(const Diagnosis& diagnosis);
std::string render_json(const HostFacts& host, const Diagnosis& diagnosis);
// The same report as the typed record --json prints, for a caller that adds to it (--peer adds
// "pair" or "reach").
records::DoctorReport report_record(const HostFacts& host, const Diagnosis& diagnosis);

// The IPv4-mapped GID sysfs shows for an address: 198.51.100.1 ->
// "0000:0000:0000:0000:0000:ffff:c633:6401". Empty for text that is not an IPv4 address.
std::string ipv4_mapped_gid(const std::string& ipv4);

}  // namespace rdmalab::doctor
