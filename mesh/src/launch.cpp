// Reads the launcher's environment; see launch.hpp.
#include "rdmalab/mesh/launch.hpp"

#include <cstdlib>
#include <vector>

namespace rdmalab::mesh {

namespace {

std::optional<int> integer(const EnvLookup& env, const std::string& name) {
    auto text = env(name);
    if (!text || text->empty() || text->size() > 9) return std::nullopt;
    int value = 0;
    for (char c : *text) {
        if (c < '0' || c > '9') return std::nullopt;
        value = value * 10 + (c - '0');
    }
    return value;
}

}  // namespace

LaunchInfo read_launch_info(const EnvLookup& env) {
    LaunchInfo info;
    if (auto local = integer(env, "OMPI_COMM_WORLD_LOCAL_RANK")) {
        info.launcher = "openmpi";
        info.local_rank = *local;
        info.local_size = integer(env, "OMPI_COMM_WORLD_LOCAL_SIZE").value_or(1);
        info.node =
            env("OMPI_MCA_orte_ess_node_name").value_or(env("SLURMD_NODENAME").value_or(""));
    } else if (auto slurm = integer(env, "SLURM_LOCALID")) {
        info.launcher = "slurm";
        info.local_rank = *slurm;
        info.local_size = integer(env, "SLURM_NTASKS_PER_NODE").value_or(1);
        info.node = env("SLURMD_NODENAME").value_or("");
    } else if (auto pmix = integer(env, "PMIX_LOCAL_RANK")) {
        info.launcher = "pmix";
        info.local_rank = *pmix;
        info.local_size = integer(env, "PMIX_LOCAL_SIZE").value_or(1);
    } else {
        info.launcher = "unknown";
    }
    if (info.local_size < 1) info.local_size = 1;
    if (info.local_rank >= info.local_size) info.local_size = info.local_rank + 1;
    return info;
}

LaunchInfo read_launch_info_from_process() {
    return read_launch_info([](const std::string& name) -> std::optional<std::string> {
        const char* value = std::getenv(name.c_str());
        if (value == nullptr) return std::nullopt;
        return std::string(value);
    });
}

std::string device_for_local_rank(const std::string& devices, int local_rank) {
    std::vector<std::string> names;
    for (std::size_t start = 0; start <= devices.size();) {
        std::size_t comma = devices.find(',', start);
        if (comma == std::string::npos) comma = devices.size();
        names.push_back(devices.substr(start, comma - start));
        start = comma + 1;
    }
    return names[static_cast<std::size_t>(local_rank) % names.size()];
}

}  // namespace rdmalab::mesh
