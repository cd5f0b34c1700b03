// Which device, port and source address a hand-made connection uses: the device named -d
// (or the first), the port's state and MTU, and the RoCE v2 GID (or InfiniBand LID) the peer
// will address.
#pragma once

#include "rdmalab/options.hpp"
#include "rdmalab/verbs.hpp"

#include <sys/socket.h>

#include <infiniband/verbs.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rdmalab {

// ibv_open_device on the device named -d, or on the first device when name is empty.
Context open_device(const std::string& name);

// What this side's port offers, and how the peer will address it.
struct PortAddress {
    std::uint8_t port = 1;
    std::uint8_t link_layer = IBV_LINK_LAYER_ETHERNET;
    ibv_mtu active_mtu = IBV_MTU_1024;
    std::uint32_t max_message_size = 0;
    std::uint16_t lid = 0;
    int gid_index = -1;              // -1: no GRH (InfiniBand, routed by LID)
    std::uint8_t traffic_class = 0;  // the GRH's (RoCE: the IP header's DS field) on our packets
    ibv_gid gid{};
    std::string description;  // "rxe0 port 1, GID index 1 (RoCE v2 ::ffff:198.51.100.1)"
};

// ibv_query_port, then the source address: on RoCE the RoCE v2 GID that carries an IPv4 address
// (::ffff:a.b.c.d), found with ibv_query_gid_table, or requested_gid_index (ibv_query_gid_ex);
// on InfiniBand the LID, with a GRH only if a GID index was requested. Throws if the port is
// not active or no such GID exists.
PortAddress choose_port_address(ibv_context* context, std::uint8_t port, int requested_gid_index);

// --tclass as the traffic class of every address vector made from the port (the GRH's; on RoCE
// the IP header's DS field); -1 leaves the port's default. Throws for a value outside 0…255.
void apply_traffic_class(PortAddress& port, int tclass);

// ---- The port behind an IP address (for programs that start from one, as rdma_cm does).

// The device, port and GID that carry a local IP address: the RoCE v2 GID equal to it (IPv4
// as ::ffff:a.b.c.d), which is what rdma_cm would choose. device (-d) limits the search to one
// device; gid_index (--gid-index, -1: none) picks that entry of the same port instead.
struct LocalPort {
    Context context;
    PortAddress address;  // the same record choose_port_address gives
};
LocalPort open_port_for_address(const sockaddr_storage& address, const std::string& device,
                                int gid_index);
// The same as a program's options ask: -d, --gid-index, and --tclass (when given) as the traffic
// class of every address handle and QP made from the port.
LocalPort open_port_for_address(const sockaddr_storage& address, const ConnectionOptions& options);

// The first IPv4 address an RDMA port carries (from its RoCE v2 GIDs), on device if given.
std::optional<std::string> first_rdma_ipv4_address(const std::string& device);

// "198.51.100.1" for a socket address.
std::string format_ip(const sockaddr_storage& address);

}  // namespace rdmalab
