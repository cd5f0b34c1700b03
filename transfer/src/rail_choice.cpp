// The rails a host offers: see rail_choice.hpp.
#include "rdmalab/transfer/rail_choice.hpp"

#include "rdmalab/error.hpp"
#include "rdmalab/transfer/plan.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

namespace rdmalab::transfer {
namespace {

// How far a device is from the target's GPU: the relation, then the bridges between.
struct Distance {
    PcieRelation relation = PcieRelation::kSys;
    int bridges = 0;
    auto operator<=>(const Distance&) const = default;
};

std::string distance_text(const Distance& d) {
    return fmt::format("{} to the GPU, {} PCI bridge{} between", pcie_relation_name(d.relation),
                       d.bridges, d.bridges == 1 ? "" : "s");
}

// Names in the order a person expects: mlx5_2 before mlx5_10.
bool name_before(const std::string& a, const std::string& b) {
    const auto split = [](const std::string& name) {
        std::size_t digits = name.size();
        while (digits > 0 && std::isdigit(static_cast<unsigned char>(name[digits - 1]))) --digits;
        unsigned long number = 0;
        std::from_chars(name.data() + digits, name.data() + name.size(), number);
        return std::tuple(name.substr(0, digits), number, name);
    };
    return split(a) < split(b);
}

std::string link_layer_name(const std::string& link_layer) {
    return link_layer == "Ethernet" ? "Ethernet (RoCE)"
           : link_layer.empty()     ? "unknown"
                                    : link_layer;
}

// The link layer most ACTIVE devices have; on a tie, the first one's (by name).
std::string common_link_layer(const std::vector<const DeviceFacts*>& active) {
    std::map<std::string, int> count;
    for (const DeviceFacts* device : active) ++count[device->link_layer];
    std::string best;
    int most = 0;
    for (const DeviceFacts* device : active)
        if (count[device->link_layer] > most) {
            most = count[device->link_layer];
            best = device->link_layer;
        }
    return best;
}

bool is_hex(std::string_view text, std::size_t digits) {
    return text.size() == digits && std::all_of(text.begin(), text.end(), [](char c) {
               return std::isxdigit(static_cast<unsigned char>(c));
           });
}

// "0000:3d:00.0" or "3d:00.0" → "0000:3d:00.0" (lower case), or nullopt.
std::optional<std::string> pci_address(std::string_view text) {
    std::string address(text);
    std::transform(address.begin(), address.end(), address.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (std::count(address.begin(), address.end(), ':') == 1) address = "0000:" + address;
    const std::string_view a = address;
    if (a.size() != 12 || a[4] != ':' || a[7] != ':' || a[10] != '.') return std::nullopt;
    if (!is_hex(a.substr(0, 4), 4) || !is_hex(a.substr(5, 2), 2) || !is_hex(a.substr(8, 2), 2) ||
        a[11] < '0' || a[11] > '7')
        return std::nullopt;
    return address;
}

std::optional<std::string> read_line(const std::filesystem::path& file) {
    std::ifstream in(file);
    std::string line;
    if (!in || !std::getline(in, line)) return std::nullopt;
    return line;
}

}  // namespace

std::variant<RailTarget, std::string> parse_rail_target(std::string_view text) {
    const std::string usage = fmt::format(
        "--near '{}': give numa:N (a NUMA node) or gpu:BUS:DEVICE.FUNCTION (a GPU's PCI address, "
        "as lspci prints it: gpu:3d:00.0 or gpu:0000:3d:00.0)",
        text);
    RailTarget target;
    if (text.starts_with("numa:")) {
        const std::string_view number = text.substr(5);
        int node = -1;
        const auto [end, error] =
            std::from_chars(number.data(), number.data() + number.size(), node);
        if (number.empty() || error != std::errc() || end != number.data() + number.size() ||
            node < 0 || node > 1023)
            return usage;
        target.kind = RailTarget::Kind::kNuma;
        target.numa_node = node;
        return target;
    }
    if (text.starts_with("gpu:")) {
        const auto address = pci_address(text.substr(4));
        if (!address) return usage;
        target.kind = RailTarget::Kind::kGpu;
        target.gpu_address = *address;
        return target;
    }
    return usage;
}

RailChoice choose_rails(std::span<const DeviceFacts> devices, const RailTarget& target) {
    RailChoice choice;
    std::vector<const DeviceFacts*> ordered;
    for (const DeviceFacts& device : devices) ordered.push_back(&device);
    std::stable_sort(
        ordered.begin(), ordered.end(),
        [](const DeviceFacts* a, const DeviceFacts* b) { return name_before(a->name, b->name); });
    std::vector<const DeviceFacts*> active;
    for (const DeviceFacts* device : ordered) {
        if (device->port_state == "ACTIVE")
            active.push_back(device);
        else
            choice.left_out.push_back(
                {device->name, device->port_state.empty()
                                   ? "it has no port 1"
                                   : fmt::format("port 1 is {}, not ACTIVE", device->port_state)});
    }
    const std::string link_layer = common_link_layer(active);
    // Each candidate with what orders it (the distance to the GPU; none otherwise) and its reason.
    struct Candidate {
        const DeviceFacts* device;
        Distance distance;
        std::string why;
    };
    std::vector<Candidate> candidates;
    for (const DeviceFacts* device : active) {
        const auto leave = [&](std::string why) {
            choice.left_out.push_back({device->name, std::move(why)});
        };
        const int numa = device->pci ? device->pci->numa_node : -1;
        if (device->link_layer != link_layer) {
            leave(fmt::format("its link layer is {}, the other rails' {}",
                              link_layer_name(device->link_layer), link_layer_name(link_layer)));
        } else if (target.kind == RailTarget::Kind::kNuma && numa < 0) {
            leave(fmt::format("its NUMA node is unknown, not {}", target.numa_node));
        } else if (target.kind == RailTarget::Kind::kNuma && numa != target.numa_node) {
            leave(fmt::format("on NUMA node {}, not {}", numa, target.numa_node));
        } else if (target.kind == RailTarget::Kind::kGpu && !device->pci) {
            leave("no place on the PCI bus: no distance to the GPU");
        } else if (target.kind == RailTarget::Kind::kGpu) {
            const Distance distance{pcie_relation(target.gpu_place, *device->pci),
                                    pci_bridges_between(target.gpu_place, *device->pci)};
            candidates.push_back({device, distance, distance_text(distance)});
        } else {
            candidates.push_back({device,
                                  {},
                                  target.kind == RailTarget::Kind::kNuma
                                      ? fmt::format("NUMA node {}", numa)
                                      : "port 1 ACTIVE"});
        }
    }
    // Nearest first (only the GPU target tells distances apart), then by name.
    std::stable_sort(
        candidates.begin(), candidates.end(),
        [](const Candidate& a, const Candidate& b) { return a.distance < b.distance; });
    for (const Candidate& candidate : candidates) {
        const Candidate& nearest = candidates.front();
        if (candidate.distance != nearest.distance) {
            choice.left_out.push_back(
                {candidate.device->name,
                 fmt::format("farther from GPU {}: {}; {} is {}", target.gpu_address, candidate.why,
                             nearest.device->name, nearest.why)});
        } else if (choice.rails.size() == kMaxRails) {
            choice.left_out.push_back(
                {candidate.device->name,
                 fmt::format("past the {} rails the engine drives", kMaxRails)});
        } else {
            choice.rails.push_back(candidate.device->name);
            choice.why.push_back(candidate.why);
        }
    }
    return choice;
}

std::string describe_choice(const RailChoice& choice) {
    std::string line = "rails:";
    for (std::size_t i = 0; i < choice.rails.size(); ++i)
        line += fmt::format("{} {} ({})", i ? "," : "", choice.rails[i], choice.why[i]);
    if (choice.rails.empty()) line += " none";
    if (!choice.left_out.empty()) {
        line += "; left out:";
        for (std::size_t i = 0; i < choice.left_out.size(); ++i)
            line += fmt::format("{} {} ({})", i ? "," : "", choice.left_out[i].device,
                                choice.left_out[i].why);
    }
    return line;
}

std::vector<DeviceFacts> read_host_devices() {
    namespace fs = std::filesystem;
    const fs::path root = "/sys/class/infiniband";
    std::vector<DeviceFacts> devices;
    std::error_code error;
    if (!fs::exists(root, error)) return devices;  // no RDMA in this kernel: no devices
    for (fs::directory_iterator it(root, error), end; !error && it != end; it.increment(error)) {
        const fs::path dir = it->path();
        DeviceFacts device;
        device.name = dir.filename().string();
        // "4: ACTIVE" → "ACTIVE"
        const std::string state = read_line(dir / "ports/1/state").value_or("");
        const std::size_t colon = state.find(':');
        device.port_state = state.substr(colon == std::string::npos ? 0 : colon + 1);
        device.port_state.erase(0, device.port_state.find_first_not_of(' '));
        device.link_layer = read_line(dir / "ports/1/link_layer").value_or("");
        device.pci = read_pci_place(dir / "device");
        // rxe and siw sit on no bus themselves; their network interface does.
        if (!device.pci)
            if (auto parent = read_line(dir / "parent"))
                device.pci = read_pci_place(fs::path("/sys/class/net") / *parent / "device");
        devices.push_back(std::move(device));
    }
    if (error) fail(fmt::format("reading {}: {}", root.string(), error.message()));
    return devices;
}

}  // namespace rdmalab::transfer
