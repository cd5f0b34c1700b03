// Connecting a QP without rdma_cm: see qp_bringup.hpp (lessons/qp-state-machine teaches it).
#include "rdmalab/qp_bringup.hpp"

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <thread>
#include <utility>
#include <vector>

namespace rdmalab {

void add_qp_options(CommandLine& cli, QpOptions& options) {
    cli.add_connection_options(options);
    // Same flags as the rdma_cm lessons, but here nothing is derived from an IP address.
    cli.existing("--ib-dev").description("RDMA device to use (default: the first one)");
    cli.existing("--port").description("TCP port of the out-of-band exchange");
    cli.existing("--gid-index")
        .description("source GID index (default: the RoCE v2 GID with an IPv4 address)");
    cli.option("-i,--ib-port", options.ib_port, "port of the RDMA device").range(1, 255);
}

// ---- The endpoint record

namespace {

constexpr std::uint32_t kMagic = 0x52445150;  // "RDQP"
constexpr std::uint8_t kVersion = 1;
constexpr std::uint32_t kMax24Bits = 0xFFFFFF;

const char* qp_type_name(unsigned type) {
    switch (type) {
        case IBV_QPT_RC:
            return "RC";
        case IBV_QPT_UC:
            return "UC";
        case IBV_QPT_UD:
            return "UD";
    }
    return "unknown";
}

}  // namespace

QpEndpointWire encode_qp_endpoint(const QpEndpoint& endpoint) {
    QpEndpointWire wire{};
    ByteWriter out(wire, "the endpoint record");
    out.u32(kMagic);
    out.u8(kVersion);
    out.u8(static_cast<std::uint8_t>(endpoint.qp_type));
    out.u8(endpoint.link_layer);
    out.u8(static_cast<std::uint8_t>(endpoint.active_mtu));
    out.u32(endpoint.qpn);
    out.u32(endpoint.psn);
    out.u16(endpoint.lid);
    out.zeros(2);                                           // reserved
    out.bytes(std::as_bytes(std::span(endpoint.gid.raw)));  // already network order
    out.u64(endpoint.address);
    out.u32(endpoint.rkey);
    out.u32(endpoint.length);
    out.expect_end();
    return wire;
}

std::variant<QpEndpoint, std::string> decode_qp_endpoint(std::span<const std::byte> bytes,
                                                         ibv_qp_type expected_type,
                                                         PeerBuffer expected_buffer) {
    if (bytes.size() != kQpEndpointWireSize)
        return fmt::format("endpoint record has {} bytes, expected {}", bytes.size(),
                           kQpEndpointWireSize);
    ByteReader in(bytes, "the peer's endpoint record");
    if (in.u32() != kMagic)
        return std::string("the peer's endpoint record is not an rdmalab QP record (bad magic)");
    if (const std::uint8_t version = in.u8(); version != kVersion)
        return fmt::format("the peer's endpoint record has version {}, expected {}", version,
                           kVersion);
    if (const std::uint8_t type = in.u8(); type != static_cast<std::uint8_t>(expected_type))
        return fmt::format(
            "the peer's QP is {} (type {}), this one is {}: run the same lesson on both sides",
            qp_type_name(type), type, qp_type_name(expected_type));
    const std::uint8_t link_layer = in.u8();
    if (link_layer != IBV_LINK_LAYER_INFINIBAND && link_layer != IBV_LINK_LAYER_ETHERNET)
        return fmt::format("the peer's link layer {} is neither InfiniBand (1) nor Ethernet (2)",
                           link_layer);
    const std::uint8_t mtu = in.u8();
    if (mtu < IBV_MTU_256 || mtu > IBV_MTU_4096)
        return fmt::format("the peer's MTU code {} is not an ibv_mtu (1..5)", mtu);
    const std::uint32_t qpn = in.u32();
    const std::uint32_t psn = in.u32();
    const std::uint16_t lid = in.u16();
    const std::uint16_t reserved = in.u16();
    ibv_gid gid{};
    std::ranges::copy(in.bytes(16), std::as_writable_bytes(std::span(gid.raw)).begin());
    // Braced initializers are evaluated in order: the last fields are read as they are laid out.
    QpEndpoint endpoint{
        .qp_type = expected_type,
        .link_layer = link_layer,
        .active_mtu = static_cast<ibv_mtu>(mtu),
        .qpn = qpn,
        .psn = psn,
        .lid = lid,
        .gid = gid,
        .address = in.u64(),
        .rkey = in.u32(),
        .length = in.u32(),
    };
    // QP numbers and PSNs are 24-bit fields in every packet header; 0 and 1 are the special QPs.
    if (endpoint.qpn > kMax24Bits || endpoint.qpn < 2)
        return fmt::format("the peer's QPN {:#x} is not a QP number (2..0xffffff)", endpoint.qpn);
    if (endpoint.psn > kMax24Bits)
        return fmt::format("the peer's PSN {:#x} does not fit in 24 bits", endpoint.psn);
    if (reserved != 0) return std::string("the peer's endpoint record has non-zero reserved bytes");
    if (expected_buffer == PeerBuffer::kNone) {
        if (endpoint.address != 0 || endpoint.rkey != 0 || endpoint.length != 0)
            return std::string("the peer advertised a buffer where none was expected");
        return endpoint;
    }
    if (endpoint.length == 0) return std::string("the peer advertised a buffer of length 0");
    if (endpoint.address > std::numeric_limits<std::uint64_t>::max() - endpoint.length)
        return fmt::format(
            "the peer advertised a buffer that wraps around the address space "
            "(address {:#x}, length {})",
            endpoint.address, endpoint.length);
    return endpoint;
}

QpEndpoint decode_qp_endpoint_or_throw(std::span<const std::byte> bytes, ibv_qp_type expected_type,
                                       PeerBuffer expected_buffer) {
    auto result = decode_qp_endpoint(bytes, expected_type, expected_buffer);
    if (auto* reason = std::get_if<std::string>(&result)) fail(*reason);
    return std::get<QpEndpoint>(result);
}

std::uint32_t random_psn() {
    std::random_device source;
    return std::uniform_int_distribution<std::uint32_t>(0, kMax24Bits)(source);
}

// ---- Device, port and source address

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

// ---- Printing

const char* qp_state_name(ibv_qp_state state) {
    switch (state) {
        case IBV_QPS_RESET:
            return "RESET";
        case IBV_QPS_INIT:
            return "INIT";
        case IBV_QPS_RTR:
            return "RTR";
        case IBV_QPS_RTS:
            return "RTS";
        case IBV_QPS_SQD:
            return "SQD";
        case IBV_QPS_SQE:
            return "SQE";
        case IBV_QPS_ERR:
            return "ERROR";
        case IBV_QPS_UNKNOWN:
            return "UNKNOWN";
    }
    return "unknown state";
}

std::string qp_attr_mask_names(int mask) {
    // In the order a reader meets them: INIT's, then RTR's, then RTS's, then the rest.
    static constexpr std::pair<int, const char*> kNames[] = {
        {IBV_QP_STATE, "STATE"},
        {IBV_QP_CUR_STATE, "CUR_STATE"},
        {IBV_QP_PKEY_INDEX, "PKEY_INDEX"},
        {IBV_QP_PORT, "PORT"},
        {IBV_QP_ACCESS_FLAGS, "ACCESS_FLAGS"},
        {IBV_QP_QKEY, "QKEY"},
        {IBV_QP_AV, "AV"},
        {IBV_QP_PATH_MTU, "PATH_MTU"},
        {IBV_QP_DEST_QPN, "DEST_QPN"},
        {IBV_QP_RQ_PSN, "RQ_PSN"},
        {IBV_QP_MAX_DEST_RD_ATOMIC, "MAX_DEST_RD_ATOMIC"},
        {IBV_QP_MIN_RNR_TIMER, "MIN_RNR_TIMER"},
        {IBV_QP_SQ_PSN, "SQ_PSN"},
        {IBV_QP_TIMEOUT, "TIMEOUT"},
        {IBV_QP_RETRY_CNT, "RETRY_CNT"},
        {IBV_QP_RNR_RETRY, "RNR_RETRY"},
        {IBV_QP_MAX_QP_RD_ATOMIC, "MAX_QP_RD_ATOMIC"},
        {IBV_QP_ALT_PATH, "ALT_PATH"},
        {IBV_QP_PATH_MIG_STATE, "PATH_MIG_STATE"},
        {IBV_QP_CAP, "CAP"},
        {IBV_QP_EN_SQD_ASYNC_NOTIFY, "EN_SQD_ASYNC_NOTIFY"},
    };
    std::string names;
    for (auto [bit, name] : kNames) {
        if (!(mask & bit)) continue;
        names += names.empty() ? "IBV_QP_" : " | IBV_QP_";
        names += name;
        mask &= ~bit;
    }
    if (mask != 0) names += fmt::format("{}{:#x}", names.empty() ? "" : " | ", mask);
    return names.empty() ? "0" : names;
}

std::string access_flag_names(unsigned access) {
    static constexpr std::pair<unsigned, const char*> kNames[] = {
        {IBV_ACCESS_LOCAL_WRITE, "LOCAL_WRITE"},
        {IBV_ACCESS_REMOTE_WRITE, "REMOTE_WRITE"},
        {IBV_ACCESS_REMOTE_READ, "REMOTE_READ"},
        {IBV_ACCESS_REMOTE_ATOMIC, "REMOTE_ATOMIC"},
    };
    std::string names;
    for (auto [bit, name] : kNames) {
        if (!(access & bit)) continue;
        names += names.empty() ? "" : " | ";
        names += name;
        access &= ~bit;
    }
    if (access != 0) names += fmt::format("{}{:#x}", names.empty() ? "" : " | ", access);
    return names.empty() ? "none" : names;
}

void print_qp_attributes(std::string_view who, std::string_view label, const ibv_qp_attr& a,
                         int mask) {
    std::vector<std::string> fields;
    auto add = [&](int bit, std::string text) {
        if (mask & bit) fields.push_back(std::move(text));
    };
    add(IBV_QP_STATE, fmt::format("qp_state {}", qp_state_name(a.qp_state)));
    add(IBV_QP_PKEY_INDEX, fmt::format("pkey_index {}", a.pkey_index));
    add(IBV_QP_PORT, fmt::format("port_num {}", a.port_num));
    add(IBV_QP_ACCESS_FLAGS,
        fmt::format("qp_access_flags {}", access_flag_names(a.qp_access_flags)));
    add(IBV_QP_PATH_MTU, fmt::format("path_mtu {}", mtu_bytes(a.path_mtu)));
    add(IBV_QP_DEST_QPN, fmt::format("dest_qp_num {:#x}", a.dest_qp_num));
    add(IBV_QP_RQ_PSN, fmt::format("rq_psn {:#x}", a.rq_psn));
    add(IBV_QP_MAX_DEST_RD_ATOMIC, fmt::format("max_dest_rd_atomic {}", a.max_dest_rd_atomic));
    add(IBV_QP_MIN_RNR_TIMER, fmt::format("min_rnr_timer {}", a.min_rnr_timer));
    add(IBV_QP_SQ_PSN, fmt::format("sq_psn {:#x}", a.sq_psn));
    add(IBV_QP_TIMEOUT, fmt::format("timeout {}", a.timeout));
    add(IBV_QP_RETRY_CNT, fmt::format("retry_cnt {}", a.retry_cnt));
    add(IBV_QP_RNR_RETRY, fmt::format("rnr_retry {}", a.rnr_retry));
    add(IBV_QP_MAX_QP_RD_ATOMIC, fmt::format("max_rd_atomic {}", a.max_rd_atomic));
    std::string line;
    for (const auto& field : fields) line += (line.empty() ? "" : ", ") + field;
    fmt::print("{}:     {}{}\n", who, label, line);
    if (mask & IBV_QP_AV) {
        const ibv_ah_attr& ah = a.ah_attr;
        if (ah.is_global)
            fmt::print(
                "{}:     {}ah_attr: is_global 1, dgid {}, sgid_index {}, hop_limit {}, "
                "port_num {}\n",
                who, label, format_gid(ah.grh.dgid), ah.grh.sgid_index, ah.grh.hop_limit,
                ah.port_num);
        else
            fmt::print("{}:     {}ah_attr: is_global 0, dlid {:#x}, port_num {}\n", who, label,
                       ah.dlid, ah.port_num);
    }
}

std::string wc_status_name(ibv_wc_status status) {
    switch (status) {
        case IBV_WC_SUCCESS:
            return "IBV_WC_SUCCESS";
        case IBV_WC_LOC_LEN_ERR:
            return "IBV_WC_LOC_LEN_ERR";
        case IBV_WC_LOC_QP_OP_ERR:
            return "IBV_WC_LOC_QP_OP_ERR";
        case IBV_WC_LOC_PROT_ERR:
            return "IBV_WC_LOC_PROT_ERR";
        case IBV_WC_WR_FLUSH_ERR:
            return "IBV_WC_WR_FLUSH_ERR";
        case IBV_WC_MW_BIND_ERR:
            return "IBV_WC_MW_BIND_ERR";
        case IBV_WC_BAD_RESP_ERR:
            return "IBV_WC_BAD_RESP_ERR";
        case IBV_WC_LOC_ACCESS_ERR:
            return "IBV_WC_LOC_ACCESS_ERR";
        case IBV_WC_REM_INV_REQ_ERR:
            return "IBV_WC_REM_INV_REQ_ERR";
        case IBV_WC_REM_ACCESS_ERR:
            return "IBV_WC_REM_ACCESS_ERR";
        case IBV_WC_REM_OP_ERR:
            return "IBV_WC_REM_OP_ERR";
        case IBV_WC_RETRY_EXC_ERR:
            return "IBV_WC_RETRY_EXC_ERR";
        case IBV_WC_RNR_RETRY_EXC_ERR:
            return "IBV_WC_RNR_RETRY_EXC_ERR";
        case IBV_WC_REM_ABORT_ERR:
            return "IBV_WC_REM_ABORT_ERR";
        case IBV_WC_FATAL_ERR:
            return "IBV_WC_FATAL_ERR";
        case IBV_WC_GENERAL_ERR:
            return "IBV_WC_GENERAL_ERR";
        default:
            return fmt::format("status {}", static_cast<int>(status));
    }
}

ibv_qp_state query_qp_state(ibv_qp* qp) {
    ibv_qp_attr attributes{};
    ibv_qp_init_attr init{};
    check_ibv(ibv_query_qp(qp, &attributes, IBV_QP_STATE, &init), "ibv_query_qp");
    return attributes.qp_state;
}

// ---- The transitions

QpTransition init_transition(const PortAddress& local, unsigned access) {
    QpTransition t;
    t.attributes.qp_state = IBV_QPS_INIT;
    t.attributes.pkey_index = 0;
    t.attributes.port_num = local.port;
    t.attributes.qp_access_flags = access;
    t.mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
    return t;
}

QpTransition rtr_transition(ibv_qp_type type, const PortAddress& local, const QpEndpoint& remote,
                            const Reliability& reliability) {
    QpTransition t;
    ibv_qp_attr& a = t.attributes;
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = std::min(local.active_mtu, remote.active_mtu);
    a.dest_qp_num = remote.qpn;
    a.rq_psn = remote.psn;
    a.ah_attr.port_num = local.port;
    if (local.gid_index >= 0) {
        a.ah_attr.is_global = 1;
        a.ah_attr.grh.dgid = remote.gid;
        a.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(local.gid_index);
        a.ah_attr.grh.hop_limit = 64;
    } else {
        a.ah_attr.dlid = remote.lid;
    }
    t.mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
    if (type == IBV_QPT_RC) {
        a.max_dest_rd_atomic = reliability.max_dest_rd_atomic;
        a.min_rnr_timer = reliability.min_rnr_timer;
        t.mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
    }
    return t;
}

QpTransition rts_transition(ibv_qp_type type, std::uint32_t sq_psn,
                            const Reliability& reliability) {
    QpTransition t;
    ibv_qp_attr& a = t.attributes;
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = sq_psn;
    t.mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
    if (type == IBV_QPT_RC) {
        a.timeout = reliability.timeout;
        a.retry_cnt = reliability.retry_cnt;
        a.rnr_retry = reliability.rnr_retry;
        a.max_rd_atomic = reliability.max_rd_atomic;
        t.mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
    }
    return t;
}

void apply_transition(ibv_qp* qp, const QpTransition& transition, std::string_view who) {
    const ibv_qp_state from = query_qp_state(qp);
    const ibv_qp_state to = transition.attributes.qp_state;
    fmt::print("{}: {} -> {}: ibv_modify_qp({})\n", who, qp_state_name(from), qp_state_name(to),
               qp_attr_mask_names(transition.mask));
    print_qp_attributes(who, "", transition.attributes, transition.mask);
    ibv_qp_attr attributes = transition.attributes;  // ibv_modify_qp takes a non-const pointer
    check_ibv(ibv_modify_qp(qp, &attributes, transition.mask),
              fmt::format("ibv_modify_qp({} -> {})", qp_state_name(from), qp_state_name(to)));
    const ibv_qp_state now = query_qp_state(qp);
    if (now != to)
        fail(fmt::format("ibv_query_qp says the QP is {}, not {}", qp_state_name(now),
                         qp_state_name(to)));
    fmt::print("{}:     ibv_query_qp: qp_state {}\n", who, qp_state_name(now));
}

namespace {
constexpr std::uint32_t kReadyWord = 0x52545321;  // "RTS!"
}

QpEndpoint exchange_endpoints(TcpExchange& tcp, const PortAddress& local, const QpEndpoint& ours,
                              PeerBuffer theirs, std::string_view who) {
    // Both sides send first, then receive: 52 bytes fit in any socket buffer, so neither blocks.
    tcp.send_all(encode_qp_endpoint(ours));
    QpEndpointWire wire{};
    tcp.receive_exact(wire);
    QpEndpoint remote = decode_qp_endpoint_or_throw(wire, ours.qp_type, theirs);
    if (remote.link_layer != local.link_layer)
        fail(
            "the peer's port has a different link layer "
            "(InfiniBand and RoCE cannot talk directly)");
    if (local.gid_index < 0 && remote.lid == 0)
        fail("the peer sent LID 0: an InfiniBand port without a LID has no subnet manager");
    fmt::print("{}: sent QPN {:#x}, PSN {:#x}; the peer's: QPN {:#x}, PSN {:#x}, {}, MTU {}{}\n",
               who, ours.qpn, ours.psn, remote.qpn, remote.psn,
               local.gid_index >= 0 ? "GID " + format_gid(remote.gid)
                                    : fmt::format("LID {:#x}", remote.lid),
               mtu_bytes(remote.active_mtu),
               remote.length ? fmt::format(", buffer {} bytes at {:#x} rkey {:#x}", remote.length,
                                           remote.address, remote.rkey)
                             : std::string());
    return remote;
}

void exchange_ready(TcpExchange& tcp) {
    send_word(tcp, kReadyWord);
    expect_word(tcp, kReadyWord, "the peer's 'ready' (its QP in RTS)");
}

QpEndpoint connect_qp(ibv_qp* qp, TcpExchange& tcp, const PortAddress& local,
                      const QpEndpoint& ours, PeerBuffer theirs, const Reliability& reliability,
                      std::string_view who) {
    QpEndpoint remote = exchange_endpoints(tcp, local, ours, theirs, who);
    const auto type = static_cast<ibv_qp_type>(qp->qp_type);
    apply_transition(qp, rtr_transition(type, local, remote, reliability), who);
    apply_transition(qp, rts_transition(type, ours.psn, reliability), who);
    exchange_ready(tcp);
    return remote;
}

// ---- Resources

QpResources create_qp_resources(const QpOptions& options, ibv_qp_type type,
                                std::uint32_t send_depth, std::uint32_t receive_depth,
                                std::string_view who) {
    QpResources r{};
    r.context = open_device(options.device);
    r.local = choose_port_address(r.context.get(), options.ib_port, options.gid_index);
    ibv_device_attr device{};
    check_ibv(ibv_query_device(r.context.get(), &device), "ibv_query_device");
    const std::size_t limit = std::min<std::uint64_t>(
        {r.local.max_message_size, device.max_mr_size, std::numeric_limits<std::uint32_t>::max()});
    if (options.size > limit)
        fail(fmt::format("size {} is larger than {} allows (max message {} bytes, max MR {} bytes)",
                         options.size, ibv_get_device_name(r.context->device),
                         r.local.max_message_size, device.max_mr_size));

    r.pd.reset(check_ptr(ibv_alloc_pd(r.context.get()), "ibv_alloc_pd"));
    r.cq.reset(
        check_ptr(ibv_create_cq(r.context.get(), static_cast<int>(send_depth + receive_depth),
                                nullptr, nullptr, 0),
                  "ibv_create_cq"));
    ibv_qp_init_attr init{};
    init.send_cq = r.cq.get();
    init.recv_cq = r.cq.get();
    init.qp_type = type;
    init.sq_sig_all = 0;
    init.cap.max_send_wr = send_depth;
    init.cap.max_recv_wr = receive_depth;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    r.qp.reset(check_ptr(ibv_create_qp(r.pd.get(), &init), "ibv_create_qp"));
    fmt::print("{}: {}; {} QP {:#x} created in state {}\n", who, r.local.description,
               qp_type_name(type), r.qp->qp_num, qp_state_name(query_qp_state(r.qp.get())));
    return r;
}

QpEndpoint local_endpoint(const QpResources& resources, std::uint64_t address, std::uint32_t rkey,
                          std::uint32_t length) {
    return QpEndpoint{
        .qp_type = static_cast<ibv_qp_type>(resources.qp->qp_type),
        .link_layer = resources.local.link_layer,
        .active_mtu = resources.local.active_mtu,
        .qpn = resources.qp->qp_num,
        .psn = random_psn(),
        .lid = resources.local.lid,
        .gid = resources.local.gid,
        .address = address,
        .rkey = rkey,
        .length = length,
    };
}

// ---- Control words

void send_word(TcpExchange& tcp, std::uint32_t word) {
    std::array<std::byte, 4> bytes{};
    store_be32(bytes, word);
    tcp.send_all(bytes);
}

std::uint32_t receive_word(TcpExchange& tcp) {
    std::array<std::byte, 4> bytes{};
    tcp.receive_exact(bytes);
    return load_be32(bytes);
}

void expect_word(TcpExchange& tcp, std::uint32_t expected, std::string_view what) {
    std::uint32_t word = 0;
    try {
        word = receive_word(tcp);
    } catch (const Error& e) {
        fail(fmt::format("waiting for {}: {}", what, e.what()));
    }
    if (word != expected)
        fail(fmt::format("expected {} ({:#x}) from the peer, got {:#x}", what, expected, word));
}

}  // namespace rdmalab
