// Lesson: devices — list the RDMA devices, their ports, GID tables and the limits later lessons
// rely on. Run: build/bin/devices [-d DEVICE]   (in the lab: ./rdmalab lab -- build/bin/devices)
#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>
#include <net/if.h>

#include <string>
#include <vector>

using namespace rdmalab;

namespace {

const char* port_state_name(ibv_port_state state) {
    return ibv_port_state_str(state);
}

const char* link_layer_name(std::uint8_t link_layer) {
    switch (link_layer) {
        case IBV_LINK_LAYER_INFINIBAND:
            return "InfiniBand";
        case IBV_LINK_LAYER_ETHERNET:
            return "Ethernet";
        default:
            return "unspecified";
    }
}

const char* atomic_cap_name(ibv_atomic_cap cap) {
    switch (cap) {
        case IBV_ATOMIC_NONE:
            return "none";
        case IBV_ATOMIC_HCA:
            return "ATOMIC_HCA (atomic among this device's QPs)";
        case IBV_ATOMIC_GLOB:
            return "ATOMIC_GLOB (atomic with the CPU too)";
    }
    return "unknown";
}

// #region gid-table
void describe_port(ibv_context* context, std::uint8_t port_number, int highlight_gid) {
    // ibv_query_port: state, MTU, link layer and the largest message the port carries.
    ibv_port_attr port{};
    check_ibv(ibv_query_port(context, port_number, &port), "ibv_query_port");
    fmt::print("  port {}: {}, link layer {}, MTU active {} / max {}, max message {} bytes\n",
               port_number, port_state_name(port.state), link_layer_name(port.link_layer),
               mtu_bytes(port.active_mtu), mtu_bytes(port.max_mtu), port.max_msg_sz);
    if (port.link_layer == IBV_LINK_LAYER_INFINIBAND)
        fmt::print("    LID {}, subnet manager LID {}\n", port.lid, port.sm_lid);

    // The GID table: on RoCE each IP address of the netdev appears as a GID, once per RoCE
    // version. RoCE v2 (routable, UDP port 4791) with an IPv4-mapped GID is the usual choice.
    std::vector<ibv_gid_entry> gids(static_cast<std::size_t>(port.gid_tbl_len));
    ssize_t count = ibv_query_gid_table(context, gids.data(), gids.size(), 0);
    // It returns the number of entries, or a negative errno (it does not set errno).
    check_ibv(count < 0 ? static_cast<int>(-count) : 0, "ibv_query_gid_table");
    fmt::print("    GID table ({} valid of {} entries):\n", count, port.gid_tbl_len);
    for (ssize_t i = 0; i < count; ++i) {
        const ibv_gid_entry& entry = gids[static_cast<std::size_t>(i)];
        if (entry.port_num != port_number) continue;
        char netdev[IF_NAMESIZE] = "-";
        if (entry.ndev_ifindex != 0) if_indextoname(entry.ndev_ifindex, netdev);
        const bool preferred = entry.gid_type == IBV_GID_TYPE_ROCE_V2 && is_ipv4_mapped(entry.gid);
        fmt::print("      [{}] {:<40} {:<8} {}{}{}\n", entry.gid_index, format_gid(entry.gid),
                   gid_type_name(entry.gid_type), netdev,
                   preferred ? "  <- RoCE v2, IPv4: what rdma_cm uses for this address" : "",
                   static_cast<int>(entry.gid_index) == highlight_gid ? "  <- --gid-index" : "");
    }
}
// #endregion gid-table

// #region query-device
void describe_device(ibv_device* device, int highlight_gid) {
    // Opening a device gives a context: the handle every other verbs object hangs from.
    Context context{ibv_open_device(device)};
    check_ptr(context.get(), "ibv_open_device");

    // ibv_query_device_ex: the limits later lessons check against (and ODP, in the extension).
    ibv_device_attr_ex attributes{};
    check_ibv(ibv_query_device_ex(context.get(), nullptr, &attributes), "ibv_query_device_ex");
    const ibv_device_attr& limits = attributes.orig_attr;
    fmt::print("{}: transport {}, node GUID {:016x}, firmware '{}', {} port(s)\n",
               ibv_get_device_name(device), ibv_node_type_str(device->node_type),
               from_be64(ibv_get_device_guid(device)), limits.fw_ver, limits.phys_port_cnt);
    fmt::print(
        "  queue pairs:   max_qp {}, max_qp_wr {}, max_sge {}, max_cqe {}, max_srq {} (max_srq_wr "
        "{})\n",
        limits.max_qp, limits.max_qp_wr, limits.max_sge, limits.max_cqe, limits.max_srq,
        limits.max_srq_wr);
    fmt::print("  memory:        max_mr {}, max_mr_size {}, max_mw {}, max_pd {}\n", limits.max_mr,
               limits.max_mr_size, limits.max_mw, limits.max_pd);
    fmt::print(
        "  RDMA READ:     max_qp_rd_atom {} (READs served per QP), max_qp_init_rd_atom {} "
        "(issued)\n",
        limits.max_qp_rd_atom, limits.max_qp_init_rd_atom);
    fmt::print("  atomics:       {}\n", atomic_cap_name(limits.atomic_cap));
    fmt::print("  on-demand paging: {}\n", (attributes.odp_caps.general_caps & IBV_ODP_SUPPORT)
                                               ? "supported"
                                               : "not supported");
    for (std::uint8_t port = 1; port <= limits.phys_port_cnt; ++port)
        describe_port(context.get(), port, highlight_gid);
}
// #endregion query-device

}  // namespace

int main(int argc, char** argv) {
    return run_program("devices", [&] {
        CommandLine cli{"List RDMA devices, ports, GID tables and capabilities", "devices"};
        std::string device_name;
        int gid_index = -1;
        cli.option("-d,--ib-dev", device_name, "show only this device");
        cli.option("--gid-index", gid_index, "mark this GID table entry").range(0, 1023);
        cli.parse_or_exit(argc, argv);

        // ibv_get_device_list: every RDMA device the kernel exposes through /dev/infiniband.
        auto devices = get_devices();
        if (devices.all.empty())
            fail(
                "no RDMA devices found (no NIC, and no rxe/siw configured): try ./rdmalab lab -- "
                "build/bin/devices");
        require_device_exists(device_name);
        int shown = 0;
        for (ibv_device* device : devices.all) {
            if (!device_name.empty() && device_name != ibv_get_device_name(device)) continue;
            describe_device(device, gid_index);
            ++shown;
        }
        fmt::print("devices: listed {} device(s): this is what the other lessons will run on\n",
                   shown);
        return 0;
    });
}
