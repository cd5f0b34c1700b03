// Exercise 7 — an RC QP connected by hand, without rdma_cm (the reference solution).
// open_by_hand has created the QP (RESET) and swapped records with the peer over TCP: its QPN,
// first PSN, GID and buffer are in peer.remote, yours in peer.local. Take the QP to INIT, RTR
// and RTS with ibv_modify_qp — the attributes each transition needs, and the mask that names
// them — then RDMA-WRITE 8 KiB into the peer's buffer, as in exercise 1.
// Build and judge: ./rdmalab exercise check 7
#include "by-hand.hpp"

#include <vector>

int main(int argc, char** argv) {
    const auto args = exercise::parse_arguments(argc, argv);
    exercise::ManualConnection peer;
    exercise::open_by_hand(peer, args.address, args.port);

    // Step 1: RESET -> INIT: the port, the P_Key index, and what the peer may do through this
    // QP. It only receives ACKs from the peer: no remote access at all.
    ibv_qp_attr init{};
    init.qp_state = IBV_QPS_INIT;
    init.pkey_index = 0;
    init.port_num = peer.port;
    init.qp_access_flags = 0;
    exercise::check(
        ibv_modify_qp(peer.qp, &init,
                      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
        "ibv_modify_qp(INIT)");

    // Step 2: INIT -> RTR: where the peer is (its GID, through our source GID), its QPN, the PSN
    // its first packet will carry, the path MTU, and the responder's RC limits.
    ibv_qp_attr rtr{};
    rtr.qp_state = IBV_QPS_RTR;
    rtr.path_mtu = peer.active_mtu;
    rtr.dest_qp_num = peer.remote.qpn;
    rtr.rq_psn = peer.remote.psn;
    rtr.max_dest_rd_atomic = 0;
    rtr.min_rnr_timer = 12;
    rtr.ah_attr.is_global = 1;
    rtr.ah_attr.grh.dgid = peer.remote.gid;
    rtr.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(peer.gid_index);
    rtr.ah_attr.grh.hop_limit = 64;
    rtr.ah_attr.port_num = peer.port;
    exercise::check(
        ibv_modify_qp(peer.qp, &rtr,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
        "ibv_modify_qp(RTR)");

    // Step 3: RTR -> RTS: our first PSN (the one we told the peer), and how long to wait for an
    // ACK and how often to retry before giving up.
    ibv_qp_attr rts{};
    rts.qp_state = IBV_QPS_RTS;
    rts.sq_psn = peer.local.psn;
    rts.timeout = 14;
    rts.retry_cnt = 7;
    rts.rnr_retry = 6;  // bounded: 7 would retry forever
    rts.max_rd_atomic = 0;
    exercise::check(ibv_modify_qp(peer.qp, &rts,
                                  IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                      IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC),
                    "ibv_modify_qp(RTS)");
    exercise::wait_until_peer_ready(peer);

    // The WRITE and the done message, as in exercise 1.
    const exercise::RemoteBuffer target = peer.remote.buffer;
    std::vector<std::uint8_t> data(target.length);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = exercise::pattern_byte(i);
    std::uint32_t done = htonl(static_cast<std::uint32_t>(data.size()));
    ibv_mr* data_mr = ibv_reg_mr(peer.pd, data.data(), data.size(), 0);
    ibv_mr* done_mr = ibv_reg_mr(peer.pd, &done, sizeof done, 0);
    if (data_mr == nullptr || done_mr == nullptr) exercise::fail("ibv_reg_mr failed");
    ibv_sge sges[2] = {{reinterpret_cast<std::uintptr_t>(data.data()),
                        static_cast<std::uint32_t>(data.size()), data_mr->lkey},
                       {reinterpret_cast<std::uintptr_t>(&done), sizeof done, done_mr->lkey}};
    ibv_send_wr wrs[2]{};
    wrs[0].sg_list = &sges[0];
    wrs[0].num_sge = 1;
    wrs[0].opcode = IBV_WR_RDMA_WRITE;
    wrs[0].wr.rdma.remote_addr = target.address;
    wrs[0].wr.rdma.rkey = target.rkey;
    wrs[0].next = &wrs[1];
    wrs[1].sg_list = &sges[1];
    wrs[1].num_sge = 1;
    wrs[1].opcode = IBV_WR_SEND;
    wrs[1].send_flags = IBV_SEND_SIGNALED;  // covers the WRITE before it
    ibv_send_wr* bad = nullptr;
    exercise::check(ibv_post_send(peer.qp, &wrs[0], &bad), "ibv_post_send(WRITE, SEND)");
    const ibv_wc wc = exercise::wait_for_completion(peer.cq);
    if (wc.status != IBV_WC_SUCCESS)
        exercise::fail(std::string("the WRITE or the SEND failed: ") +
                       ibv_wc_status_str(wc.status));

    ibv_dereg_mr(done_mr);
    ibv_dereg_mr(data_mr);
    std::printf("QP %#x connected by hand to QP %#x; wrote %zu bytes\n", peer.local.qpn,
                peer.remote.qpn, data.size());
    return 0;
}
