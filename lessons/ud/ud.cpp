// Lesson: ud — Unreliable Datagram: no connection; every SEND names its destination (address
// handle, remote QPN, Q_Key), fits in one packet, lands behind a 40-byte GRH area, and may be
// lost. Run: ud server | ud client ADDR [-n COUNT] [-s SIZE ≤ path MTU] [--wrong-qkey]
//
// Why by hand (ibv_modify_qp plus a TCP exchange) and not through rdma_cm: a UD QP's transitions
// name no peer at all — INIT takes a P_Key index, a port and the Q_Key; RTR takes nothing; RTS a
// send PSN — and every fact about the destination lives in the address handle built from what the
// peer sent. Written out, that difference from RC is visible on the page; rdma_cm's UD path
// (RDMA_PS_UDP, which hands back the same AH attributes and QPN in an event) is in the multicast
// lesson.
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/port_address.hpp"
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/tcp_exchange.hpp"
#include "rdmalab/ud_datagrams.hpp"
#include "rdmalab/verbs.hpp"
#include "rdmalab/verbs_names.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <thread>
#include <variant>
#include <vector>

using namespace rdmalab;
using std::chrono::milliseconds;

namespace {

// The Q_Key: a receiving UD QP delivers only datagrams that carry its own Q_Key and silently
// drops the rest. Any value below 0x80000000 (keys with the top bit set are "controlled": only
// privileged processes may send them).
constexpr std::uint32_t kQkey = 0x1ab2c3d4;
constexpr std::uint32_t kMaxReceiveDepth = 512;     // receives the server keeps posted (recycled)
constexpr std::uint32_t kSendWindow = 64;           // SENDs the client keeps in flight
constexpr milliseconds kDrainQuiet{200};            // after "done": how long the last ones may take
constexpr std::uint64_t kReplyWrId = 1ull << 32;    // the server's answer, unlike any receive
constexpr std::uint32_t kPeerCheckInterval = 1024;  // datagrams between looks at the TCP link

struct UdOptions : ConnectionOptions {
    std::uint32_t count = 100;
    bool size_given = false;  // otherwise the message size is the path MTU
    bool wrong_qkey = false;
};

// What the two sides swap over TCP before any datagram is common's endpoint record
// (qp_endpoint.hpp): QPN, GID (or LID), MTU and — what only UD needs — the Q_Key.

// ---- The UD QP: created, then RESET → INIT → RTR → RTS with nothing about any peer.

QpQueues create_ud_queues(const LocalPort& local, std::uint32_t send_depth,
                          std::uint32_t receive_depth) {
    // A PD, one CQ and a QP of type UD (qp_bringup.hpp), the same as for RC.
    QpQueues queues = create_qp_queues(local.context.get(), IBV_QPT_UD, send_depth, receive_depth);

    // #region ud-qp
    // INIT: which port, which P_Key (index 0: the default partition) and which Q_Key this QP
    // accepts. No access flags: UD has no RDMA READ/WRITE, only SEND.
    ibv_qp_attr attributes{};
    attributes.qp_state = IBV_QPS_INIT;
    attributes.pkey_index = 0;
    attributes.port_num = local.address.port;
    attributes.qkey = kQkey;
    check_ibv(ibv_modify_qp(queues.qp.get(), &attributes,
                            IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY),
              "ibv_modify_qp(INIT)");
    // RTR: just the state. An RC QP would need the peer's QPN, GID, PSN and path MTU here.
    attributes = {};
    attributes.qp_state = IBV_QPS_RTR;
    check_ibv(ibv_modify_qp(queues.qp.get(), &attributes, IBV_QP_STATE), "ibv_modify_qp(RTR)");
    // RTS: the first PSN this QP sends. Nobody checks it: UD neither acknowledges nor orders.
    attributes = {};
    attributes.qp_state = IBV_QPS_RTS;
    attributes.sq_psn = 0;
    check_ibv(ibv_modify_qp(queues.qp.get(), &attributes, IBV_QP_STATE | IBV_QP_SQ_PSN),
              "ibv_modify_qp(RTS)");
    return queues;
    // #endregion ud-qp
}

// No buffer and PSN 0: a UD QP offers no remote access, and nobody checks its PSNs.
QpEndpoint ud_endpoint(const LocalPort& local, const QpQueues& queues) {
    QpEndpoint ours = local_endpoint(queues.qp.get(), local.address);
    ours.psn = 0;
    ours.qkey = kQkey;
    return ours;
}

// The one rule UD adds to SEND: a datagram is one packet, so it cannot exceed the path MTU
// (the smaller of the two ports' active MTUs). A larger message is refused, never truncated.
void require_fits_path_mtu(std::size_t size, int path_mtu, const QpEndpoint& ours,
                           const QpEndpoint& theirs) {
    if (size > static_cast<std::size_t>(path_mtu))
        fail(fmt::format(
            "message size {} is larger than the path MTU of {} bytes (ours {}, the peer's {}): "
            "a UD message must fit in one packet (use -s {} or less)",
            size, path_mtu, mtu_bytes(ours.active_mtu), mtu_bytes(theirs.active_mtu), path_mtu));
    if (size < kDatagramHeaderBytes)
        fail(fmt::format("message size {} is smaller than the {}-byte datagram header", size,
                         kDatagramHeaderBytes));
}

// ---- Server: pre-posted receives, each 40 + size bytes, recycled; count what arrives.

int run_server(const UdOptions& options) {
    require_device_exists(options.device);  // before waiting for anyone
    auto tcp =
        TcpExchange::accept_one(options.port, options.bind_address, options.accept_timeout());
    LocalPort local = open_port_for_address(tcp.local_address(), options);  // and --tclass
    ibv_device_attr device{};
    check_ibv(ibv_query_device(local.context.get(), &device), "ibv_query_device");
    const std::uint32_t depth =
        std::min<std::uint32_t>(kMaxReceiveDepth, static_cast<std::uint32_t>(device.max_qp_wr));
    QpQueues queues = create_ud_queues(local, 1, depth);
    const QpEndpoint ours = ud_endpoint(local, queues);
    const QpEndpoint client =
        exchange_endpoints(tcp, local.address, ours, PeerBuffer::kNone, "server");
    const int path_mtu = std::min(mtu_bytes(ours.active_mtu), mtu_bytes(client.active_mtu));
    fmt::print("server: UD QP {:#x} on {}, Q_Key {:#x}; client QP {:#x}; path MTU {} bytes\n",
               ours.qpn, local.address.description, kQkey, client.qpn, path_mtu);

    // The client's plan: message size and count. Checked before anything is sized from it; a
    // refusal (0 receives posted) tells the client to stop, and this side says why.
    const auto [size, count] = receive_words<2>(tcp);
    try {
        require_fits_path_mtu(size, path_mtu, ours, client);
        if (options.size_given && size > options.size)
            fail(
                fmt::format("the client sends {}-byte datagrams; this server accepts at most -s {}",
                            size, options.size));
        if (count == 0 || count > kMaxDatagramCount)
            fail(fmt::format("the client announces {} datagrams (1..{} allowed)", count,
                             kMaxDatagramCount));
    } catch (const Error&) {
        send_words(tcp, {0});
        throw;
    }

    // #region grh-slot
    // Each receive buffer is 40 + size bytes: the NIC writes the GRH area first, then the
    // payload. Only the local NIC writes here: LOCAL_WRITE, no remote access (UD has none).
    const std::size_t slot = kGrhBytes + size;
    const std::uint32_t posted = std::min(depth, count);
    Buffer slots(slot * posted);
    MemoryRegion slots_mr{
        ibv_reg_mr(queues.pd.get(), slots.data(), slots.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(slots_mr.get(), "ibv_reg_mr(receive slots)");
    // #endregion grh-slot
    auto post_receive = [&](std::uint32_t index) {
        ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(slots.data() + index * slot),
                    .length = static_cast<std::uint32_t>(slot),
                    .lkey = slots_mr->lkey};
        ibv_recv_wr receive{.wr_id = index, .next = nullptr, .sg_list = &sge, .num_sge = 1};
        ibv_recv_wr* bad = nullptr;
        check_ibv(ibv_post_recv(queues.qp.get(), &receive, &bad), "ibv_post_recv");
    };
    for (std::uint32_t i = 0; i < posted; ++i) post_receive(i);
    // Only now may the client send: a datagram that finds no receive posted is dropped.
    send_words(tcp, {posted});

    SequenceTally tally(count);
    ibv_wc first{};  // the first datagram's completion and the GRH area in front of it
    std::array<std::byte, kGrhBytes> first_grh{};
    std::uint32_t client_qkey = 0;
    std::uint32_t arrivals = 0;
    bool client_done = false;
    using Clock = std::chrono::steady_clock;
    auto last_event = Clock::now();
    for (;;) {
        std::array<ibv_wc, 16> wcs{};
        const int found = ibv_poll_cq(queues.cq.get(), static_cast<int>(wcs.size()), wcs.data());
        if (found < 0) fail("ibv_poll_cq failed");
        for (const ibv_wc& wc : std::span(wcs).first(static_cast<std::size_t>(found))) {
            if (wc.status != IBV_WC_SUCCESS)
                fail(fmt::format("a receive: {}", failed_completion(wc)));
            // Everything in the completion came from the network: check it before use.
            if (wc.opcode != IBV_WC_RECV || wc.wr_id >= posted || wc.byte_len < kGrhBytes)
                fail(fmt::format("unexpected completion: opcode {}, wr_id {}, {} bytes",
                                 static_cast<int>(wc.opcode), wc.wr_id, wc.byte_len));
            if (wc.src_qp != client.qpn)
                fail(fmt::format("a datagram from QP {:#x}, not the client's {:#x}", wc.src_qp,
                                 client.qpn));
            std::span<const std::byte> buffer{slots.data() + wc.wr_id * slot, wc.byte_len};
            auto datagram = read_datagram(buffer.subspan(kGrhBytes));
            if (auto* reason = std::get_if<std::string>(&datagram))
                fail(fmt::format("a {}-byte datagram failed its check: {}", wc.byte_len - kGrhBytes,
                                 *reason));
            const auto& message = std::get<Datagram>(datagram);
            if (message.kind != DatagramKind::kData || message.count != count)
                fail(fmt::format("datagram {} announces {} datagrams, the plan said {}",
                                 message.sequence, message.count, count));
            if (arrivals++ == 0) {
                first = wc;  // kept to answer the client (ibv_create_ah_from_wc, below)
                std::ranges::copy(buffer.first<kGrhBytes>(), first_grh.begin());
                auto header = read_network_header(buffer.first<kGrhBytes>());
                fmt::print(
                    "server: first datagram: byte_len {} = {} (GRH area{}) + {} payload; "
                    "sequence {}\n",
                    wc.byte_len, kGrhBytes,
                    header ? fmt::format(": {} header {} -> {}", header->ipv4 ? "IPv4" : "GRH",
                                         header->source, header->destination)
                           : std::string(", no network header"),
                    wc.byte_len - kGrhBytes, message.sequence);
            }
            tally.record(message.sequence);
            post_receive(static_cast<std::uint32_t>(wc.wr_id));  // recycle the buffer at once
            last_event = Clock::now();
        }
        if (found > 0) continue;
        // The CQ is empty: has the client said it is done? (TCP: that word cannot be lost.)
        if (!client_done && tcp.readable()) {
            const auto [sent, qkey_used] = receive_words<2>(tcp);
            if (sent != count)
                fail(fmt::format("the client says it sent {} of the {} planned", sent, count));
            client_qkey = qkey_used;
            client_done = true;
            last_event = Clock::now();
        }
        const auto quiet = Clock::now() - last_event;
        if (client_done && (tally.received() == count || quiet > kDrainQuiet)) break;
        if (!client_done && quiet > options.timeout())
            fail(fmt::format("no datagram and no word from the client for {:.1f} s",
                             options.timeout_s));
        std::this_thread::sleep_for(std::chrono::microseconds(20));
    }

    if (tally.received() > 0) {
        // #region ah-from-wc
        // The answer, addressed from the request itself: ibv_create_ah_from_wc builds an address
        // handle from a receive completion and the GRH the NIC wrote in front of its datagram
        // (the sender's GID), and wc.src_qp names the sender's QP — how a UD service answers
        // clients whose addresses it was never given.
        AddressHandle reply_ah{ibv_create_ah_from_wc(queues.pd.get(), &first,
                                                     reinterpret_cast<ibv_grh*>(first_grh.data()),
                                                     local.address.port)};
        check_ptr(reply_ah.get(), "ibv_create_ah_from_wc");
        Buffer reply(size);
        write_datagram(
            reply.bytes(),
            {.kind = DatagramKind::kEnd, .sequence = tally.received(), .count = tally.received()});
        MemoryRegion reply_mr{ibv_reg_mr(queues.pd.get(), reply.data(), reply.size(), 0)};
        check_ptr(reply_mr.get(), "ibv_reg_mr(reply)");
        ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(reply.data()),
                    .length = static_cast<std::uint32_t>(reply.size()),
                    .lkey = reply_mr->lkey};
        ibv_send_wr send{};
        send.wr_id = kReplyWrId;
        send.sg_list = &sge;
        send.num_sge = 1;
        send.opcode = IBV_WR_SEND;
        send.send_flags = IBV_SEND_SIGNALED;
        send.wr.ud.ah = reply_ah.get();
        send.wr.ud.remote_qpn = first.src_qp;
        send.wr.ud.remote_qkey = client.qkey;
        ibv_send_wr* bad = nullptr;
        check_ibv(ibv_post_send(queues.qp.get(), &send, &bad), "ibv_post_send(reply)");
        // #endregion ah-from-wc
        for (;;) {  // late receives may complete first: skip them, they were counted as lost
            const ibv_wc wc = wait_for_completion(queues.cq.get(), options.timeout(), "the reply");
            if (wc.wr_id == kReplyWrId && wc.opcode == IBV_WC_SEND) break;
        }
        fmt::print(
            "server: answered the client at QP {:#x} with an address handle made from its "
            "first datagram (ibv_create_ah_from_wc)\n",
            first.src_qp);
    }
    send_words(tcp, {tally.received(), tally.lost(), tally.duplicates(), tally.out_of_order()});
    fmt::print(
        "server: received {} of {} datagrams (lost {}, duplicates {}, out of order {}); every one "
        "that arrived was verified\n",
        tally.received(), count, tally.lost(), tally.duplicates(), tally.out_of_order());
    if (client_qkey != kQkey) {
        if (tally.received() != 0) fail("datagrams with a foreign Q_Key were delivered");
        fmt::print(
            "server: the client sent with Q_Key {:#x}, this QP's is {:#x}: the QP dropped every "
            "one, silently, as UD must\n",
            client_qkey, kQkey);
        return 0;
    }
    if (tally.received() == 0) fail("not one datagram arrived");
    fmt::print("server: counted at the receiver, the only place UD loss can be seen\n");
    return 0;
}

// ---- Client: one address handle, then SENDs that each name AH, remote QPN and Q_Key.

int run_client(const UdOptions& options) {
    require_device_exists(options.device);
    auto tcp = TcpExchange::connect_to(options.server_address, options.port, options.timeout());
    LocalPort local = open_port_for_address(tcp.local_address(), options);  // and --tclass
    const std::uint32_t window = std::min(kSendWindow, options.count);
    QpQueues queues = create_ud_queues(local, window, 1);
    const QpEndpoint ours = ud_endpoint(local, queues);
    const QpEndpoint server =
        exchange_endpoints(tcp, local.address, ours, PeerBuffer::kNone, "client");
    const int path_mtu = std::min(mtu_bytes(ours.active_mtu), mtu_bytes(server.active_mtu));
    const std::size_t size = options.size_given ? options.size : static_cast<std::size_t>(path_mtu);
    // The plan goes first, so the server can refuse it too and say why.
    send_words(
        tcp, {static_cast<std::uint32_t>(std::min<std::size_t>(size, UINT32_MAX)), options.count});
    require_fits_path_mtu(size, path_mtu, ours, server);

    // #region address-handle
    // The address handle: everything needed to reach the server's port — its GID (RoCE: its IP
    // address), our source GID index, hop limit — made once and named by every SEND.
    ibv_ah_attr ah_attributes{};
    ah_attributes.is_global = 1;  // RoCE: every packet carries a GRH (an IP header on RoCE v2)
    ah_attributes.grh.dgid = server.gid;
    ah_attributes.grh.sgid_index = static_cast<std::uint8_t>(local.address.gid_index);
    ah_attributes.grh.hop_limit = 64;
    ah_attributes.dlid = server.lid;
    ah_attributes.port_num = local.address.port;
    AddressHandle ah{check_ptr(ibv_create_ah(queues.pd.get(), &ah_attributes), "ibv_create_ah")};
    // #endregion address-handle
    const std::uint32_t qkey = options.wrong_qkey ? server.qkey ^ 1 : server.qkey;
    fmt::print("client: UD QP {:#x} on {}; address handle to {}, server QP {:#x}, Q_Key {:#x}{}\n",
               ours.qpn, local.address.description, format_gid(server.gid), server.qpn, qkey,
               options.wrong_qkey ? " (deliberately wrong)" : "");

    // `window` send slots, reused in turn; the NIC only reads them (access flags 0).
    Buffer slots(size * window);
    MemoryRegion slots_mr{ibv_reg_mr(queues.pd.get(), slots.data(), slots.size(), 0)};
    check_ptr(slots_mr.get(), "ibv_reg_mr(send slots)");
    const auto [posted] = receive_words<1>(tcp);  // the server's receives are posted
    if (posted == 0)
        fail(fmt::format("the server refused {}-byte datagrams (its output says why)", size));

    std::uint32_t in_flight = 0;
    for (std::uint32_t sequence = 0; sequence < options.count; ++sequence) {
        // Nothing in UD says the receiver is gone: the sends go on succeeding. Only the side
        // channel can tell, so look at it now and then (the server says nothing until "done").
        if (sequence % kPeerCheckInterval == 0 && tcp.peer_closed())
            fail(
                fmt::format("the server closed the control connection after {} of {} datagrams "
                            "(the UD sends themselves cannot notice)",
                            sequence, options.count));
        if (in_flight == window) {
            wait_for_completion(queues.cq.get(), options.timeout(), "a UD SEND");
            --in_flight;  // completions come in posting order: the oldest slot is free again
        }
        std::span<std::byte> message{slots.data() + (sequence % window) * size, size};
        write_datagram(message,
                       {.kind = DatagramKind::kData, .sequence = sequence, .count = options.count});
        ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(message.data()),
                    .length = static_cast<std::uint32_t>(size),
                    .lkey = slots_mr->lkey};
        ibv_send_wr send{};
        send.wr_id = sequence;
        send.sg_list = &sge;
        send.num_sge = 1;
        send.opcode = IBV_WR_SEND;
        send.send_flags = IBV_SEND_SIGNALED;
        send.wr.ud.ah = ah.get();            // where: the address handle
        send.wr.ud.remote_qpn = server.qpn;  // which QP there
        send.wr.ud.remote_qkey = qkey;       // the key that QP accepts
        ibv_send_wr* bad = nullptr;
        check_ibv(ibv_post_send(queues.qp.get(), &send, &bad), "ibv_post_send(UD SEND)");
        ++in_flight;
    }
    // A UD send completion means "sent", never "received": nobody acknowledges a datagram.
    for (; in_flight > 0; --in_flight)
        wait_for_completion(queues.cq.get(), options.timeout(), "a UD SEND");

