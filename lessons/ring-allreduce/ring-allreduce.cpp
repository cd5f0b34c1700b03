// Lesson: ring-allreduce — the collective behind every data-parallel training step, on verbs.
// N ranks in a ring each hold a float32 vector; afterwards every rank holds the element-wise sum.
// Reduce-scatter (N-1 steps: receive a chunk from the left, add it to yours, pass the sum on),
// then all-gather (N-1 steps: pass the finished chunks round). Every transfer is an RDMA WRITE
// WITH IMMEDIATE into the right neighbour's receive slots, the immediate naming the segment;
// chunks go in segments, several in flight, and the receiver hands a slot back (a credit) once
// it has used what landed there — NCCL's ring does the same through its proxy thread.
// Run, one rank per host (rank R of the list; under mpirun or srun R comes from the launcher):
//   ring-allreduce --rank R --hosts ADDR0,ADDR1,ADDR2 [-s BYTES] [--segment BYTES] [--slots N]
#include "rdmalab/allreduce_options.hpp"
#include "rdmalab/allreduce_report.hpp"
#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/port_address.hpp"
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/records/allreduce.hpp"
#include "rdmalab/ring_schedule.hpp"
#include "rdmalab/tcp_exchange.hpp"
#include "rdmalab/trace.hpp"
#include "rdmalab/verbs.hpp"
#include "rdmalab/verbs_names.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

using namespace rdmalab;
using Clock = std::chrono::steady_clock;

