// What rdma-doctor knows of a host, read without privileges where Linux allows: sysfs for the
// devices, ports, GID tables and counters (readable by anyone), the verbs library for the active
// MTU (which needs the device file), getifaddrs for the addresses, getrlimit and
// /proc/self/status for the locked-memory limit and CAP_IPC_LOCK.
#include "gather.hpp"

#include "rdmalab/verbs.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <infiniband/verbs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace rdmalab::doctor {
namespace fs = std::filesystem;
namespace {

const fs::path kClass = "/sys/class/infiniband";

std::optional<std::string> read_line(const fs::path& file) {
    std::ifstream in(file);
    std::string line;
    if (!in || !std::getline(in, line)) return {};
    return line;
}

std::string after_colon(const std::string& text) {  // "4: ACTIVE" -> "ACTIVE"
    auto colon = text.find(':');
    std::string value = colon == std::string::npos ? text : text.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    return value;
}

std::string mode_text(const fs::path& path) {
    struct stat info {};
    if (stat(path.c_str(), &info) != 0) return "?";
    std::string mode = S_ISCHR(info.st_mode) ? "c" : "-";
    const char* letters = "rwxrwxrwx";
    for (int bit = 0; bit < 9; ++bit) mode += (info.st_mode & (0400 >> bit)) ? letters[bit] : '-';
    return mode;
}

std::vector<std::string> loaded_modules() {
    std::vector<std::string> wanted{"ib_core",  "ib_uverbs",     "rdma_ucm", "rdma_cm",
                                    "rdma_rxe", "mlx5_ib",       "irdma",    "bnxt_re",
                                    "efa",      "nvidia_peermem"};
    std::vector<std::string> found;
    std::ifstream modules("/proc/modules");
    std::string line;
    while (std::getline(modules, line)) {
        std::string name = line.substr(0, line.find(' '));
        for (const std::string& w : wanted)
            if (name == w) found.push_back(name);
    }
    for (const std::string& w : wanted)  // built into the kernel: a directory, no /proc line
        if (fs::exists("/sys/module/" + w) &&
            std::find(found.begin(), found.end(), w) == found.end())
            found.push_back(w);
    return found;
}

struct Interface {
    bool up = false;
    bool loopback = false;
    std::vector<std::string> ipv4;
};

std::map<std::string, Interface> interfaces() {
    std::map<std::string, Interface> result;
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0) return result;
    for (ifaddrs* entry = list; entry; entry = entry->ifa_next) {
        Interface& i = result[entry->ifa_name];
        i.up = (entry->ifa_flags & IFF_UP) != 0;
        i.loopback = (entry->ifa_flags & IFF_LOOPBACK) != 0;
        if (entry->ifa_addr && entry->ifa_addr->sa_family == AF_INET) {
            char text[INET_ADDRSTRLEN] = {};
            const auto* address = reinterpret_cast<const sockaddr_in*>(entry->ifa_addr);
            if (inet_ntop(AF_INET, &address->sin_addr, text, sizeof text)) i.ipv4.push_back(text);
        }
    }
    freeifaddrs(list);
    return result;
}

std::string driver_of(const fs::path& device) {
    std::error_code error;
    fs::path driver = fs::read_symlink(device / "device" / "driver", error);
    if (!error) return driver.filename().string();
    if (fs::exists(device / "parent")) return "rdma_rxe";  // Soft-RoCE has no PCI device
    return "unknown";
}

std::map<std::string, std::uint64_t> read_counters(const fs::path& port) {
    std::map<std::string, std::uint64_t> values;
    std::error_code error;
    for (const fs::path& directory : {port / "hw_counters", port / "counters"}) {
        for (const auto& entry : fs::directory_iterator(directory, error)) {
            auto line = read_line(entry.path());
            if (!line) continue;
            try {
                values[entry.path().filename().string()] = std::stoull(*line);
            } catch (const std::exception&) {  // a counter sysfs cannot read now: skip it
            }
        }
    }
    return values;
}