    // A receive for the server's answer (40-byte GRH area + one datagram), before "done".
    Buffer answer(kGrhBytes + size);
    MemoryRegion answer_mr{
        ibv_reg_mr(queues.pd.get(), answer.data(), answer.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(answer_mr.get(), "ibv_reg_mr(answer)");
    ibv_sge answer_sge{.addr = reinterpret_cast<std::uintptr_t>(answer.data()),
                       .length = static_cast<std::uint32_t>(answer.size()),
                       .lkey = answer_mr->lkey};
    ibv_recv_wr answer_receive{.wr_id = 1, .next = nullptr, .sg_list = &answer_sge, .num_sge = 1};
    ibv_recv_wr* bad_receive = nullptr;
    check_ibv(ibv_post_recv(queues.qp.get(), &answer_receive, &bad_receive), "ibv_post_recv");
    send_words(tcp, {options.count, qkey});  // over TCP, so this word cannot be lost
    const auto [received, lost, duplicates, out_of_order] = receive_words<4>(tcp);
    if (received > 0) {  // the server answers only a client it heard from
        const ibv_wc wc =
            wait_for_completion(queues.cq.get(), options.timeout(), "the server's answer");
        if (wc.opcode != IBV_WC_RECV || wc.src_qp != server.qpn || wc.byte_len < kGrhBytes)
            fail(fmt::format("unexpected answer: opcode {}, from QP {:#x}, {} bytes",
                             static_cast<int>(wc.opcode), wc.src_qp, wc.byte_len));
        auto reply = read_datagram(answer.bytes().subspan(kGrhBytes, wc.byte_len - kGrhBytes));
        if (auto* reason = std::get_if<std::string>(&reply))
            fail("the server's answer failed its check: " + *reason);
        if (std::get<Datagram>(reply).kind != DatagramKind::kEnd ||
            std::get<Datagram>(reply).count != received)
            fail("the server's answer does not carry its count");
        fmt::print(
            "client: the server's answer arrived from QP {:#x}, addressed from our own "
            "datagram: it counted {}\n",
            wc.src_qp, received);
    }
    if (received > options.count || received + lost != options.count)
        fail(fmt::format("the server's report does not add up: {} received + {} lost for {} sent",
                         received, lost, options.count));
    fmt::print(
        "client: sent {} datagrams of {} bytes; the server received {} and lost {} (duplicates {}, "
        "out of order {}): UD does not retransmit\n",
        options.count, size, received, lost, duplicates, out_of_order);
    if (options.wrong_qkey) {
        if (received != 0) fail("the server accepted datagrams with the wrong Q_Key");
        fmt::print(
            "client: with the wrong Q_Key every send completed, yet the server's QP dropped them "
            "all\n");
    } else if (received == 0) {
        fail("the server received none of them");
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("ud", [&] {
        CommandLine cli{"UD: datagrams to a QP named by address handle, QPN and Q_Key", "ud"};
        UdOptions options;
        cli.add_connection_options(options);
        cli.existing("--port").description("TCP port of the out-of-band exchange");
        cli.existing("--size")
            .description(
                "client: bytes per datagram; server: the most it accepts (default: the path MTU, "
                "the most UD allows)")
            .size_at_least(kDatagramHeaderBytes,
                           fmt::format("a datagram needs at least {} bytes for its header",
                                       kDatagramHeaderBytes));
        cli.existing("--gid-index")
            .description("source GID index (default: the RoCE v2 GID of the IP address)");
        // The client decides what is sent; the server learns the plan in the exchange.
        auto client = cli.subcommand("client");
        client.option("-n,--iters", options.count, "number of datagrams")
            .range(1u, kMaxDatagramCount)
            .show_default();
        client.flag("--wrong-qkey", options.wrong_qkey,
                    "send with a Q_Key the server's QP does not accept");
        cli.parse_or_exit(argc, argv);
        options.size_given = cli.given("--size");
        return options.server ? run_server(options) : run_client(options);
    });
}
