// Lesson: qp-state-machine — an RC connection made by hand, without rdma_cm: QPN, PSN and GID
// swapped over TCP, then RESET→INIT→RTR→RTS with ibv_modify_qp; an RDMA WRITE proves it.
// Run: qp-state-machine server [-s SIZE] | qp-state-machine client ADDR [-s SIZE] [--gid-index N]
#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/tcp_exchange.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <limits>

using namespace rdmalab;

namespace {

constexpr std::uint64_t kSeed = 0x9a;  // both sides compute the same pattern from it

// ibv_query_qp reads back what the device holds: the state, and the fields named in `shown`.
void confirm(ibv_qp* qp, ibv_qp_state expected, int shown, const char* who) {
    ibv_qp_attr attributes{};
    ibv_qp_init_attr init{};
    check_ibv(ibv_query_qp(qp, &attributes, IBV_QP_STATE | shown, &init), "ibv_query_qp");
    if (attributes.qp_state != expected)
        fail(fmt::format("ibv_query_qp says the QP is {}, expected {}",
                         qp_state_name(attributes.qp_state), qp_state_name(expected)));
    print_qp_attributes(who, "ibv_query_qp: ", attributes, IBV_QP_STATE | shown);
}

int run(const QpOptions& options) {
    const char* who = options.server ? "server" : "client";
    const auto timeout = options.timeout();

    // 1. The device: no IP address to resolve, so take the one named by -d, or the first.
    require_device_exists(options.device);
    auto devices = get_devices();  // ibv_get_device_list
    auto device = std::find_if(devices.all.begin(), devices.all.end(), [&](ibv_device* candidate) {
        return options.device.empty() || options.device == ibv_get_device_name(candidate);
    });
    if (device == devices.all.end())
        fail("no RDMA devices found: run it in the lab (./rdmalab lab -- …)");
    Context context{ibv_open_device(*device)};
    check_ptr(context.get(), "ibv_open_device");

    // The port's link layer decides how the peer is addressed: on RoCE by a GID (the RoCE v2 entry
    // with an IPv4-mapped GID, ::ffff:a.b.c.d, unless --gid-index), on InfiniBand by its LID.
    PortAddress local = choose_port_address(context.get(), options.ib_port, options.gid_index);
    apply_traffic_class(local, options.tclass);  // our packets' class, set in the AV at RTR
    fmt::print("{}: {}, active MTU {}\n", who, local.description, mtu_bytes(local.active_mtu));
    if (options.size >
        std::min<std::uint64_t>(local.max_message_size, std::numeric_limits<std::uint32_t>::max()))
        fail(fmt::format("size {} is larger than one message on {} may be ({} bytes)", options.size,
                         ibv_get_device_name(*device), local.max_message_size));

    // #region create-qp
    // 2. PD, CQ and an RC QP: ibv_create_qp leaves it in RESET, able to do nothing yet.
    ProtectionDomain pd{ibv_alloc_pd(context.get())};
    check_ptr(pd.get(), "ibv_alloc_pd");
    CompletionQueue cq{ibv_create_cq(context.get(), 4, nullptr, nullptr, 0)};
    check_ptr(cq.get(), "ibv_create_cq");
    ibv_qp_init_attr init{};
    init.send_cq = cq.get();
    init.recv_cq = cq.get();
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = 2;
    init.cap.max_recv_wr = 1;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    QueuePair qp{ibv_create_qp(pd.get(), &init)};
    check_ptr(qp.get(), "ibv_create_qp");
    fmt::print("{}: RC QP {:#x} created\n", who, qp->qp_num);
    confirm(qp.get(), IBV_QPS_RESET, 0, who);
    // #endregion create-qp

    // 3. Memory. The server's buffer is the WRITE target: the peer may write it (REMOTE_WRITE,
    // which requires LOCAL_WRITE), not read it. The client's source is only read by its own NIC.
    Buffer data(options.size);
    if (!options.server) fill_pattern(data.bytes(), kSeed);
    const unsigned data_access =
        options.server ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE : 0;
    MemoryRegion data_mr{
        ibv_reg_mr(pd.get(), data.data(), data.size(), static_cast<int>(data_access))};
    check_ptr(data_mr.get(), "ibv_reg_mr(data)");
    std::array<std::byte, 4> done{};  // the client's "done" message: bytes written, big-endian
    MemoryRegion done_mr{ibv_reg_mr(pd.get(), done.data(), done.size(),
                                    options.server ? IBV_ACCESS_LOCAL_WRITE : 0)};
    check_ptr(done_mr.get(), "ibv_reg_mr(done)");
    ibv_sge done_sge{.addr = reinterpret_cast<std::uintptr_t>(done.data()),
                     .length = static_cast<std::uint32_t>(done.size()),
                     .lkey = done_mr->lkey};

    // #region to-init
    // 4. RESET -> INIT: the port, the partition (P_Key index 0: the default), and what the PEER
    // may do to memory through this QP — a second gate besides each MR's own access flags.
    ibv_qp_attr to_init{};
    to_init.qp_state = IBV_QPS_INIT;
    to_init.pkey_index = 0;
    to_init.port_num = local.port;
    to_init.qp_access_flags = options.server ? IBV_ACCESS_REMOTE_WRITE : 0;
    const int init_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
    print_transition(who, IBV_QPS_RESET, to_init, init_mask);
    check_ibv(ibv_modify_qp(qp.get(), &to_init, init_mask), "ibv_modify_qp(RESET -> INIT)");
    confirm(qp.get(), IBV_QPS_INIT, IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, who);
    // #endregion to-init

    // Receives may be posted from INIT on; the server posts one for the "done" SEND now, before
    // the client can possibly send it.
    if (options.server) {
        ibv_recv_wr receive{.wr_id = 1, .next = nullptr, .sg_list = &done_sge, .num_sge = 1};
        ibv_recv_wr* bad_receive = nullptr;
        check_ibv(ibv_post_recv(qp.get(), &receive, &bad_receive), "ibv_post_recv");
    }

    // #region exchange
    // 5. The out-of-band exchange: what rdma_cm would carry, here as a fixed 56-byte big-endian
    // record over TCP. The PSN is random: where this side's packet numbering starts.
    TcpExchange tcp =
        options.server
            ? TcpExchange::accept_one(options.port, options.bind_address, options.accept_timeout())
            : TcpExchange::connect_to(options.server_address, options.port, timeout);
    QpEndpoint ours{.qp_type = IBV_QPT_RC,
                    .link_layer = local.link_layer,
                    .active_mtu = local.active_mtu,
                    .qpn = qp->qp_num,
                    .psn = random_psn(),
                    .lid = local.lid,
                    .gid = local.gid,
                    .address = options.server ? reinterpret_cast<std::uintptr_t>(data.data()) : 0,
                    .rkey = options.server ? data_mr->rkey : 0,
                    .length = options.server ? static_cast<std::uint32_t>(data.size()) : 0};
    tcp.send_all(encode_qp_endpoint(ours));
    QpEndpointWire wire{};
    tcp.receive_exact(wire);
    // From the network: decode checks magic, version, QP type, 24-bit QPN/PSN, MTU, the buffer.
    QpEndpoint peer = decode_qp_endpoint_or_throw(
        wire, IBV_QPT_RC, options.server ? PeerBuffer::kNone : PeerBuffer::kAdvertised);
    // #endregion exchange
    if (peer.link_layer != local.link_layer) fail("the peer's port has a different link layer");
    fmt::print(
        "{}: sent QPN {:#x}, PSN {:#x}; the peer's: QPN {:#x}, PSN {:#x}, {}, MTU {}\n", who,
        ours.qpn, ours.psn, peer.qpn, peer.psn,
        local.gid_index >= 0 ? "GID " + format_gid(peer.gid) : fmt::format("LID {:#x}", peer.lid),
        mtu_bytes(peer.active_mtu));

    // #region to-rtr
    // 6. INIT -> RTR (ready to receive): where the peer is (address vector), which QP there,
    // the PSN its first packet will carry, the path MTU both ports support; and, RC only, how
    // many READs/atomics this side serves at once and the RNR delay it asks a sender to wait.
    ibv_qp_attr to_rtr{};
    to_rtr.qp_state = IBV_QPS_RTR;
    to_rtr.path_mtu = std::min(local.active_mtu, peer.active_mtu);
    to_rtr.dest_qp_num = peer.qpn;
    to_rtr.rq_psn = peer.psn;
    to_rtr.max_dest_rd_atomic = 0;  // nobody issues RDMA READ here: serve none
    to_rtr.min_rnr_timer = 12;      // a sender that finds no receive posted waits 0.64 ms
    to_rtr.ah_attr.port_num = local.port;
    if (local.gid_index >= 0) {
        // RoCE (or routed IB): a GRH with our source GID index and the peer's GID.
        to_rtr.ah_attr.is_global = 1;
        to_rtr.ah_attr.grh.dgid = peer.gid;
        to_rtr.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(local.gid_index);
        to_rtr.ah_attr.grh.hop_limit = 64;
        to_rtr.ah_attr.grh.traffic_class = local.traffic_class;  // the IP header's DS field
    } else {
        // InfiniBand inside one subnet: the peer's LID is the whole address.
        to_rtr.ah_attr.is_global = 0;
        to_rtr.ah_attr.dlid = peer.lid;
    }
    const int rtr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                         IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
    print_transition(who, IBV_QPS_INIT, to_rtr, rtr_mask);
    check_ibv(ibv_modify_qp(qp.get(), &to_rtr, rtr_mask), "ibv_modify_qp(INIT -> RTR)");
    confirm(qp.get(), IBV_QPS_RTR, IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN, who);
    // #endregion to-rtr

    // #region to-rts
    // 7. RTR -> RTS (ready to send): our own first PSN, and the RC requester's patience: ACK
    // timeout (4.096 µs × 2^14 ≈ 67 ms), retransmissions, RNR retries (7 would be forever) and
    // how many READs/atomics it may have in flight.
    ibv_qp_attr to_rts{};
    to_rts.qp_state = IBV_QPS_RTS;
    to_rts.sq_psn = ours.psn;
    to_rts.timeout = 14;
    to_rts.retry_cnt = 7;
    to_rts.rnr_retry = 6;
    to_rts.max_rd_atomic = 0;  // this side issues no READs
    const int rts_mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                         IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
    print_transition(who, IBV_QPS_RTR, to_rts, rts_mask);
    check_ibv(ibv_modify_qp(qp.get(), &to_rts, rts_mask), "ibv_modify_qp(RTR -> RTS)");
    confirm(qp.get(), IBV_QPS_RTS,
            IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY, who);

    // Nothing may be sent before the peer is at least in RTR: each side says "ready" over TCP.
    exchange_ready(tcp);
    // #endregion to-rts

    // 8. Prove the connection: the client RDMA-WRITEs the server's buffer, then SENDs "done".
    if (options.server) {
        // RC delivers in order: once the "done" SEND has arrived, the WRITE before it has landed.
        ibv_wc wc = wait_for_completion(cq.get(), timeout, "the client's done message");
        if (wc.opcode != IBV_WC_RECV || wc.byte_len != done.size())
            fail(fmt::format("expected a {}-byte done message, got opcode {} with {} bytes",
                             done.size(), static_cast<int>(wc.opcode), wc.byte_len));
        const std::uint32_t written = load_be32(done);
        if (written == 0 || written > data.size())  // a peer's claim is checked before use
            fail(fmt::format("the client claims it wrote {} bytes into a {}-byte buffer", written,
                             data.size()));
        const bool verified = !find_pattern_mismatch(data.bytes().first(written), kSeed) &&
                              all_zero(data.bytes().subspan(written));
        send_word(tcp, verified ? written : 0);  // the verdict, so the client can report it too
        if (!verified) {
            fmt::print("server: data check FAILED: the {} bytes written do not match the pattern\n",
                       written);
            return 1;
        }
        fmt::print(
            "server: verified {} bytes RDMA-written over an RC QP connected by hand (no rdma_cm)\n",
            written);
        return 0;
    }

    if (data.size() > peer.length)
        fail(fmt::format("the server's buffer holds {} bytes; cannot write {} (use -s {} or less)",
                         peer.length, data.size(), peer.length));
    ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(data.data()),
                .length = static_cast<std::uint32_t>(data.size()),
                .lkey = data_mr->lkey};
    ibv_send_wr write{};
    write.wr_id = 1;
    write.sg_list = &sge;
    write.num_sge = 1;
    write.opcode = IBV_WR_RDMA_WRITE;
    write.send_flags = IBV_SEND_SIGNALED;
    write.wr.rdma.remote_addr = peer.address;
    write.wr.rdma.rkey = peer.rkey;
    ibv_send_wr* bad_send = nullptr;
    check_ibv(ibv_post_send(qp.get(), &write, &bad_send), "ibv_post_send(RDMA_WRITE)");
    wait_for_completion(cq.get(), timeout, "RDMA WRITE");

    store_be32(done, static_cast<std::uint32_t>(data.size()));
    ibv_send_wr send{};
    send.wr_id = 2;
    send.sg_list = &done_sge;
    send.num_sge = 1;
    send.opcode = IBV_WR_SEND;
    send.send_flags = IBV_SEND_SIGNALED;
    check_ibv(ibv_post_send(qp.get(), &send, &bad_send), "ibv_post_send(SEND)");
    wait_for_completion(cq.get(), timeout, "done message");

    const std::uint32_t verdict = receive_word(tcp);
    if (verdict != data.size())
        fail(fmt::format("the server could not verify the data (it reports {} of {} bytes)",
                         verdict, data.size()));
    fmt::print(
        "client: wrote {} bytes with RDMA WRITE over an RC QP it connected by hand "
        "(RESET->INIT->RTR->RTS); the server verified them\n",
        data.size());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("qp-state-machine", [&] {
        CommandLine cli{"An RC connection without rdma_cm: QP states by hand, endpoints over TCP",
                        "qp-state-machine"};
        QpOptions options;
        add_qp_options(cli, options);
        cli.parse_or_exit(argc, argv);
        return run(options);
    });
}