std::vector<GidFact> read_gids(const fs::path& port) {
    std::vector<GidFact> gids;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(port / "gids", error)) {
        const std::string name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        auto gid = read_line(entry.path());
        if (!gid || *gid == "0000:0000:0000:0000:0000:0000:0000:0000") continue;
        GidFact fact;
        fact.index = static_cast<unsigned>(std::stoul(name));
        fact.gid = *gid;
        fact.type = read_line(port / "gid_attrs" / "types" / name).value_or("");
        fact.netdev = read_line(port / "gid_attrs" / "ndevs" / name).value_or("");
        gids.push_back(fact);
    }
    std::sort(gids.begin(), gids.end(),
              [](const GidFact& a, const GidFact& b) { return a.index < b.index; });
    return gids;
}

// NVIDIA and AMD GPUs: display (0x0300) or 3D (0x0302) controllers from those vendors.
std::vector<GpuFact> read_gpus() {
    std::vector<GpuFact> gpus;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator("/sys/bus/pci/devices", error)) {
        const std::string pci_class = read_line(entry.path() / "class").value_or("");
        if (!pci_class.starts_with("0x0300") && !pci_class.starts_with("0x0302")) continue;
        const std::string vendor_id = read_line(entry.path() / "vendor").value_or("");
        const std::string vendor = vendor_id == "0x10de"   ? "NVIDIA"
                                   : vendor_id == "0x1002" ? "AMD"
                                                           : "";
        if (vendor.empty()) continue;
        if (auto place = read_pci_place(entry.path()))
            gpus.push_back({entry.path().filename().string(), vendor, *place});
    }
    std::sort(gpus.begin(), gpus.end(),
              [](const GpuFact& a, const GpuFact& b) { return a.address < b.address; });
    return gpus;
}

}  // namespace

