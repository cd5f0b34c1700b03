// Which device, port and source address a hand-made connection uses: the device named -d
// (or the first), the port's state and MTU, and the RoCE v2 GID (or InfiniBand LID) the peer
// will address.
#pragma once

#include "rdmalab/verbs.hpp"

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>

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
    int gid_index = -1;  // -1: no GRH (InfiniBand, routed by LID)
    ibv_gid gid{};
    std::string description;  // "rxe0 port 1, GID index 1 (RoCE v2 ::ffff:198.51.100.1)"
};

// ibv_query_port, then the source address: on RoCE the RoCE v2 GID that carries an IPv4 address
// (::ffff:a.b.c.d), found with ibv_query_gid_table, or requested_gid_index (ibv_query_gid_ex);
// on InfiniBand the LID, with a GRH only if a GID index was requested. Throws if the port is
// not active or no such GID exists.
PortAddress choose_port_address(ibv_context* context, std::uint8_t port, int requested_gid_index);

}  // namespace rdmalab
