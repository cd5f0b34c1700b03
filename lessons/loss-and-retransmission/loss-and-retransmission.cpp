// Lesson: loss-and-retransmission — the same lossy link under two transports. RC: 64 WRITEs of
// 16 KiB, every byte verified, because each lost packet was NAKed ("PSN sequence error") or
// timed out and then sent again with every packet after it (go-back-N). UD: 200 datagrams, no
// ACKs, no resends; the receiver's sequence numbers are the only witness of what was lost.
// rxe's port counters (the hw_counters every RDMA NIC has in sysfs) are read before and after.
// Needs two hosts and a lossy link: in the lab
//   ./rdmalab lab --hosts 2 --loss 2:5% --capture x.pcap
//                 --on 1 'build/bin/loss-and-retransmission server'
//                 --on 2 'sleep 1; build/bin/loss-and-retransmission client $RDMALAB_ADDR_1'
// on real hosts, `tc qdisc add dev IFACE root netem loss 5%` on the client's host (then `del`).
// Run: loss-and-retransmission server|client ADDR [-n WRITES] [-s SIZE] [--datagrams N] (both
// sides given the same three; defaults 64 WRITEs of 16 KiB, 200 datagrams)
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/tcp_exchange.hpp"
#include "rdmalab/trace.hpp"
#include "rdmalab/ud_datagrams.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <thread>

using namespace rdmalab;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::uint32_t kDatagramSize = 512;  // a datagram is one packet: ≤ the path MTU
constexpr std::uint32_t kQkey = 0x11111111;
constexpr std::uint64_t kSeed = 0x4c;
constexpr std::uint32_t kWritesDone = 0x57444e45;     // "WDNE": all WRITEs completed
constexpr std::uint32_t kVerified = 0x4f4b2121;       // "OK!!"
constexpr std::uint32_t kReceivesReady = 0x52435652;  // "RCVR": the UD receives are posted
constexpr std::uint32_t kDatagramsSent = 0x53454e54;  // "SENT"

// #region reliability
// timeout 14: a packet whose ACK never comes is resent after 4.096 µs × 2^14 ≈ 67 ms (a lost
// NAK or a lost last packet costs that); retry_cnt 7: on rxe, resend without giving up.
// rnr_retry 6, not 7 (forever): the lesson's RC traffic is WRITEs, which need no receive, so an
// RNR NAK would be a bug to report, not to wait out.
constexpr Reliability kReliability{.timeout = 14,
                                   .retry_cnt = 7,
                                   .rnr_retry = 6,
                                   .min_rnr_timer = 12,
                                   .max_rd_atomic = 0,
                                   .max_dest_rd_atomic = 0};
// #endregion reliability

// #region counters
// The port's counters, as every RDMA NIC's driver offers them in sysfs (also `rdma statistic
// show`): on mlx5 and on rxe alike, /sys/class/infiniband/DEV/ports/PORT/hw_counters/NAME.
using Counters = std::map<std::string, long long>;

Counters read_counters(ibv_context* context, std::uint8_t port) {
    static constexpr std::array<const char*, 6> kNames = {
        "sent_pkts",    "rcvd_pkts",           "out_of_seq_request",
        "rcvd_seq_err", "completer_retry_err", "duplicate_request"};
    const std::string folder = fmt::format("/sys/class/infiniband/{}/ports/{}/hw_counters/",
                                           ibv_get_device_name(context->device), port);
    Counters counters;
    for (const char* name : kNames) {
        std::ifstream file(folder + name);
        long long value = 0;
        if (!(file >> value))
            fail(fmt::format("cannot read {}{}: this driver has no such counter", folder, name));
        counters[name] = value;
    }
    return counters;
}

long long delta(const Counters& before, const Counters& after, const std::string& name) {
    return after.at(name) - before.at(name);
}
// #endregion counters

// How much goes over the lossy link: -n WRITEs of -s bytes, then --datagrams datagrams.
struct LossOptions : QpOptions {
    std::uint32_t writes = 64;
    std::uint32_t datagrams = 200;
};
constexpr std::uint32_t kMaxWrites = 1024;  // all are posted at once: the send queue's depth
constexpr std::size_t kMaxBytes = 64 * 1024 * 1024;  // -n × -s, registered on both sides

void print_faults(const char* who) {
    if (const char* faults = std::getenv("RDMALAB_FAULTS"); faults && *faults)
        fmt::print("{}: the lab's faults on this link: {}\n", who, faults);
}

// ---- Server: the RC target, then the UD receiver.

