// Choosing the efa-rdm lesson's libfabric provider, and saying what was chosen: the IP providers
// pinned to loopback (both processes of the lesson run on one host), the entry of fi_getinfo's
// list on the domain -d names — or, when there is none, what this machine offers instead — and
// one line that describes the choice.
#pragma once

#include <rdma/fabric.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace rdmalab {

// The libfabric API version the lesson is written against; newer libraries still provide it.
inline constexpr std::uint32_t kFabricApiVersion = FI_VERSION(1, 17);

// IP providers (tcp, net, udp, sockets) take the first interface, usually eth0: each is set to
// "lo" unless the user chose an interface (its FI_*_IFACE variable is set). EFA and shm do not
// read these variables; libfabric reads them in its first fi_getinfo, so call this before.
// Prints "ROLE: IP providers use FI_TCP_IFACE=lo …".
void pin_ip_providers_to_loopback(std::string_view role);

// What fi_getinfo(hints) returned (rc and its list, best first): the first entry on domain
// `device` (any domain if empty). Not every provider filters on domain_attr->name, so this looks
// for it in the list. Throws if there is none, naming the provider and domain and listing what
// the same hints find from any provider; throws on any other fi_getinfo error.
const fi_info* choose_info(int rc, const fi_info* list, const fi_info& hints,
                           const std::string& provider, const std::string& device);

// "libfabric 1.17, provider tcp;ofi_rxm, fabric …, domain lo; remote addresses are offsets into
// each region; MR keys chosen by us; local buffers must be registered": the choice, and the
// memory-registration duties its mr_mode puts on the program.
std::string describe_info(const fi_info& info);

}  // namespace rdmalab