namespace {

// The allreduce programs' options (allreduce_options.hpp; rank R listens on port + R), and the
// ring's own.
struct RingOptions : RankedAllreduceOptions {
    std::size_t segment = 0;  // bytes per WRITE
    std::uint32_t slots = 4;  // receive slots: segments in flight per link
};

// An ACK may wait behind a full queue on a slow link (one 64 KiB segment is 70 ms at 8 Mbit/s):
// 4.096 µs × 2^18 ≈ 1.1 s before resending, not the 67 ms of timeout 14, which would resend what
// is merely queued. NCCL waits longer still (NCCL_IB_TIMEOUT, default 20: 4.3 s).
constexpr Reliability kRingReliability{.timeout = 18};

// Work request ids: what a completion is about.
enum WorkId : std::uint64_t {
    kDataWrite = 1,
    kCreditSend = 2,
    kDataArrived = 3,
    kCreditArrived = 4
};

struct Link {
    TcpExchange tcp;
    int peer = 0;
    QpEndpoint remote;
};

// ---- Connecting the ring: a QP to the right neighbour (we WRITE into its slots) and one from
// the left (it WRITEs into ours). Rank 0 connects first and accepts last; everyone else accepts
// from the left first: each rank waits only for a rank that is already waiting for it.

Link connect_right(const RingOptions& o, int right, ibv_qp* qp, const PortAddress& local,
                   std::string who) {
    // The right neighbour may still be connecting to its own: wait for it the whole timeout.
    const auto timeout = to_milliseconds(o.timeout_s);
    Link link{TcpExchange::connect_to(o.hosts[right], static_cast<std::uint16_t>(o.port + right),
                                      timeout, /*startup_grace=*/timeout),
              right,
              {}};
    // We only write: the right neighbour's record must advertise its slots; ours advertises none.
    link.remote = connect_qp(qp, link.tcp, local, local_endpoint(qp, local),
                             PeerBuffer::kAdvertised, kRingReliability, who);
    return link;
}

Link accept_left(const RingOptions& o, int left, ibv_qp* qp, const PortAddress& local,
                 const ibv_mr* slots, std::string who) {
    Link link{TcpExchange::accept_one(static_cast<std::uint16_t>(o.port + o.rank), "",
                                      to_milliseconds(o.timeout_s)),
              left,
              {}};
    link.remote = connect_qp(qp, link.tcp, local,
                             local_endpoint(qp, local, reinterpret_cast<std::uint64_t>(slots->addr),
                                            slots->rkey, static_cast<std::uint32_t>(slots->length)),
                             PeerBuffer::kNone, kRingReliability, who);
    return link;
}

// ---- One allreduce: every WRITE, credit and completion of it.

// The schedule (which chunk each step moves: ring_schedule.hpp), and the verbs objects.
struct Ring {
    const RingOptions& o;
    RingSchedule schedule;
    ibv_cq* cq;
    ibv_qp* to_right;
    ibv_qp* from_left;
    std::vector<float>& data;
    const ibv_mr* data_mr;
    const float* slots;
    const ibv_mr* slots_mr;
    Link& right;
    Link& left;
    std::uint64_t bytes_sent = 0;
    std::vector<double> step_done_ms;  // when the last segment of each step had arrived here
};

void post_receive(ibv_qp* qp, WorkId id) {
    ibv_recv_wr wr{};  // no buffer: a WRITE WITH IMMEDIATE lands in the slot it names, and a
    wr.wr_id = id;     // credit is an immediate alone
    ibv_recv_wr* bad = nullptr;
    trace::post_recv(qp, &wr);  // --trace records the WR (else: nothing)
    check_ibv(ibv_post_recv(qp, &wr, &bad), "ibv_post_recv");
}

// Segment q (step q / S, segment q % S) goes to the right neighbour's slot q % slots.
void write_segment(Ring& ring, std::uint32_t q) {
    const RingSchedule& s = ring.schedule;
    const Chunk part = s.segment_of(s.sent_chunk(q / s.segments_per_step), q % s.segments_per_step);
    const std::uint32_t bytes = static_cast<std::uint32_t>(part.count * sizeof(float));
    ibv_sge sge{reinterpret_cast<std::uint64_t>(ring.data.data() + part.first), bytes,
                ring.data_mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = kDataWrite;
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.sg_list = bytes ? &sge : nullptr;
    wr.num_sge = bytes ? 1 : 0;
    wr.imm_data = to_be32(q);  // the receiver learns which segment landed, and where
    wr.wr.rdma.remote_addr = ring.right.remote.address + (q % ring.o.slots) * ring.o.segment;
    wr.wr.rdma.rkey = ring.right.remote.rkey;
    ibv_send_wr* bad = nullptr;
    trace::post_send(ring.to_right, &wr);
    check_ibv(ibv_post_send(ring.to_right, &wr, &bad), "ibv_post_send(RDMA_WRITE_WITH_IMM)");
    ring.bytes_sent += bytes;
}

// Segment q has landed in our slot q % slots: add it to our chunk (reduce-scatter) or copy it
// (all-gather). After that the slot is free again.
void use_segment(Ring& ring, std::uint32_t q, std::uint32_t byte_len) {
    const RingSchedule& s = ring.schedule;
    const std::size_t step = q / s.segments_per_step;
    const Chunk part = s.segment_of(s.received_chunk(step), q % s.segments_per_step);
    if (byte_len != part.count * sizeof(float))
        fail(fmt::format("segment {} from rank {} holds {} bytes, not {}", q, ring.left.peer,
                         byte_len, part.count * sizeof(float)));
    const float* slot = ring.slots + (q % ring.o.slots) * s.segment_elements;
    float* mine = ring.data.data() + part.first;
    if (s.reduces(step))
        for (std::size_t i = 0; i < part.count; ++i) mine[i] += slot[i];
    else
        std::copy(slot, slot + part.count, mine);
}

// Gives slots back to the left neighbour: a credit is a SEND WITH IMMEDIATE of no bytes whose
// immediate counts the segments used so far, so one credit can return several slots.
void send_credit(Ring& ring, std::uint32_t used) {
    ibv_send_wr wr{};
    wr.wr_id = kCreditSend;
    wr.opcode = IBV_WR_SEND_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = to_be32(used);
    ibv_send_wr* bad = nullptr;
    trace::post_send(ring.from_left, &wr);
    check_ibv(ibv_post_send(ring.from_left, &wr, &bad), "ibv_post_send(SEND_WITH_IMM, a credit)");
}

// Names the neighbour that stopped, if its control connection says it has gone.
void check_neighbours(const Ring& ring) {
    for (const Link* link : {&ring.left, &ring.right})
        if (link->tcp.peer_closed())
            fail(fmt::format("rank {} ({}) has gone: its connection closed mid-allreduce",
                             link->peer, ring.o.hosts[link->peer]));
}

// The whole allreduce as one loop over completions. Segment q may be written once we hold its
// data (step 0: our own; later: segment q-S has arrived here and been used) and the right
// neighbour has a free slot: it has returned credit for all but fewer than `slots` of ours.
// Segments arrive from the left in order (RC). No queue ever holds more than `slots` requests.
double allreduce(Ring& ring) {
    const std::uint32_t S = static_cast<std::uint32_t>(ring.schedule.segments_per_step);
    const std::uint32_t total = static_cast<std::uint32_t>(ring.schedule.steps()) * S;
    const std::uint32_t slots = ring.o.slots;
    std::uint32_t written = 0, writes_done = 0;  // WRITEs posted, and completed
    std::uint32_t arrived = 0, credited = 0;     // segments used here, and credit given for
    std::uint32_t credits_posted = 0, credits_done = 0;
    std::uint32_t used_by_right = 0;  // the latest credit: segments the right neighbour has used
    ring.step_done_ms.assign(ring.schedule.steps(), 0);
    const auto start = Clock::now();
    auto last_progress = start;
    // #region ring-gate
    while (arrived < total || used_by_right < total || writes_done < written ||
           credits_done < credits_posted || credited < arrived) {
        while (written < total && written - used_by_right < slots &&
               written - writes_done < slots && (written < S || written - S < arrived))
            write_segment(ring, written++);
        if (credited < arrived && credits_posted - credits_done < slots) {
            send_credit(ring, arrived);
            credited = arrived;
            ++credits_posted;
        }
        // #endregion ring-gate
        ibv_wc wcs[16];
        const int n = ibv_poll_cq(ring.cq, 16, wcs);
        if (n < 0) fail("ibv_poll_cq failed");
        if (n == 0) {
            if (Clock::now() - last_progress > to_milliseconds(ring.o.timeout_s))
                fail(fmt::format("no completion for {} s: rank {} or rank {} has stopped",
                                 ring.o.timeout_s, ring.left.peer, ring.right.peer));
            check_neighbours(ring);
            continue;
        }
        last_progress = Clock::now();
        for (const ibv_wc& wc : std::span(wcs, static_cast<std::size_t>(n))) {
            trace::completion(wc);
            const bool right_link = wc.wr_id == kDataWrite || wc.wr_id == kCreditArrived;
            if (wc.status != IBV_WC_SUCCESS)
                fail(fmt::format("the link to rank {} ({}): {}",
                                 right_link ? ring.right.peer : ring.left.peer,
                                 ring.o.hosts[right_link ? ring.right.peer : ring.left.peer],
                                 failed_completion(wc)));
            if (wc.wr_id == kDataWrite) ++writes_done;
            if (wc.wr_id == kCreditSend) ++credits_done;
            // #region ring-arrival
            if (wc.wr_id == kDataArrived) {
                const std::uint32_t q = from_be32(wc.imm_data);
                if (q != arrived)
                    fail(fmt::format("rank {} sent segment {} where {} was due", ring.left.peer, q,
                                     arrived));
                use_segment(ring, q, wc.byte_len);
                if (++arrived % S == 0) {
                    ring.step_done_ms[arrived / S - 1] =
                        std::chrono::duration<double, std::milli>(Clock::now() - start).count();
                    trace::step(fmt::format(
                        "step {} of {} ({}) all in", arrived / S, total / S,
                        ring.schedule.reduces(arrived / S - 1) ? "reduce-scatter" : "all-gather"));
                }
                post_receive(ring.from_left, kDataArrived);  // `slots` stay posted, always
            }
            // #endregion ring-arrival
            if (wc.wr_id == kCreditArrived) {
                const std::uint32_t used = from_be32(wc.imm_data);
                if (used <= used_by_right || used > written)
                    fail(fmt::format("rank {} returned credit up to {} after {}, with {} written",
                                     ring.right.peer, used, used_by_right, written));
                used_by_right = used;
                post_receive(ring.to_right, kCreditArrived);
            }
        }
    }
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Both neighbours in step: nothing of the next allreduce is sent before both are ready for it.
// A neighbour that has gone is named.
void barrier(Ring& ring) {
    constexpr std::uint32_t kInStep = 0x52494e47;  // "RING"
    auto naming_the_rank = [&](Link* link, auto step) {
        try {
            step(link->tcp);
        } catch (const Error& e) {
            fail(fmt::format("rank {} ({}) has gone: {}", link->peer, ring.o.hosts[link->peer],
                             e.what()));
        }
    };
    for (Link* link : {&ring.right, &ring.left})
        naming_the_rank(link, [&](TcpExchange& tcp) { send_word(tcp, kInStep); });
    for (Link* link : {&ring.left, &ring.right})
        naming_the_rank(
            link, [&](TcpExchange& tcp) { expect_word(tcp, kInStep, "the neighbour's barrier"); });
}

int run(const RingOptions& o) {
    const int ranks = static_cast<int>(o.hosts.size());
    const std::string who = fmt::format("rank {}", o.rank);
    const std::size_t elements = o.size / sizeof(float);
    const RingSchedule schedule = ring_schedule(o.rank, ranks, elements, o.segment / sizeof(float));
    fmt::print("{} of {} ({}): left rank {} ({}), right rank {} ({})\n", who, ranks,
               o.hosts[o.rank], schedule.left(), o.hosts[schedule.left()], schedule.right(),
               o.hosts[schedule.right()]);

    // The port behind our address, a PD, one CQ for both links, and the two QPs.
    auto address = parse_ip_address(o.hosts[o.rank], 0);
    if (!address) fail(fmt::format("'{}' is not a numeric IP address", o.hosts[o.rank]));
    LocalPort port = open_port_for_address(*address, o.device, -1);
    ProtectionDomain pd{check_ptr(ibv_alloc_pd(port.context.get()), "ibv_alloc_pd")};
    const int depth = static_cast<int>(o.slots);
    CompletionQueue cq{check_ptr(
        ibv_create_cq(port.context.get(), 4 * depth + 4, nullptr, nullptr, 0), "ibv_create_cq")};
    auto make_qp = [&] {
        ibv_qp_init_attr attributes{};
        attributes.send_cq = attributes.recv_cq = cq.get();
        attributes.qp_type = IBV_QPT_RC;
        attributes.cap = {.max_send_wr = o.slots,
                          .max_recv_wr = o.slots,
                          .max_send_sge = 1,
                          .max_recv_sge = 1,
                          .max_inline_data = 0};
        return QueuePair{check_ptr(ibv_create_qp(pd.get(), &attributes), "ibv_create_qp")};
    };
    QueuePair to_right = make_qp(), from_left = make_qp();

    // #region ring-registration
    // The vector is only ever a local source (WRITEs read it, the CPU adds into it): it needs no
    // access flag. The slots are where the left neighbour writes: REMOTE_WRITE, and LOCAL_WRITE,
    // which remote write requires.
    std::vector<float> data(elements);
    MemoryRegion data_mr{
        check_ptr(ibv_reg_mr(pd.get(), data.data(), std::max<std::size_t>(o.size, 1), 0),
                  "ibv_reg_mr(data)")};
    Buffer slots(o.slots * o.segment);
    MemoryRegion slots_mr{check_ptr(ibv_reg_mr(pd.get(), slots.data(), slots.size(),
                                               IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE),
                                    "ibv_reg_mr(slots)")};
    // #endregion ring-registration
    fmt::print(
        "{}: {} floats ({} bytes), {} segment(s) of up to {} bytes per step, {} slots of {} "
        "bytes\n",
        who, elements, o.size, schedule.segments_per_step, o.segment, o.slots, o.segment);

    apply_transition(to_right.get(), init_transition(port.address, 0), who);
    apply_transition(from_left.get(), init_transition(port.address, IBV_ACCESS_REMOTE_WRITE), who);
    std::optional<Link> right, left;
    if (o.rank == 0) {
        right = connect_right(o, schedule.right(), to_right.get(), port.address, who);
        left = accept_left(o, schedule.left(), from_left.get(), port.address, slots_mr.get(), who);
    } else {
        left = accept_left(o, schedule.left(), from_left.get(), port.address, slots_mr.get(), who);
        right = connect_right(o, schedule.right(), to_right.get(), port.address, who);
    }
    if (right->remote.length < o.slots * o.segment)
        fail(
            fmt::format("rank {} offers {} bytes of slots, not {}: run every rank with the same "
                        "--slots and --segment",
                        right->peer, right->remote.length, o.slots * o.segment));

    Ring ring{o,
              schedule,
              cq.get(),
              to_right.get(),
              from_left.get(),
              data,
              data_mr.get(),
              reinterpret_cast<const float*>(slots.data()),
              slots_mr.get(),
              *right,
              *left,
              0,
              {}};
    // Receives carry no buffer (a WRITE WITH IMMEDIATE names its own place, a credit has no
    // bytes): `slots` of each kind stay posted from now on, one re-posted for each used.
    for (std::uint32_t i = 0; i < o.slots; ++i) {
        post_receive(from_left.get(), kDataArrived);
        post_receive(to_right.get(), kCreditArrived);
    }
    std::vector<double> times;
    for (unsigned iteration = 0; iteration < o.iterations; ++iteration) {
        for (std::size_t i = 0; i < elements; ++i) data[i] = allreduce_input(o.rank, i);
        barrier(ring);
        ring.bytes_sent = 0;
        times.push_back(allreduce(ring));
        // Small integers (allreduce_input): every sum is exact in float32, in any order of adding.
        if (auto mismatch = allreduce_mismatch(data, ranks)) fail(*mismatch);
        fmt::print("{}: allreduce {}: {:.2f} ms, all {} sums verified\n", who, iteration + 1,
                   times.back(), elements);
    }
    barrier(ring);  // no QP goes away while a neighbour still writes to it

    const AllreduceRuns runs{.bytes = o.size,
                             .ranks = ranks,
                             .times_ms = times,
                             .step_done_ms = ring.step_done_ms,
                             .bytes_sent = ring.bytes_sent,
                             .right = right->peer};
    fmt::print("{}", format_allreduce_report(who, runs));
    if (!o.json.empty())
        records::write_allreduce_records(o.json, runs, {o.rank, o.segment, o.slots});
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("ring-allreduce", [&] {
        CommandLine cli{"A ring allreduce (float32 sum) over RDMA WRITE WITH IMMEDIATE",
                        "ring-allreduce"};
        RingOptions o;
        AllreduceCommandLine allreduce(cli, o, "1M");  // -s, -n, --json, --rank, --hosts, …
        cli.existing("--port").description("TCP port of rank 0; rank R listens on port + R");
        cli.option("--slots", o.slots, "receive slots per link: segments in flight")
            .range(1, 64)
            .show_default();
        std::string segment = "64K";
        cli.option("--segment", segment, "bytes per WRITE, and per slot (a multiple of 4)")
            .is_size()
            .show_default();
        cli.add_trace_option();
        cli.parse_or_exit(argc, argv);
        allreduce.check();
        o.segment = *parse_size(segment);
        require_float32_bytes("--segment", o.segment);
        if (o.slots * o.segment > (1u << 30))
            fail("--slots × --segment, the receive slots' memory, may be at most 1 GiB");
        return run(o);
    });
}
