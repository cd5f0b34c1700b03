// Connecting a QP without rdma_cm: see qp_bringup.hpp (lessons/qp-state-machine teaches it).
#include "rdmalab/qp_bringup.hpp"

#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <limits>
#include <utility>

namespace rdmalab {

namespace {
constexpr std::uint32_t kReadyWord = 0x52545321;  // "RTS!"
}

QpEndpoint exchange_endpoints(TcpExchange& tcp, const PortAddress& local, const QpEndpoint& ours,
                              PeerBuffer theirs, std::string_view who) {
    // Both sides send first, then receive: 56 bytes fit in any socket buffer, so neither blocks.
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
    fmt::print(
        "{}: sent QPN {:#x}, PSN {:#x}; the peer's: QPN {:#x}, PSN {:#x}, {}, MTU {}{}{}\n", who,
        ours.qpn, ours.psn, remote.qpn, remote.psn,
        local.gid_index >= 0 ? "GID " + format_gid(remote.gid)
                             : fmt::format("LID {:#x}", remote.lid),
        mtu_bytes(remote.active_mtu),
        remote.qp_type == IBV_QPT_UD ? fmt::format(", Q_Key {:#x}", remote.qkey) : std::string(),
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

QpQueues create_qp_queues(ibv_context* context, ibv_qp_type type, std::uint32_t send_depth,
                          std::uint32_t receive_depth) {
    QpQueues queues;
    queues.pd.reset(check_ptr(ibv_alloc_pd(context), "ibv_alloc_pd"));
    queues.cq.reset(check_ptr(
        ibv_create_cq(context, static_cast<int>(send_depth + receive_depth), nullptr, nullptr, 0),
        "ibv_create_cq"));
    ibv_qp_init_attr init{};
    init.send_cq = queues.cq.get();
    init.recv_cq = queues.cq.get();
    init.qp_type = type;
    init.sq_sig_all = 0;
    init.cap.max_send_wr = send_depth;
    init.cap.max_recv_wr = receive_depth;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    queues.qp.reset(check_ptr(ibv_create_qp(queues.pd.get(), &init),
                              fmt::format("ibv_create_qp({})", qp_type_name(type))));
    return queues;
}

QpResources create_qp_resources(const QpOptions& options, ibv_qp_type type,
                                std::uint32_t send_depth, std::uint32_t receive_depth,
                                std::string_view who) {
    QpResources r{};
    r.context = open_device(options.device);
    r.local = choose_port_address(r.context.get(), options.ib_port, options.gid_index);
    apply_traffic_class(r.local, options.tclass);
    ibv_device_attr device{};
    check_ibv(ibv_query_device(r.context.get(), &device), "ibv_query_device");
    const std::size_t limit = std::min<std::uint64_t>(
        {r.local.max_message_size, device.max_mr_size, std::numeric_limits<std::uint32_t>::max()});
    if (options.size > limit)
        fail(fmt::format("size {} is larger than {} allows (max message {} bytes, max MR {} bytes)",
                         options.size, ibv_get_device_name(r.context->device),
                         r.local.max_message_size, device.max_mr_size));

    QpQueues queues = create_qp_queues(r.context.get(), type, send_depth, receive_depth);
    r.pd = std::move(queues.pd);
    r.cq = std::move(queues.cq);
    r.qp = std::move(queues.qp);
    fmt::print("{}: {}; {} QP {:#x} created in state {}\n", who, r.local.description,
               qp_type_name(type), r.qp->qp_num, qp_state_name(query_qp_state(r.qp.get())));
    return r;
}

QpEndpoint local_endpoint(ibv_qp* qp, const PortAddress& local, std::uint64_t address,
                          std::uint32_t rkey, std::uint32_t length) {
    return QpEndpoint{
        .qp_type = static_cast<ibv_qp_type>(qp->qp_type),
        .link_layer = local.link_layer,
        .active_mtu = local.active_mtu,
        .qpn = qp->qp_num,
        .psn = random_psn(),
        .lid = local.lid,
        .gid = local.gid,
        .address = address,
        .rkey = rkey,
        .length = length,
    };
}

QpEndpoint local_endpoint(const QpResources& resources, std::uint64_t address, std::uint32_t rkey,
                          std::uint32_t length) {
    return local_endpoint(resources.qp.get(), resources.local, address, rkey, length);
}

// ---- Loopback

void connect_loopback(ibv_qp* first, unsigned first_access, ibv_qp* second, unsigned second_access,
                      const PortAddress& local) {
    const QpEndpoint ends[2] = {local_endpoint(first, local), local_endpoint(second, local)};
    const unsigned access[2] = {first_access, second_access};
    ibv_qp* qps[2] = {first, second};
    Reliability reliability;
    reliability.max_rd_atomic = reliability.max_dest_rd_atomic = 1;  // a READ may be shown
    for (int i = 0; i < 2; ++i)
        for (QpTransition step : {init_transition(local, access[i]),
                                  rtr_transition(IBV_QPT_RC, local, ends[1 - i], reliability),
                                  rts_transition(IBV_QPT_RC, ends[i].psn, reliability)})
            check_ibv(ibv_modify_qp(qps[i], &step.attributes, step.mask), "ibv_modify_qp");
}

}  // namespace rdmalab
