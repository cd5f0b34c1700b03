// Choosing the efa-rdm lesson's libfabric provider (see fabric_provider.hpp).
#include "fabric_provider.hpp"

#include "fabric_owners.hpp"

#include <fmt/core.h>
#include <rdma/fi_domain.h>

#include <cstdlib>
#include <set>

namespace rdmalab {

namespace {

// fi_getinfo found nothing: list what this machine offers with the same requirements.
std::string offered_instead(const fi_info& hints) {
    Info relaxed{fi_dupinfo(&hints)};
    if (!relaxed) return "fi_dupinfo failed";
    std::free(relaxed->fabric_attr->prov_name);
    relaxed->fabric_attr->prov_name = nullptr;
    fi_info* list = nullptr;
    if (fi_getinfo(kFabricApiVersion, nullptr, nullptr, 0, relaxed.get(), &list) != 0)
        return "none";
    Info owned{list};
    std::set<std::string> offers;
    for (const fi_info* info = list; info; info = info->next)
        offers.insert(
            fmt::format("{} on {}", info->fabric_attr->prov_name, info->domain_attr->name));
    std::string text;
    for (const auto& offer : offers) text += (text.empty() ? "" : ", ") + offer;
    return text;
}

}  // namespace

void pin_ip_providers_to_loopback(std::string_view role) {
    std::string chosen;
    for (const char* variable :
         {"FI_TCP_IFACE", "FI_NET_IFACE", "FI_UDP_IFACE", "FI_SOCKETS_IFACE"}) {
        const bool users = std::getenv(variable) != nullptr;
        setenv(variable, "lo", /*overwrite=*/0);
        chosen += fmt::format(" {}={}{}", variable, std::getenv(variable), users ? " (yours)" : "");
    }
    fmt::print("{}: IP providers use{}; set FI_TCP_IFACE to run between hosts\n", role, chosen);
}

const fi_info* choose_info(int rc, const fi_info* list, const fi_info& hints,
                           const std::string& provider, const std::string& device) {
    const fi_info* match = list;
    while (match && !device.empty() && device != match->domain_attr->name) match = match->next;
    if (rc == -FI_ENODATA || (rc == 0 && !match))
        fail(
            fmt::format("no RDM endpoint with FI_MSG and FI_RMA from provider '{}'{} here "
                        "(offered: {})",
                        provider, device.empty() ? "" : fmt::format(" on domain '{}'", device),
                        offered_instead(hints)));
    check_fi(rc, "fi_getinfo");
    return match;
}

std::string describe_info(const fi_info& info) {
    const std::uint64_t mr_mode = info.domain_attr->mr_mode;
    return fmt::format(
        "libfabric {}.{}, provider {}, fabric {}, domain {}; remote addresses are {}; MR keys {}; "
        "local buffers {}",
        FI_MAJOR(fi_version()), FI_MINOR(fi_version()), info.fabric_attr->prov_name,
        info.fabric_attr->name, info.domain_attr->name,
        mr_mode & FI_MR_VIRT_ADDR ? "virtual addresses" : "offsets into each region",
        mr_mode & FI_MR_PROV_KEY ? "chosen by the provider" : "chosen by us",
        mr_mode & FI_MR_LOCAL ? "must be registered" : "registered anyway (not required)");
}

}  // namespace rdmalab
