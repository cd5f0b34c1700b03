// PCI places and distances: see pci_place.hpp.
#include "rdmalab/pci_place.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

namespace rdmalab {
namespace {

// "/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0" -> {"pci0000:3a", "0000:3a:00.0", …}
std::vector<std::string> components(const std::string& path) {
    std::string rest = path;
    const std::string prefix = "/sys/devices/";
    if (rest.starts_with(prefix)) rest = rest.substr(prefix.size());
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= rest.size()) {
        const std::size_t slash = rest.find('/', start);
        const std::string part =
            rest.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
        if (!part.empty()) parts.push_back(part);
        if (slash == std::string::npos) break;
        start = slash + 1;
    }
    return parts;
}

std::size_t shared_prefix(const std::vector<std::string>& x, const std::vector<std::string>& y) {
    std::size_t shared = 0;
    while (shared < x.size() && shared < y.size() && x[shared] == y[shared]) ++shared;
    return shared;
}

}  // namespace

PcieRelation pcie_relation(const PciPlace& a, const PciPlace& b) {
    const auto x = components(a.sysfs_path);
    const auto y = components(b.sysfs_path);
    if (x.empty() || y.empty() || x.front() != y.front()) {
        if (a.numa_node >= 0 && b.numa_node >= 0 && a.numa_node != b.numa_node)
            return PcieRelation::kSys;
        return PcieRelation::kNode;
    }
    const std::size_t shared = shared_prefix(x, y);
    if (shared >= 3) return PcieRelation::kPix;  // host bridge, root port, and a switch
    if (shared == 2) return PcieRelation::kPxb;  // the same root port, bridges below it
    return PcieRelation::kPhb;
}

const char* pcie_relation_name(PcieRelation relation) {
    switch (relation) {
        case PcieRelation::kPix:
            return "PIX";
        case PcieRelation::kPxb:
            return "PXB";
        case PcieRelation::kPhb:
            return "PHB";
        case PcieRelation::kNode:
            return "NODE";
        case PcieRelation::kSys:
            return "SYS";
    }
    return "?";
}

const char* pcie_relation_text(PcieRelation relation) {
    switch (relation) {
        case PcieRelation::kPix:
            return "behind the same PCIe switch";
        case PcieRelation::kPxb:
            return "through PCIe bridges below the host bridge";
        case PcieRelation::kPhb:
            return "through the CPU's PCIe host bridge";
        case PcieRelation::kNode:
            return "across host bridges of one NUMA node";
        case PcieRelation::kSys:
            return "across NUMA nodes (the CPUs' interconnect)";
    }
    return "?";
}

int pci_bridges_between(const PciPlace& a, const PciPlace& b) {
    const auto x = components(a.sysfs_path);
    const auto y = components(b.sysfs_path);
    // Each path's last component is the device itself, not a bridge.
    const auto above = [](const std::vector<std::string>& path, std::size_t from) {
        return path.size() > from + 1 ? static_cast<int>(path.size() - from - 1) : 0;
    };
    const std::size_t shared = shared_prefix(x, y);
    if (shared == 0) return above(x, 0) + above(y, 0);
    if (shared == x.size() && shared == y.size()) return 0;  // the same device
    return above(x, shared) + above(y, shared) + 1;
}

std::optional<PciPlace> read_pci_place(const std::string& device_link) {
    std::error_code error;
    const std::filesystem::path path = std::filesystem::canonical(device_link, error);
    if (error || !path.string().starts_with("/sys/devices/pci")) return std::nullopt;
    PciPlace place{path.string(), -1};
    std::ifstream numa(path / "numa_node");
    std::string line;
    if (numa && std::getline(numa, line)) place.numa_node = std::atoi(line.c_str());
    return place;
}

}  // namespace rdmalab
