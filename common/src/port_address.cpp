// Device, port and source-address choice: see port_address.hpp.
#include "rdmalab/port_address.hpp"

#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <arpa/inet.h>
#include <netinet/in.h>

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

// The GID a RoCE v2 port gives an IP address: IPv4 as ::ffff:a.b.c.d, IPv6 as itself.
ibv_gid gid_of_address(const sockaddr_storage& address) {
    ibv_gid gid{};
    if (address.ss_family == AF_INET) {
        gid.raw[10] = gid.raw[11] = 0xff;
        std::memcpy(&gid.raw[12], &reinterpret_cast<const sockaddr_in*>(&address)->sin_addr, 4);
    } else {
        std::memcpy(gid.raw, &reinterpret_cast<const sockaddr_in6*>(&address)->sin6_addr, 16);
    }
    return gid;
}

// Every valid GID entry of every port of an open device.
std::vector<ibv_gid_entry> gid_table(ibv_context* context) {
    ibv_device_attr device{};
    check_ibv(ibv_query_device(context, &device), "ibv_query_device");
    std::size_t capacity = 0;
    for (std::uint8_t port = 1; port <= device.phys_port_cnt; ++port) {
        ibv_port_attr attributes{};
        check_ibv(ibv_query_port(context, port, &attributes), "ibv_query_port");
        capacity += static_cast<std::size_t>(attributes.gid_tbl_len);
    }
    std::vector<ibv_gid_entry> entries(capacity);
    ssize_t count = ibv_query_gid_table(context, entries.data(), entries.size(), 0);
    // It returns the number of entries, or a negative errno (it does not set errno).
    check_ibv(count < 0 ? static_cast<int>(-count) : 0, "ibv_query_gid_table");
    entries.resize(static_cast<std::size_t>(count));
    return entries;
}

bool port_is_active(ibv_context* context, std::uint8_t port) {
    ibv_port_attr attributes{};
    return ibv_query_port(context, port, &attributes) == 0 && attributes.state == IBV_PORT_ACTIVE;
}

// The one description every program prints for the path it chose:
// "rxe0 port 1, GID index 1 (RoCE v2 ::ffff:198.51.100.1)".
std::string describe_path(const char* device, const ibv_gid_entry& entry) {
    return fmt::format("{} port {}, GID index {} ({} {})", device, entry.port_num, entry.gid_index,
                       gid_type_name(entry.gid_type), format_gid(entry.gid));
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
        const auto entries = gid_table(context);
        auto found =
            std::find_if(entries.begin(), entries.end(), [port](const ibv_gid_entry& entry) {
                return entry.port_num == port && entry.gid_type == IBV_GID_TYPE_ROCE_V2 &&
                       is_ipv4_mapped(entry.gid);
            });
        if (found == entries.end())
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
    address.description = describe_path(device, chosen);
    return address;
}

std::string format_ip(const sockaddr_storage& address) {
    char text[INET6_ADDRSTRLEN] = {};
    if (address.ss_family == AF_INET)
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&address)->sin_addr, text,
                  sizeof text);
    else
        inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&address)->sin6_addr, text,
                  sizeof text);
    return text;
}

LocalPort open_port_for_address(const sockaddr_storage& address, const std::string& device,
                                int gid_index) {
    require_device_exists(device);
    const ibv_gid wanted = gid_of_address(address);
    auto devices = get_devices();
    for (ibv_device* candidate : devices.all) {
        if (!device.empty() && device != ibv_get_device_name(candidate)) continue;
        LocalPort local;
        local.context.reset(check_ptr(ibv_open_device(candidate), "ibv_open_device"));
        const auto entries = gid_table(local.context.get());
        auto found = std::find_if(entries.begin(), entries.end(), [&](const ibv_gid_entry& entry) {
            return entry.gid_type == IBV_GID_TYPE_ROCE_V2 &&
                   std::memcmp(entry.gid.raw, wanted.raw, 16) == 0;
        });
        if (found == entries.end()) continue;
        ibv_gid_entry chosen = *found;
        if (gid_index >= 0)
            check_ibv(ibv_query_gid_ex(local.context.get(), found->port_num,
                                       static_cast<std::uint32_t>(gid_index), &chosen, 0),
                      fmt::format("ibv_query_gid_ex(--gid-index {})", gid_index));
        const auto port = static_cast<std::uint8_t>(chosen.port_num);
        ibv_port_attr attributes{};
        check_ibv(ibv_query_port(local.context.get(), port, &attributes), "ibv_query_port");
        if (attributes.state != IBV_PORT_ACTIVE)
            fail(fmt::format("{} port {} is {}, not ACTIVE", ibv_get_device_name(candidate), port,
                             ibv_port_state_str(attributes.state)));
        local.address = PortAddress{
            .port = port,
            .link_layer = attributes.link_layer,
            .active_mtu = attributes.active_mtu,
            .max_message_size = attributes.max_msg_sz,
            .lid = attributes.lid,
            .gid_index = static_cast<int>(chosen.gid_index),
            .gid = chosen.gid,
            .description = describe_path(ibv_get_device_name(candidate), chosen),
        };
        return local;
    }
    fail(fmt::format(
        "no RDMA {} carries {}: no RoCE v2 GID {} (is it the address of an RDMA interface?)",
        device.empty() ? std::string("device") : "device " + device, format_ip(address),
        format_gid(wanted)));
}

LocalPort open_port_for_address(const sockaddr_storage& address, const ConnectionOptions& options) {
    LocalPort local = open_port_for_address(address, options.device, options.gid_index);
    apply_traffic_class(local.address, options.tclass);
    return local;
}

void apply_traffic_class(PortAddress& port, int tclass) {
    if (tclass < 0) return;
    if (tclass > 255) fail(fmt::format("--tclass {} is not a traffic class (0 to 255)", tclass));
    port.traffic_class = static_cast<std::uint8_t>(tclass);
}

std::optional<std::string> first_rdma_ipv4_address(const std::string& device) {
    require_device_exists(device);
    auto devices = get_devices();
    for (ibv_device* candidate : devices.all) {
        if (!device.empty() && device != ibv_get_device_name(candidate)) continue;
        Context context{check_ptr(ibv_open_device(candidate), "ibv_open_device")};
        for (const ibv_gid_entry& entry : gid_table(context.get())) {
            if (entry.gid_type != IBV_GID_TYPE_ROCE_V2 || !is_ipv4_mapped(entry.gid)) continue;
            if (!port_is_active(context.get(), static_cast<std::uint8_t>(entry.port_num))) continue;
            char text[INET_ADDRSTRLEN] = {};
            return std::string(inet_ntop(AF_INET, &entry.gid.raw[12], text, sizeof text));
        }
    }
    return std::nullopt;
}

}  // namespace rdmalab