int run_server(const LossOptions& options) {
    print_faults("server");
    const std::uint32_t messages = options.writes;
    const std::uint32_t datagram_count = options.datagrams;
    QpResources rc = create_qp_resources(options, IBV_QPT_RC, 1, 1, "server");
    Buffer target(std::size_t{messages} * options.size);
    MemoryRegion target_mr{ibv_reg_mr(rc.pd.get(), target.data(), target.size(),
                                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)};
    check_ptr(target_mr.get(), "ibv_reg_mr(target)");
    apply_transition(rc.qp.get(), init_transition(rc.local, IBV_ACCESS_REMOTE_WRITE), "server");
    auto tcp =
        TcpExchange::accept_one(options.port, options.bind_address, options.accept_timeout());
    connect_qp(rc.qp.get(), tcp, rc.local,
               local_endpoint(rc, reinterpret_cast<std::uintptr_t>(target.data()), target_mr->rkey,
                              static_cast<std::uint32_t>(target.size())),
               PeerBuffer::kNone, kReliability, "server");

    // #region rc-responder
    const Counters before = read_counters(rc.context.get(), rc.local.port);
    expect_word(tcp, kWritesDone, "the client's end of its WRITEs");
    const Counters after = read_counters(rc.context.get(), rc.local.port);
    if (auto bad = find_pattern_mismatch(target.bytes(), kSeed))
        fail(fmt::format("byte {} of {} is not what the client wrote", *bad, target.size()));
    fmt::print(
        "server: RC: verified all {} bytes of {} WRITEs; the responder's counters: {} packets "
        "received, {} out of sequence (a gap before them: NAKed, or dropped while a NAK was "
        "outstanding), {} duplicates (already executed: acknowledged again)\n",
        target.size(), messages, delta(before, after, "rcvd_pkts"),
        delta(before, after, "out_of_seq_request"), delta(before, after, "duplicate_request"));
    // #endregion rc-responder
    send_word(tcp, kVerified);

    // UD: every receive posted before the client sends (a datagram that finds none is dropped
    // too, and that would not be the link's loss). Each slot holds the 40-byte GRH area first.
    QpResources ud = create_qp_resources(options, IBV_QPT_UD, 1, datagram_count, "server");
    const std::size_t slot = kGrhBytes + kDatagramSize;
    Buffer slots(slot * datagram_count);
    MemoryRegion slots_mr{
        ibv_reg_mr(ud.pd.get(), slots.data(), slots.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(slots_mr.get(), "ibv_reg_mr(UD receive slots)");
    // The UD bring-up is the ud lesson's subject; here common's transitions do it (INIT with
    // the Q_Key a datagram must carry to be accepted, then RTR: a receiver needs no more).
    apply_transition(ud.qp.get(), ud_init_transition(ud.local, kQkey), "server");
    for (std::uint32_t i = 0; i < datagram_count; ++i) {
        ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(slots.data() + i * slot),
                    .length = static_cast<std::uint32_t>(slot),
                    .lkey = slots_mr->lkey};
        ibv_recv_wr receive{.wr_id = i, .next = nullptr, .sg_list = &sge, .num_sge = 1};
        ibv_recv_wr* bad = nullptr;
        trace::post_recv(ud.qp.get(), &receive);  // --trace records the WR (else: nothing)
        check_ibv(ibv_post_recv(ud.qp.get(), &receive, &bad), "ibv_post_recv(UD)");
    }
    const QpEndpoint client =
        exchange_endpoints(tcp, ud.local, local_endpoint(ud), PeerBuffer::kNone, "server");
    apply_transition(ud.qp.get(), rtr_transition(IBV_QPT_UD, ud.local, client, kReliability),
                     "server");
    const Counters ud_before = read_counters(ud.context.get(), ud.local.port);
    send_word(tcp, kReceivesReady);

    // #region ud-receiver
    // The client says when it has sent all; whatever has not arrived a moment later never will.
    SequenceTally tally(datagram_count);
    expect_word(tcp, kDatagramsSent, "the client's end of its datagrams");
    auto quiet_since = Clock::now();
    while (Clock::now() - quiet_since < std::chrono::milliseconds(500)) {
        ibv_wc wc{};
        const int found = ibv_poll_cq(ud.cq.get(), 1, &wc);
        check_errno(found >= 0, "ibv_poll_cq");
        if (found == 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            continue;
        }
        trace::completion(wc);  // --trace records the CQE (else: nothing)
        quiet_since = Clock::now();
        if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV || wc.wr_id >= datagram_count ||
            wc.byte_len < kGrhBytes || wc.src_qp != client.qpn)
            fail(fmt::format("an unexpected UD completion: {}, wr_id {}, {} bytes, from QP {:#x}",
                             ibv_wc_status_str(wc.status), wc.wr_id, wc.byte_len, wc.src_qp));
        std::span<const std::byte> payload{slots.data() + wc.wr_id * slot + kGrhBytes,
                                           wc.byte_len - kGrhBytes};
        auto datagram = read_datagram(payload);  // from the network: checked before use
        if (auto* reason = std::get_if<std::string>(&datagram))
            fail(fmt::format("a datagram failed its check: {}", *reason));
        if (std::get<Datagram>(datagram).count != datagram_count)
            fail(
                fmt::format("the client sends {} datagrams, this server expects {} (give both "
                            "sides the same --datagrams)",
                            std::get<Datagram>(datagram).count, datagram_count));
        tally.record(std::get<Datagram>(datagram).sequence);
    }
    // #endregion ud-receiver
    const Counters ud_after = read_counters(ud.context.get(), ud.local.port);
    fmt::print(
        "server: UD: received {} of {} datagrams, every one verified; {} lost ({:.1f} %), {} "
        "out of order; the port counted {} packets received — nobody resent the others\n",
        tally.received(), datagram_count, tally.lost(), 100.0 * tally.lost() / datagram_count,
        tally.out_of_order(), delta(ud_before, ud_after, "rcvd_pkts"));
    send_word(tcp, tally.received());
    return 0;
}

