// Lesson: on-the-wire — every RC operation (SEND, WRITE, WRITE WITH IMMEDIATE, READ, fetch-add,
// compare-and-swap) at a size below and above the path MTU, each printed first as the packets
// it must make — opcode, PSN, payload, extension headers, and what each header is for — then
// done and its data verified. A capture of the link shows the same packets (tests compare them).
// Needs two hosts to have a wire: in the lab
//   ./rdmalab lab --hosts 2 --capture x.pcap --on 1 'build/bin/on-the-wire server'
//                 --on 2 'sleep 1; build/bin/on-the-wire client $RDMALAB_ADDR_1'
//   ./rdmalab wire x.pcap
// on real hosts, `tcpdump -i IFACE -w x.pcap udp port 4791` while it runs (RoCE v2).
// Run: on-the-wire server | on-the-wire client ADDR
#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/predicted_packets.hpp"
#include "rdmalab/private_data.hpp"
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/tcp_exchange.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

using namespace rdmalab;

namespace {

// #region steps
// What the client does, in order. 512 bytes fit one packet at any RoCE path MTU; 2500 bytes
// need three at MTU 1024 (1024 + 1024 + 452); the 16 KiB WRITE shows one ACK for 16 packets.
enum class Op { kSend, kWrite, kWriteImm, kRead, kFetchAdd, kCmpSwap };
struct Step {
    Op op;
    std::uint32_t size;
};
constexpr std::array<Step, 11> kSteps = {{{Op::kSend, 512},
                                          {Op::kSend, 2500},
                                          {Op::kWrite, 512},
                                          {Op::kWrite, 2500},
                                          {Op::kWriteImm, 512},
                                          {Op::kWriteImm, 2500},
                                          {Op::kRead, 512},
                                          {Op::kRead, 2500},
                                          {Op::kFetchAdd, 8},
                                          {Op::kCmpSwap, 8},
                                          {Op::kWrite, 16384}}};
// #endregion steps
constexpr std::uint32_t kLargest = 16384;
constexpr std::uint32_t kReceives = 4;  // two SENDs and two WRITE WITH IMMEDIATEs consume one each
constexpr std::uint64_t kReadSeed = 0x52;
constexpr std::uint64_t kCounterStart = 1000;
constexpr std::uint64_t kAdd = 42;
constexpr std::uint64_t kSwap = 7;
constexpr std::uint32_t kVerified = 0x4f4b2121;  // "OK!!": the server checked the step's data

// Each step's data is its own pattern, so a step that did not happen cannot pass as one that did.
std::uint64_t seed_of(std::size_t step) {
    return 0x100 + step;
}
std::uint32_t immediate_of(std::size_t step) {
    return 0x1000 + static_cast<std::uint32_t>(step);
}

const char* op_name(Op op) {
    switch (op) {
        case Op::kSend:
            return "SEND";
        case Op::kWrite:
            return "RDMA WRITE";
        case Op::kWriteImm:
            return "RDMA WRITE WITH IMMEDIATE";
        case Op::kRead:
            return "RDMA READ";
        case Op::kFetchAdd:
            return "ATOMIC FETCH AND ADD";
        case Op::kCmpSwap:
            return "ATOMIC COMPARE AND SWAP";
    }
    return "?";
}

// QPs, since neither side uses rdma_cm here: READs and atomics need max_rd_atomic (requester)
// and max_dest_rd_atomic (responder) of at least 1; the rest are the usual defaults.
constexpr Reliability kReliability{.timeout = 14,
                                   .retry_cnt = 7,
                                   .rnr_retry = 6,
                                   .min_rnr_timer = 12,
                                   .max_rd_atomic = 1,
                                   .max_dest_rd_atomic = 1};

// ---- The prediction: the packets an operation makes (PredictedPacket: predicted_packets.hpp).

// What the server advertised: where each operation's target is.
struct Targets {
    RemoteBuffer write, read, atomic;
};

// The packets of one step. `psn` is the client's next send PSN: each request packet takes one,
// and a READ takes one for each response packet it asks for (the responses carry them).
std::vector<PredictedPacket> predict(std::size_t index, const Step& step, std::uint32_t& psn,
                                     std::uint32_t mtu, const Targets& to) {
    std::vector<PredictedPacket> packets;
    // The responder's AETH carries its MSN: the messages it has completed, this one included
    // (every step here is one message, and this connection carries nothing else).
    const std::uint32_t msn = static_cast<std::uint32_t>(index + 1);
    // #region predict
    const std::uint32_t n = std::max<std::uint32_t>(1, (step.size + mtu - 1) / mtu);
    auto payload = [&](std::uint32_t i) { return i + 1 < n ? mtu : step.size - (n - 1) * mtu; };
    auto reth = [&](const RemoteBuffer& b) {
        return fmt::format("RETH va {:#x} rkey {:#x} len {}", b.address, b.rkey, step.size);
    };
    switch (step.op) {
        case Op::kSend:
        case Op::kWrite:
        case Op::kWriteImm: {
            const std::string base = step.op == Op::kSend ? "SEND " : "RDMA WRITE ";
            for (std::uint32_t i = 0; i < n; ++i) {
                PredictedPacket p{true, base + message_part(i, n), psn, payload(i), ""};
                if (step.op != Op::kSend && i == 0) p.headers = reth(to.write);
                if (step.op == Op::kWriteImm && i + 1 == n) {
                    p.opcode += " with Immediate";
                    p.headers +=
                        fmt::format("{}ImmDt {:#010x}", i == 0 ? " · " : "", immediate_of(index));
                }
                if (i + 1 == n) p.headers += p.headers.empty() ? "AckReq" : " · AckReq";
                packets.push_back(p);
                if (i + 1 < n) psn = next_psn(psn);
            }
            // One ACK, for the last PSN: it acknowledges every packet up to it (coalescing).
            packets.push_back({false, "Acknowledge", psn, 0, fmt::format("AETH ACK msn {}", msn)});
            psn = next_psn(psn);
            break;
        }
        // #endregion predict
        case Op::kRead:
            packets.push_back({true, "RDMA READ Request", psn, 0, reth(to.read) + " · AckReq"});
            for (std::uint32_t i = 0; i < n; ++i) {
                const std::string which = message_part(i, n);
                packets.push_back({false, "RDMA READ Response " + which, next_psn(psn, i),
                                   payload(i),
                                   which == "Middle" ? "" : fmt::format("AETH ACK msn {}", msn)});
            }
            psn = next_psn(psn, n);
            break;
        case Op::kFetchAdd:
        case Op::kCmpSwap: {
            const bool add = step.op == Op::kFetchAdd;
            packets.push_back(
                {true, add ? "FetchAdd" : "CmpSwap", psn, 0,
                 fmt::format("AtomicETH va {:#x} rkey {:#x} ", to.atomic.address, to.atomic.rkey) +
                     (add ? fmt::format("add {}", kAdd)
                          : fmt::format("compare {} swap {}", kCounterStart + kAdd, kSwap)) +
                     " · AckReq"});
            packets.push_back({false, "ATOMIC Acknowledge", psn, 0,
                               fmt::format("AETH ACK msn {} · AtomicAckETH original {}", msn,
                                           add ? kCounterStart : kCounterStart + kAdd)});
            psn = next_psn(psn);
            break;
        }
    }
    return packets;
}

// #region headers
// What each header is for, said once, the first time a packet carries it.
void explain_new_headers(const std::vector<PredictedPacket>& packets,
                         std::set<std::string>& explained) {
    static const std::array<std::pair<const char*, const char*>, 6> kMeaning = {{
        {"BTH",
         "every packet: opcode, destination QP, PSN (24 bits, one per packet: the receiver "
         "spots a gap), AckReq (answer me)"},
        {"RETH",
         "first packet only: remote address, rkey and the whole message's length; the responder "
         "remembers them for the Middle and Last packets"},
        {"ImmDt", "last packet only: 4 bytes handed to the receiver's completion (wc.imm_data)"},
        {"AETH",
         "in ACKs and READ responses: syndrome (ACK, NAK with a reason, RNR NAK with a timer) "
         "and MSN, the count of messages the responder completed"},
        {"AtomicETH", "remote address, rkey and the operands (add, or compare and swap)"},
        {"AtomicAckETH", "the 64-bit value the word held before the operation"},
    }};
    std::string all;
    for (const PredictedPacket& p : packets) all += " " + p.headers + " ";
    for (const auto& [name, meaning] : kMeaning) {
        const bool present = name == std::string("BTH") ||
                             all.find(std::string(" ") + name + " ") != std::string::npos;
        if (present && explained.insert(name).second)
            fmt::print("client:     {:<12} {}\n", name, meaning);
    }
}
// #endregion headers

// ---- The server: four targets, each registered for the one kind of access it serves.

int run_server(const QpOptions& options) {
    QpResources r = create_qp_resources(options, IBV_QPT_RC, 1, kReceives, "server");
    // #region server-regions
    // Least privilege, region by region: the peer may WRITE only the write target, READ only the
    // read source, and run atomics only on the 8-byte counter. Receives need LOCAL_WRITE alone.
    Buffer inbox(kReceives * kLargest), write_target(kLargest), read_source(kLargest), counter(8);
    MemoryRegion inbox_mr{
        ibv_reg_mr(r.pd.get(), inbox.data(), inbox.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(inbox_mr.get(), "ibv_reg_mr(inbox)");
    MemoryRegion write_mr{ibv_reg_mr(r.pd.get(), write_target.data(), write_target.size(),
                                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)};
    check_ptr(write_mr.get(), "ibv_reg_mr(write target)");
    MemoryRegion read_mr{
        ibv_reg_mr(r.pd.get(), read_source.data(), read_source.size(), IBV_ACCESS_REMOTE_READ)};
    check_ptr(read_mr.get(), "ibv_reg_mr(read source)");
    MemoryRegion counter_mr{ibv_reg_mr(r.pd.get(), counter.data(), counter.size(),
                                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC)};
    check_ptr(counter_mr.get(), "ibv_reg_mr(counter)");
    // #endregion server-regions
    fill_pattern(read_source.bytes(), kReadSeed);
    std::uint64_t start = kCounterStart;
    std::memcpy(counter.data(), &start, sizeof start);  // atomics work in the host's own order

    // The QP lets the peer do all three kinds; each region then allows only its own.
    apply_transition(r.qp.get(),
                     init_transition(r.local, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                                                  IBV_ACCESS_REMOTE_ATOMIC),
                     "server");
    for (std::uint32_t i = 0; i < kReceives; ++i) {
        ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(inbox.data()) + i * kLargest,
                    .length = kLargest,
                    .lkey = inbox_mr->lkey};
        ibv_recv_wr receive{.wr_id = i, .next = nullptr, .sg_list = &sge, .num_sge = 1};
        ibv_recv_wr* bad = nullptr;
        check_ibv(ibv_post_recv(r.qp.get(), &receive, &bad), "ibv_post_recv");
    }
    auto tcp =
        TcpExchange::accept_one(options.port, options.bind_address, options.accept_timeout());
    connect_qp(r.qp.get(), tcp, r.local,
               local_endpoint(r, reinterpret_cast<std::uintptr_t>(write_target.data()),
                              write_mr->rkey, kLargest),
               PeerBuffer::kNone, kReliability, "server");
    // The other two targets follow the endpoint record on the same TCP connection.
    tcp.send_all(
        encode_remote_buffer({.address = reinterpret_cast<std::uintptr_t>(read_source.data()),
                              .rkey = read_mr->rkey,
                              .length = kLargest,
                              .use = BufferUse::kReadSource}));
    tcp.send_all(encode_remote_buffer({.address = reinterpret_cast<std::uintptr_t>(counter.data()),
                                       .rkey = counter_mr->rkey,
                                       .length = 8,
                                       .use = BufferUse::kAtomicTarget}));

    for (std::size_t index = 0; index < kSteps.size(); ++index) {
        const Step& step = kSteps[index];
        const std::uint32_t announced = receive_word(tcp);
        if (announced != index)
            fail(fmt::format("the client announced step {}, expected {}", announced, index));
        std::string what;
        if (step.op == Op::kSend || step.op == Op::kWriteImm) {
            // SENDs and WRITE WITH IMMEDIATE consume a receive: its completion says what came.
            ibv_wc wc = wait_for_completion(r.cq.get(), options.timeout(), op_name(step.op));
            if (step.op == Op::kSend) {
                if (wc.opcode != IBV_WC_RECV || wc.byte_len != step.size || wc.wr_id >= kReceives)
                    fail(
                        fmt::format("step {}: a receive completion of {} bytes (opcode {}), "
                                    "expected a SEND of {}",
                                    index, wc.byte_len, static_cast<int>(wc.opcode), step.size));
                if (find_pattern_mismatch(inbox.bytes().subspan(wc.wr_id * kLargest, step.size),
                                          seed_of(index)))
                    fail(fmt::format("step {}: the SEND's bytes are not what the client sent",
                                     index));
                what = fmt::format("received {} bytes into receive {}", step.size, wc.wr_id);
            } else {
                if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || !(wc.wc_flags & IBV_WC_WITH_IMM) ||
                    from_be32(wc.imm_data) != immediate_of(index))
                    fail(
                        fmt::format("step {}: expected the immediate {:#x} in a "
                                    "RECV_RDMA_WITH_IMM completion",
                                    index, immediate_of(index)));
                what = fmt::format("immediate {:#x} in the completion", immediate_of(index));
            }
        }
        if (step.op == Op::kWrite || step.op == Op::kWriteImm) {
            if (find_pattern_mismatch(write_target.bytes().first(step.size), seed_of(index)))
                fail(
                    fmt::format("step {}: the written bytes are not what the client wrote", index));
            std::memset(write_target.data(), 0,
                        write_target.size());  // the next write starts clean
            what += fmt::format("{}{} bytes written", what.empty() ? "" : ", ", step.size);
        }
        if (step.op == Op::kRead) {
            if (find_pattern_mismatch(read_source.bytes(), kReadSeed))
                fail("the READ source changed: a READ must not write");
            what = "the source is intact (the CPU took no part)";
        }
        if (step.op == Op::kFetchAdd || step.op == Op::kCmpSwap) {
            std::uint64_t now = 0;
            std::memcpy(&now, counter.data(), sizeof now);
            const std::uint64_t expected = step.op == Op::kFetchAdd ? kCounterStart + kAdd : kSwap;
            if (now != expected)
                fail(fmt::format("step {}: the counter holds {}, expected {}", index, now,
                                 expected));
            what = fmt::format("the counter is now {}", now);
        }
        fmt::print("server: step {}: {} of {} bytes verified: {}\n", index + 1, op_name(step.op),
                   step.size, what);
        send_word(tcp, kVerified);
    }
    fmt::print("server: all {} steps verified\n", kSteps.size());
    return 0;
}

// ---- The client: it predicts each step's packets, then makes them.

int run_client(const QpOptions& options) {
    QpResources r = create_qp_resources(options, IBV_QPT_RC, 1, 1, "client");
    // The client's own buffers: a source our NIC only reads (access 0), a sink for READ
    // responses and for the atomics' original value (LOCAL_WRITE: our NIC writes them).
    Buffer source(kLargest), sink(kLargest), original(8);
    MemoryRegion source_mr{ibv_reg_mr(r.pd.get(), source.data(), source.size(), 0)};
    check_ptr(source_mr.get(), "ibv_reg_mr(source)");
    MemoryRegion sink_mr{ibv_reg_mr(r.pd.get(), sink.data(), sink.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(sink_mr.get(), "ibv_reg_mr(sink)");
    MemoryRegion original_mr{
        ibv_reg_mr(r.pd.get(), original.data(), original.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(original_mr.get(), "ibv_reg_mr(original)");

    apply_transition(r.qp.get(), init_transition(r.local, 0), "client");
    auto tcp = TcpExchange::connect_to(options.server_address, options.port, options.timeout());
    const QpEndpoint ours = local_endpoint(r);
    const QpEndpoint server =
        connect_qp(r.qp.get(), tcp, r.local, ours, PeerBuffer::kAdvertised, kReliability, "client");
    Targets to;
    to.write = {server.address, server.rkey, server.length, BufferUse::kWriteTarget};
    RemoteBufferWire wire{};
    tcp.receive_exact(wire);
    to.read = decode_remote_buffer_or_throw(wire, BufferUse::kReadSource, kLargest);
    tcp.receive_exact(wire);
    to.atomic = decode_remote_buffer_or_throw(wire, BufferUse::kAtomicTarget, 8);
    if (to.write.length < kLargest)
        fail(fmt::format("the server's write target holds {} bytes; {} are needed", to.write.length,
                         kLargest));

    const std::uint32_t mtu =
        static_cast<std::uint32_t>(mtu_bytes(std::min(r.local.active_mtu, server.active_mtu)));
    fmt::print(
        "client: path MTU {} bytes; our QP {:#08x} sends from PSN {}, the server's QP is "
        "{:#08x}\n",
        mtu, r.qp->qp_num, ours.psn, server.qpn);
    std::uint32_t psn = ours.psn;
    std::set<std::string> explained;
    std::size_t predicted = 0;

    for (std::size_t index = 0; index < kSteps.size(); ++index) {
        const Step& step = kSteps[index];
        const auto packets = predict(index, step, psn, mtu, to);
        fmt::print("client: step {}: {} of {} bytes -> {} packets expected on the wire:\n",
                   index + 1, op_name(step.op), step.size, packets.size());
        fmt::print("{}", format_predicted_packets("client", packets, server.qpn, r.qp->qp_num));
        explain_new_headers(packets, explained);
        predicted += packets.size();

        // #region post
        fill_pattern(source.bytes().first(step.size), seed_of(index));
        ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(source.data()),
                    .length = step.size,
                    .lkey = source_mr->lkey};
        ibv_send_wr wr{};
        wr.wr_id = index;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.send_flags = IBV_SEND_SIGNALED;
        switch (step.op) {
            case Op::kSend:
                wr.opcode = IBV_WR_SEND;
                break;
            case Op::kWrite:
            case Op::kWriteImm:
                wr.opcode = step.op == Op::kWrite ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_WRITE_WITH_IMM;
                wr.imm_data = to_be32(immediate_of(index));  // big-endian in the packet
                wr.wr.rdma.remote_addr = to.write.address;
                wr.wr.rdma.rkey = to.write.rkey;
                break;
            case Op::kRead:
                wr.opcode = IBV_WR_RDMA_READ;
                sge = {reinterpret_cast<std::uintptr_t>(sink.data()), step.size, sink_mr->lkey};
                wr.wr.rdma.remote_addr = to.read.address;
                wr.wr.rdma.rkey = to.read.rkey;
                break;
            case Op::kFetchAdd:
            case Op::kCmpSwap:
                sge = {reinterpret_cast<std::uintptr_t>(original.data()), 8, original_mr->lkey};
                wr.opcode = step.op == Op::kFetchAdd ? IBV_WR_ATOMIC_FETCH_AND_ADD
                                                     : IBV_WR_ATOMIC_CMP_AND_SWP;
                wr.wr.atomic.remote_addr = to.atomic.address;
                wr.wr.atomic.rkey = to.atomic.rkey;
                wr.wr.atomic.compare_add = step.op == Op::kFetchAdd ? kAdd : kCounterStart + kAdd;
                wr.wr.atomic.swap = kSwap;
                break;
        }
        ibv_send_wr* bad = nullptr;
        check_ibv(ibv_post_send(r.qp.get(), &wr, &bad), "ibv_post_send");
        wait_for_completion(r.cq.get(), options.timeout(), op_name(step.op));
        // #endregion post

        std::string checked;
        if (step.op == Op::kRead) {
            if (find_pattern_mismatch(sink.bytes().first(step.size), kReadSeed))
                fail(fmt::format("step {}: the READ brought bytes the server does not hold",
                                 index + 1));
            checked = fmt::format("; {} bytes read and verified here", step.size);
        }
        if (step.op == Op::kFetchAdd || step.op == Op::kCmpSwap) {
            std::uint64_t was = 0;
            std::memcpy(&was, original.data(), sizeof was);
            const std::uint64_t expected =
                step.op == Op::kFetchAdd ? kCounterStart : kCounterStart + kAdd;
            if (was != expected)
                fail(fmt::format("step {}: the original value came back as {}, expected {}",
                                 index + 1, was, expected));
            checked = fmt::format("; the original value {} came back", was);
        }
        send_word(tcp, static_cast<std::uint32_t>(index));
        expect_word(tcp, kVerified, "the server's check of the step");
        fmt::print("client: step {}: completed{}; the server verified it\n", index + 1, checked);
    }
    fmt::print(
        "client: {} operations verified; {} packets predicted from the path MTU and the PSNs — "
        "a capture of the link shows them (./rdmalab wire FILE.pcap)\n",
        kSteps.size(), predicted);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("on-the-wire", [&] {
        CommandLine cli{"Each RC operation as the packets it makes: predicted, done, verified",
                        "on-the-wire"};
        QpOptions options;
        add_qp_options(cli, options);
        cli.parse_or_exit(argc, argv);
        return options.server ? run_server(options) : run_client(options);
    });
}
