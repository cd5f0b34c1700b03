// Device, port and source-address choice: see port_address.hpp.
#include "rdmalab/port_address.hpp"

#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>

namespace rdmalab {

Context open_device(const std::string& name) {
    require_device_exists(name);
    auto devices = get_devices();
    if (devices.all.empty())
        fail(
            "no RDMA devices found (no NIC, and no rxe/siw configured): run it in the lab "
            "(./rdmalab lab -- …)");
    for (ibv_device* device : devices.all) {
        if (!name.empty() && name != ibv_get_device_name(device)) continue;
        Context context{ibv_open_device(device)};
        check_ptr(context.get(), "ibv_open_device");
        return context;
    }
    fail(fmt::format("no RDMA device named '{}'", name));
}

namespace {

ibv_gid_entry query_gid_entry(ibv_context* context, std::uint8_t port, int index) {
    ibv_gid_entry entry{};
    if (ibv_query_gid_ex(context, port, static_cast<std::uint32_t>(index), &entry, 0) != 0)
        fail(fmt::format(
            "GID index {} of {} port {} is empty or does not exist (build/bin/devices lists "
            "the GID table)",
            index, ibv_get_device_name(context->device), port));
    return entry;
}

}  // namespace

PortAddress choose_port_address(ibv_context* context, std::uint8_t port, int requested_gid_index) {
    const char* device = ibv_get_device_name(context->device);
    ibv_device_attr device_attributes{};
    check_ibv(ibv_query_device(context, &device_attributes), "ibv_query_device");
    if (port > device_attributes.phys_port_cnt)
        fail(fmt::format("{} has {} port(s): there is no port {}", device,
                         device_attributes.phys_port_cnt, port));
    ibv_port_attr attributes{};
    check_ibv(ibv_query_port(context, port, &attributes), "ibv_query_port");
    if (attributes.state != IBV_PORT_ACTIVE)
        fail(fmt::format("{} port {} is {}, not ACTIVE", device, port,
                         ibv_port_state_str(attributes.state)));
    PortAddress address{
        .port = port,
        .link_layer = attributes.link_layer,
        .active_mtu = attributes.active_mtu,
        .max_message_size = attributes.max_msg_sz,
        .lid = attributes.lid,
        .gid_index = -1,
        .gid = {},
        .description = {},
    };

    if (attributes.link_layer == IBV_LINK_LAYER_INFINIBAND) {
        // InfiniBand routes by LID inside a subnet; a GRH (a GID) is needed only across subnets.
        if (requested_gid_index > 255)
            fail(fmt::format("GID index {} cannot be a QP's source GID (at most 255)",
                             requested_gid_index));
        if (requested_gid_index >= 0) {
            address.gid_index = requested_gid_index;
            address.gid = query_gid_entry(context, port, requested_gid_index).gid;
        }
        address.description = fmt::format(
            "{} port {}, InfiniBand LID {:#x}{}", device, port, address.lid,
            address.gid_index >= 0
                ? fmt::format(", GID index {} ({})", address.gid_index, format_gid(address.gid))
                : std::string());
        return address;
    }

    // RoCE: every packet carries a GRH, so the source GID matters. Each IP address of the netdev
    // appears in the table once per RoCE version; RoCE v2 with an IPv4 address is routable and is
    // what rdma_cm would choose for that address.
    ibv_gid_entry chosen{};
    if (requested_gid_index >= 0) {
        chosen = query_gid_entry(context, port, requested_gid_index);
    } else {
        std::vector<ibv_gid_entry> entries(static_cast<std::size_t>(attributes.gid_tbl_len));
        ssize_t count = ibv_query_gid_table(context, entries.data(), entries.size(), 0);
        check_errno(count >= 0, "ibv_query_gid_table");
        auto found = std::find_if(
            entries.begin(), entries.begin() + count, [port](const ibv_gid_entry& entry) {
                return entry.port_num == port && entry.gid_type == IBV_GID_TYPE_ROCE_V2 &&
                       is_ipv4_mapped(entry.gid);
            });
        if (found == entries.begin() + count)
            fail(fmt::format(
                "{} port {} has no RoCE v2 GID with an IPv4 address (is an IPv4 address "
                "configured on its netdev?): choose one with --gid-index",
                device, port));
        chosen = *found;
    }
    address.gid_index = static_cast<int>(chosen.gid_index);
    if (address.gid_index > 255)  // ibv_global_route::sgid_index is 8 bits wide
        fail(fmt::format("GID index {} cannot be a QP's source GID (at most 255)",
                         address.gid_index));
    address.gid = chosen.gid;
    address.description =
        fmt::format("{} port {}, GID index {} ({} {})", device, port, address.gid_index,
                    gid_type_name(chosen.gid_type), format_gid(chosen.gid));
    return address;
}

}  // namespace rdmalab