// ---- Client: the RC WRITEs, then the datagrams.

int run_client(const LossOptions& options) {
    print_faults("client");
    const std::uint32_t messages = options.writes;
    const auto message_size = static_cast<std::uint32_t>(options.size);
    const std::uint32_t datagram_count = options.datagrams;
    QpResources rc = create_qp_resources(options, IBV_QPT_RC, messages, 1, "client");
    Buffer source(std::size_t{messages} * message_size);
    fill_pattern(source.bytes(), kSeed);
    MemoryRegion source_mr{ibv_reg_mr(rc.pd.get(), source.data(), source.size(), 0)};
    check_ptr(source_mr.get(), "ibv_reg_mr(source)");
    apply_transition(rc.qp.get(), init_transition(rc.local, 0), "client");
    auto tcp = TcpExchange::connect_to(options.server_address, options.port, options.timeout());
    const QpEndpoint server = connect_qp(rc.qp.get(), tcp, rc.local, local_endpoint(rc),
                                         PeerBuffer::kAdvertised, kReliability, "client");
    if (server.length < source.size())
        fail(fmt::format("the server's buffer holds {} bytes; {} are needed", server.length,
                         source.size()));
    const std::uint32_t mtu =
        static_cast<std::uint32_t>(mtu_bytes(std::min(rc.local.active_mtu, server.active_mtu)));
    const long long needed = messages * ((message_size + mtu - 1) / mtu);

    // #region rc-requester
    // All 64 WRITEs posted at once; each completes only once every packet of it was ACKed —
    // after as many resends as the link's losses took.
    const Counters before = read_counters(rc.context.get(), rc.local.port);
    const auto start = Clock::now();
    for (std::uint32_t i = 0; i < messages; ++i) {
        ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(source.data()) + i * message_size,
                    .length = message_size,
                    .lkey = source_mr->lkey};
        ibv_send_wr write{};
        write.wr_id = i;
        write.sg_list = &sge;
        write.num_sge = 1;
        write.opcode = IBV_WR_RDMA_WRITE;
        write.send_flags = IBV_SEND_SIGNALED;
        write.wr.rdma.remote_addr = server.address + std::uint64_t{i} * message_size;
        write.wr.rdma.rkey = server.rkey;
        ibv_send_wr* bad = nullptr;
        trace::post_send(rc.qp.get(), &write);  // --trace records the WR (else: nothing)
        check_ibv(ibv_post_send(rc.qp.get(), &write, &bad), "ibv_post_send(RDMA WRITE)");
    }
    for (std::uint32_t i = 0; i < messages; ++i)
        wait_for_completion(rc.cq.get(), options.timeout(), "RDMA WRITE on a lossy link");
    // #endregion rc-requester
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const Counters after = read_counters(rc.context.get(), rc.local.port);
    const long long sent = delta(before, after, "sent_pkts");
    fmt::print(
        "client: RC: {} WRITEs of {} bytes completed in {:.3f} s ({:.2f} MB/s): {} packets "
        "needed at path MTU {}, {} sent, {} of them sent again; {} NAKs \"PSN sequence error\" "
        "received (rcvd_seq_err), {} retransmission rounds (completer_retry_err)\n",
        messages, message_size, seconds, source.size() / seconds / 1e6, needed, mtu, sent,
        sent - needed, delta(before, after, "rcvd_seq_err"),
        delta(before, after, "completer_retry_err"));
    send_word(tcp, kWritesDone);
    expect_word(tcp, kVerified, "the server's check of the written bytes");
    fmt::print(
        "client: RC: the server verified every byte: nothing the link lost was lost. The price: "
        "after each gap rxe resends every packet it had sent past the gap (go-back-N, up to "
        "the whole window of {} WRITEs), not just the one lost\n",
        messages);

    // #region ud-sender
    QpResources ud = create_qp_resources(options, IBV_QPT_UD, 16, 1, "client");
    Buffer datagrams(std::size_t{datagram_count} * kDatagramSize);
    MemoryRegion datagrams_mr{ibv_reg_mr(ud.pd.get(), datagrams.data(), datagrams.size(), 0)};
    check_ptr(datagrams_mr.get(), "ibv_reg_mr(datagrams)");
    // INIT (the Q_Key), RTR, RTS (a UD PSN is never checked), then one address handle that
    // names the server's port: the ud lesson writes these out; common's transitions do them here.
    const QpEndpoint ours = local_endpoint(ud);
    apply_transition(ud.qp.get(), ud_init_transition(ud.local, kQkey), "client");
    const QpEndpoint peer = exchange_endpoints(tcp, ud.local, ours, PeerBuffer::kNone, "client");
    apply_transition(ud.qp.get(), rtr_transition(IBV_QPT_UD, ud.local, peer, kReliability),
                     "client");
    apply_transition(ud.qp.get(), rts_transition(IBV_QPT_UD, ours.psn, kReliability), "client");
    ibv_ah_attr ah_attributes = address_vector(ud.local, peer);
    AddressHandle ah{check_ptr(ibv_create_ah(ud.pd.get(), &ah_attributes), "ibv_create_ah")};
    expect_word(tcp, kReceivesReady, "the server's posted receives");

    std::uint32_t in_flight = 0;
    for (std::uint32_t sequence = 0; sequence < datagram_count; ++sequence) {
        if (in_flight == 16) {  // the send queue holds 16: wait for the oldest to go out
            wait_for_completion(ud.cq.get(), options.timeout(), "a UD SEND");
            --in_flight;
        }
        std::span<std::byte> message =
            datagrams.bytes().subspan(std::size_t{sequence} * kDatagramSize, kDatagramSize);
        write_datagram(
            message, {.kind = DatagramKind::kData, .sequence = sequence, .count = datagram_count});
        ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(message.data()),
                    .length = kDatagramSize,
                    .lkey = datagrams_mr->lkey};
        ibv_send_wr send{};
        send.wr_id = sequence;
        send.sg_list = &sge;
        send.num_sge = 1;
        send.opcode = IBV_WR_SEND;
        send.send_flags = IBV_SEND_SIGNALED;
        send.wr.ud.ah = ah.get();
        send.wr.ud.remote_qpn = peer.qpn;
        send.wr.ud.remote_qkey = kQkey;
        ibv_send_wr* bad = nullptr;
        trace::post_send(ud.qp.get(), &send);  // --trace records the WR (else: nothing)
        check_ibv(ibv_post_send(ud.qp.get(), &send, &bad), "ibv_post_send(UD SEND)");
        ++in_flight;
    }
    // A UD send completion means "sent", never "received".
    for (; in_flight > 0; --in_flight)
        wait_for_completion(ud.cq.get(), options.timeout(), "a UD SEND");
    send_word(tcp, kDatagramsSent);
    const std::uint32_t received = receive_word(tcp);
    if (received > datagram_count)
        fail(fmt::format("the server claims {} of {} datagrams", received, datagram_count));
    // #endregion ud-sender
    fmt::print(
        "client: UD: {} datagrams sent, every one completed successfully here; the server "
        "received {} ({} lost): UD's sender never knows\n",
        datagram_count, received, datagram_count - received);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("loss-and-retransmission", [&] {
        CommandLine cli{"One lossy link, two transports: RC resends (go-back-N), UD loses",
                        "loss-and-retransmission"};
        LossOptions options;
        options.timeout_s = 60;  // a very lossy link is slow
        options.size = 16384;
        add_qp_options(cli, options);
        cli.option("-n,--iters", options.writes, "number of RC WRITEs (all posted at once)")
            .range(1U, kMaxWrites)
            .show_default();
        cli.option("--datagrams", options.datagrams, "number of UD datagrams")
            .range(1U, 100'000U)
            .show_default();
        cli.parse_or_exit(argc, argv);
        if (std::size_t{options.writes} * options.size > kMaxBytes) {
            fmt::print(stderr,
                       "loss-and-retransmission: -n {} x -s {} is more than {} bytes (run with "
                       "--help for usage)\n",
                       options.writes, options.size, kMaxBytes);
            return 2;
        }
        return options.server ? run_server(options) : run_client(options);
    });
}