HostFacts gather(const GatherOptions& options) {
    HostFacts host;
    host.rdma_in_kernel = fs::exists(kClass);
    host.modules = loaded_modules();
    const auto ifs = interfaces();
    for (const auto& [name, i] : ifs)
        if (!i.loopback) host.ethernet_netdevs.push_back(name);

    std::error_code error;
    for (const auto& entry : fs::directory_iterator("/dev/infiniband", error)) {
        const std::string name = entry.path().filename().string();
        if (!name.starts_with("uverbs") && name != "rdma_cm") continue;
        DeviceNode node{entry.path().string(), access(entry.path().c_str(), R_OK | W_OK) == 0,
                        mode_text(entry.path())};
        host.device_nodes.push_back(node);
    }
    std::sort(host.device_nodes.begin(), host.device_nodes.end(),
              [](const DeviceNode& a, const DeviceNode& b) { return a.path < b.path; });

    std::vector<fs::path> device_dirs;
    for (const auto& entry : fs::directory_iterator(kClass, error))
        device_dirs.push_back(entry.path());
    std::sort(device_dirs.begin(), device_dirs.end());
    std::map<std::string, std::map<std::string, std::uint64_t>> counters_before;
    for (const fs::path& dir : device_dirs) {
        if (!options.device.empty() && dir.filename() != options.device) continue;
        DeviceFact device;
        device.name = dir.filename().string();
        device.driver = driver_of(dir);
        device.pci = read_pci_place(dir / "device");
        std::vector<fs::path> port_dirs;
        for (const auto& entry : fs::directory_iterator(dir / "ports", error))
            if (entry.path().filename().string().find_first_not_of("0123456789") ==
                std::string::npos)
                port_dirs.push_back(entry.path());
        std::sort(port_dirs.begin(), port_dirs.end());
        for (const fs::path& port_dir : port_dirs) {
            PortFact port;
            port.number = static_cast<unsigned>(std::stoul(port_dir.filename().string()));
            port.state = after_colon(read_line(port_dir / "state").value_or(""));
            port.physical_state = after_colon(read_line(port_dir / "phys_state").value_or(""));
            port.link_layer = read_line(port_dir / "link_layer").value_or("");
            port.gids = read_gids(port_dir);
            port.netdev = read_line(dir / "parent").value_or("");
            for (const GidFact& gid : port.gids)
                if (port.netdev.empty() && !gid.netdev.empty()) port.netdev = gid.netdev;
            if (!port.netdev.empty()) {
                if (auto mtu = read_line(fs::path("/sys/class/net") / port.netdev / "mtu"))
                    port.netdev_mtu = std::stoi(*mtu);
                if (auto found = ifs.find(port.netdev); found != ifs.end()) {
                    port.netdev_up = found->second.up;
                    port.ipv4_addresses = found->second.ipv4;
                }
            }
            if (auto tclass =
                    read_line(dir / "tc" / std::to_string(port.number) / "traffic_class")) {
                // mlx5 writes "Global tclass=106"; an unset value reads as an empty line or -1
                auto equals = tclass->find('=');
                std::string value =
                    equals == std::string::npos ? *tclass : tclass->substr(equals + 1);
                try {
                    int number = std::stoi(value);
                    if (number >= 0 && number < 256)
                        port.global_traffic_class = static_cast<unsigned>(number);
                } catch (const std::exception&) {
                }
            }
            counters_before[device.name + "/" + std::to_string(port.number)] =
                read_counters(port_dir);
            device.ports.push_back(port);
        }
        host.devices.push_back(device);
    }

    // The active MTU: only the verbs library reports it (it needs the device file).
    int count = 0;
    if (ibv_device** list = host.devices.empty() ? nullptr : ibv_get_device_list(&count)) {
        for (int d = 0; d < count; ++d) {
            for (DeviceFact& device : host.devices) {
                if (device.name != ibv_get_device_name(list[d])) continue;
                ibv_context* context = ibv_open_device(list[d]);
                if (!context) {
                    device.open_error = std::strerror(errno);
                    continue;
                }
                device.opened = true;
                for (PortFact& port : device.ports) {
                    ibv_port_attr attributes{};
                    if (ibv_query_port(context, static_cast<std::uint8_t>(port.number),
                                       &attributes) != 0)
                        continue;
                    port.active_mtu = static_cast<unsigned>(mtu_bytes(attributes.active_mtu));
                    port.max_mtu = static_cast<unsigned>(mtu_bytes(attributes.max_mtu));
                }
                ibv_close_device(context);
            }
        }
        ibv_free_device_list(list);
    }

    rlimit memlock{};
    if (getrlimit(RLIMIT_MEMLOCK, &memlock) == 0 && memlock.rlim_cur != RLIM_INFINITY)
        host.memlock_bytes = memlock.rlim_cur;
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
        if (!line.starts_with("CapEff:")) continue;
        std::uint64_t capabilities = std::stoull(after_colon(line), nullptr, 16);
        host.can_lock_memory = (capabilities >> 14) & 1u;  // CAP_IPC_LOCK is capability 14
    }
    host.gpus = read_gpus();
    utsname system{};
    if (uname(&system) == 0) host.kernel_release = system.release;
    host.nvidia_driver = read_line("/sys/module/nvidia/version").value_or("");
    if (auto thp = read_line("/sys/kernel/mm/transparent_hugepage/enabled")) {
        auto open = thp->find('['), close = thp->find(']');
        if (open != std::string::npos && close != std::string::npos)
            host.transparent_hugepages = thp->substr(open + 1, close - open - 1);
    }

    // Counters: what rose while we watched.
    if (options.window.count() > 0 && !host.devices.empty()) {
        // The whole window, or until stop_watching is set (Ctrl-C: report what rose so far).
        const auto start = std::chrono::steady_clock::now();
        const auto deadline = start + options.window;
        while (std::chrono::steady_clock::now() < deadline &&
               !(options.stop_watching && options.stop_watching->load()))
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        host.counter_window_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        for (DeviceFact& device : host.devices) {
            for (PortFact& port : device.ports) {
                const std::string port_key = device.name + "/" + std::to_string(port.number);
                const auto& before = counters_before[port_key];
                for (const auto& [name, value] :
                     read_counters(kClass / device.name / "ports" / std::to_string(port.number))) {
                    auto old = before.find(name);
                    if (old != before.end() && value > old->second)
                        port.counter_increase[name] = value - old->second;
                }
            }
        }
    }
    return host;
}

}  // namespace rdmalab::doctor
