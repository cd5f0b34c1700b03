// Lesson: recursive-doubling — an allreduce for small vectors: log2(n) steps where a ring takes
// 2(n-1), each moving the whole vector rather than 1/n of it.
// At step k every rank swaps its partly reduced vector with rank (its rank XOR 2^k) and adds
// what arrives: after step 0 pairs hold the sum of two, after step 1 fours hold the sum of four,
// and after log2(n) steps every rank holds the sum. When n is not a power of two, the ranks from
// p (the largest power of two below n) first fold their vector into rank r - p, sit the swaps out
// and get the sum back at the end. Every transfer is one RDMA WRITE WITH IMMEDIATE of the whole
// vector into a slot the partner registered for that link alone.
// The ring moves less (2(n-1)/n of the vector per link, against log2(n) vectors here) but waits
// 2(n-1) times; here there are log2(n) waits: the small vectors' algorithm. NCCL's tree and
// MPI's small-message allreduce make the same trade.
// Run, one rank per host (rank R of the list; under mpirun or srun R comes from the launcher):
//   recursive-doubling --rank R --hosts ADDR0,ADDR1,ADDR2 [-s BYTES] [-n ITERS] [--json FILE]
#include "rdmalab/allreduce_options.hpp"
#include "rdmalab/allreduce_report.hpp"
#include "rdmalab/codec.hpp"
#include "rdmalab/doubling_schedule.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/port_address.hpp"
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/records/allreduce.hpp"
#include "rdmalab/tcp_exchange.hpp"
#include "rdmalab/verbs.hpp"
#include "rdmalab/verbs_names.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

using namespace rdmalab;
using Clock = std::chrono::steady_clock;

namespace {

// The allreduce programs' options (allreduce_options.hpp); rank R listens for link L on
// port + R × links + L.
using DoublingOptions = RankedAllreduceOptions;

// A partner's WRITE may wait behind a whole vector on a slow link: resend after 4.096 µs × 2^18
// ≈ 1.1 s, not sooner (the ring lesson says why).
constexpr Reliability kReliability{.timeout = 18};

// One partner, reached over one link: the slot it writes into here (registered alone, so its
// rkey opens nothing else of ours), the QP, and the TCP connection that set it up, whose closing
// says the partner has gone. Declared in creation order, released in reverse.
struct Partner {
    int rank = 0;
    int link = 0;
    Buffer slot;
    MemoryRegion slot_mr;
    QueuePair qp;
    TcpExchange tcp;
    QpEndpoint remote;     // its slot for us
    bool arrived = false;  // its WRITE of this allreduce has landed in our slot
    bool written = false;  // our WRITE of this allreduce has completed
};

// ---- Connecting: one QP per link, in increasing link order on every rank. Of the two ends of
// a link the lower rank listens (on a port of its own for that link, so a partner that is early
// for a later link cannot be taken for this one's) and the higher one connects.

Partner connect_partner(const DoublingOptions& o, const DoublingStep& step, ibv_pd* pd, ibv_cq* cq,
                        const PortAddress& local, const std::string& who) {
    const int links = doubling_links(static_cast<int>(o.hosts.size()));
    Buffer slot(o.size);
    // #region doubling-slot
    // The partner only writes into its slot: REMOTE_WRITE, with the LOCAL_WRITE it requires.
    MemoryRegion slot_mr{check_ptr(
        ibv_reg_mr(pd, slot.data(), slot.size(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE),
        "ibv_reg_mr(slot)")};
    // #endregion doubling-slot
    ibv_qp_init_attr attributes{};
    attributes.send_cq = attributes.recv_cq = cq;
    attributes.qp_type = IBV_QPT_RC;
    attributes.cap = {.max_send_wr = 1,
                      .max_recv_wr = 1,
                      .max_send_sge = 1,
                      .max_recv_sge = 1,
                      .max_inline_data = 0};
    QueuePair qp{check_ptr(ibv_create_qp(pd, &attributes), "ibv_create_qp")};
    apply_transition(qp.get(), init_transition(local, IBV_ACCESS_REMOTE_WRITE), who);

    const auto timeout = to_milliseconds(o.timeout_s);
    const int listener = std::min(o.rank, step.partner);
    const auto port = static_cast<std::uint16_t>(o.port + listener * links + step.link);
    TcpExchange tcp = o.rank == listener
                          ? TcpExchange::accept_one(port, "", timeout)
                          : TcpExchange::connect_to(o.hosts[step.partner], port, timeout,
                                                    /*startup_grace=*/timeout);
    const QpEndpoint remote =
        connect_qp(qp.get(), tcp, local,
                   local_endpoint(qp.get(), local, reinterpret_cast<std::uint64_t>(slot.data()),
                                  slot_mr->rkey, static_cast<std::uint32_t>(o.size)),
                   PeerBuffer::kAdvertised, kReliability, who);
    if (remote.length != o.size)
        fail(
            fmt::format("rank {} offers a slot of {} bytes, not {}: run every rank with the same "
                        "--size",
                        step.partner, remote.length, o.size));
    return Partner{step.partner,  step.link,      std::move(slot), std::move(slot_mr),
                   std::move(qp), std::move(tcp), remote};
}

// ---- One allreduce.

struct Doubling {
    const DoublingOptions& o;
    std::vector<DoublingStep> schedule;
    ibv_cq* cq;
    std::vector<float>& data;
    const ibv_mr* data_mr;
    std::vector<std::optional<Partner>>& partners;  // by link number; empty: a link not ours
    std::uint64_t bytes_sent = 0;
};

void post_receive(Partner& p) {
    ibv_recv_wr wr{};  // no buffer: the WRITE WITH IMMEDIATE lands in the slot; the receive
    wr.wr_id = static_cast<std::uint64_t>(p.link);  // only tells us it has
    ibv_recv_wr* bad = nullptr;
    check_ibv(ibv_post_recv(p.qp.get(), &wr, &bad), "ibv_post_recv");
}

// #region doubling-write
// Our whole vector into the partner's slot for this link; the immediate names the link.
void write_vector(Doubling& d, Partner& p) {
    ibv_sge sge{reinterpret_cast<std::uint64_t>(d.data.data()),
                static_cast<std::uint32_t>(d.o.size), d.data_mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = static_cast<std::uint64_t>(p.link);
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.imm_data = to_be32(static_cast<std::uint32_t>(p.link));
    wr.wr.rdma.remote_addr = p.remote.address;
    wr.wr.rdma.rkey = p.remote.rkey;
    ibv_send_wr* bad = nullptr;
    check_ibv(ibv_post_send(p.qp.get(), &wr, &bad), "ibv_post_send(RDMA_WRITE_WITH_IMM)");
    d.bytes_sent += d.o.size;
}
// #endregion doubling-write

// Polls the one CQ until `p` has what the step needs: its WRITE landed here, ours completed
// there, or both. Completions for other links (a partner of a later step may be early) are
// recorded on their partner for when its step comes.
void wait_for(Doubling& d, Partner& p, bool need_arrival, bool need_written) {
    auto last_progress = Clock::now();
    while ((need_arrival && !p.arrived) || (need_written && !p.written)) {
        ibv_wc wc{};
        const int n = ibv_poll_cq(d.cq, 1, &wc);
        if (n < 0) fail("ibv_poll_cq failed");
        if (n == 0) {
            if (Clock::now() - last_progress > to_milliseconds(d.o.timeout_s))
                fail(fmt::format("no completion for {} s: rank {} ({}) has stopped", d.o.timeout_s,
                                 p.rank, d.o.hosts[p.rank]));
            for (const auto& other : d.partners)
                if (other && other->tcp.peer_closed())
                    fail(fmt::format("rank {} ({}) has gone: its connection closed mid-allreduce",
                                     other->rank, d.o.hosts[other->rank]));
            continue;
        }
        last_progress = Clock::now();
        if (wc.wr_id >= d.partners.size() || !d.partners[wc.wr_id])
            fail("a completion with an unknown work request id");
        Partner& from = *d.partners[wc.wr_id];
        if (wc.status != IBV_WC_SUCCESS)
            fail(fmt::format("the link to rank {} ({}): {}", from.rank, d.o.hosts[from.rank],
                             failed_completion(wc)));
        // #region doubling-arrival
        if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
            // Check what the peer says before using it: the link it names and the bytes.
            if (from_be32(wc.imm_data) != static_cast<std::uint32_t>(from.link) ||
                wc.byte_len != d.o.size)
                fail(fmt::format("rank {} wrote {} bytes naming link {}, not {} on link {}",
                                 from.rank, wc.byte_len, from_be32(wc.imm_data), d.o.size,
                                 from.link));
            from.arrived = true;
        } else {
            from.written = true;
        }
        // #endregion doubling-arrival
    }
}

void add_slot(Doubling& d, const Partner& p) {
    const float* slot = reinterpret_cast<const float*>(p.slot.data());
    for (std::size_t i = 0; i < d.data.size(); ++i) d.data[i] += slot[i];
}

// The schedule, step by step. Our vector is the source of our WRITE: it may change (by adding
// the partner's) only once that WRITE has completed.
double allreduce(Doubling& d, std::vector<double>& step_done_ms) {
    for (auto& p : d.partners)
        if (p) p->arrived = p->written = false;
    d.bytes_sent = 0;
    step_done_ms.clear();
    const auto start = Clock::now();
    // #region doubling-steps
    for (const DoublingStep& step : d.schedule) {
        Partner& p = *d.partners[static_cast<std::size_t>(step.link)];
        switch (step.action) {
            case DoublingAction::kSwap:
                write_vector(d, p);
                wait_for(d, p, /*need_arrival=*/true, /*need_written=*/true);
                add_slot(d, p);
                break;
            case DoublingAction::kFoldIn:
                wait_for(d, p, true, false);
                add_slot(d, p);
                break;
            case DoublingAction::kFoldOut:
            case DoublingAction::kResultOut:
                write_vector(d, p);
                wait_for(d, p, false, true);
                break;
            case DoublingAction::kResultIn:
                wait_for(d, p, true, false);
                std::memcpy(d.data.data(), p.slot.data(), d.o.size);
                break;
        }
        step_done_ms.push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
    // #endregion doubling-steps
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Every partner in step: nothing of the next allreduce is written into a slot before its owner
// has used what the last one left there. A partner that has gone is named.
void barrier(Doubling& d) {
    constexpr std::uint32_t kInStep = 0x44424c45;  // "DBLE"
    auto naming_the_rank = [&](Partner& p, auto step) {
        try {
            step(p.tcp);
        } catch (const Error& e) {
            fail(fmt::format("rank {} ({}) has gone: {}", p.rank, d.o.hosts[p.rank], e.what()));
        }
    };
    for (auto& p : d.partners)
        if (p) naming_the_rank(*p, [&](TcpExchange& tcp) { send_word(tcp, kInStep); });
    for (auto& p : d.partners)
        if (p)
            naming_the_rank(
                *p, [&](TcpExchange& tcp) { expect_word(tcp, kInStep, "the partner's barrier"); });
}

int run(const DoublingOptions& o) {
    const int ranks = static_cast<int>(o.hosts.size());
    const std::string who = fmt::format("rank {}", o.rank);
    const std::vector<DoublingStep> schedule = doubling_schedule(o.rank, ranks);
    std::string plan;
    for (const DoublingStep& s : schedule) {
        static constexpr const char* kNames[] = {"fold into", "fold from", "swap with", "result to",
                                                 "result from"};
        plan += fmt::format("{}{} rank {}", plan.empty() ? "" : ", ",
                            kNames[static_cast<int>(s.action)], s.partner);
    }
    fmt::print("{} of {} ({}): {}\n", who, ranks, o.hosts[o.rank], plan);

    auto address = parse_ip_address(o.hosts[o.rank], 0);
    if (!address) fail(fmt::format("'{}' is not a numeric IP address", o.hosts[o.rank]));
    LocalPort port = open_port_for_address(*address, o.device, -1);
    ProtectionDomain pd{check_ptr(ibv_alloc_pd(port.context.get()), "ibv_alloc_pd")};
    const int links = doubling_links(ranks);
    CompletionQueue cq{check_ptr(ibv_create_cq(port.context.get(), 2 * links, nullptr, nullptr, 0),
                                 "ibv_create_cq")};
    // The vector is only ever a local source (WRITEs read it, the CPU adds into it): no access.
    std::vector<float> data(o.size / sizeof(float));
    MemoryRegion data_mr{
        check_ptr(ibv_reg_mr(pd.get(), data.data(), o.size, 0), "ibv_reg_mr(data)")};

    // Partners by link number; a link this rank does not use stays empty.
    std::vector<std::optional<Partner>> partners(static_cast<std::size_t>(links));
    for (const DoublingStep& step : schedule) {
        auto& partner = partners[static_cast<std::size_t>(step.link)];
        if (partner) continue;  // the fold's link carries the result back too
        partner.emplace(connect_partner(o, step, pd.get(), cq.get(), port.address, who));
        post_receive(*partner);
    }
    Doubling d{o, schedule, cq.get(), data, data_mr.get(), partners};

    std::vector<double> times, step_done_ms;
    for (unsigned iteration = 0; iteration < o.iterations; ++iteration) {
        for (std::size_t i = 0; i < data.size(); ++i) data[i] = allreduce_input(o.rank, i);
        barrier(d);
        times.push_back(allreduce(d, step_done_ms));
        // Small integers (allreduce_input): every sum is exact in float32, in any order of adding.
        if (auto mismatch = allreduce_mismatch(data, ranks)) fail(*mismatch);
        for (const DoublingStep& step : schedule)  // each link's slot is free again
            if (step.action == DoublingAction::kSwap || step.action == DoublingAction::kFoldIn ||
                step.action == DoublingAction::kResultIn)
                post_receive(*partners[static_cast<std::size_t>(step.link)]);
        fmt::print("{}: allreduce {}: {:.2f} ms, all {} sums verified\n", who, iteration + 1,
                   times.back(), data.size());
    }
    barrier(d);  // no QP goes away while a partner still writes to it

    const AllreduceRuns runs{.bytes = o.size,
                             .ranks = ranks,
                             .times_ms = times,
                             .step_done_ms = step_done_ms,
                             .bytes_sent = d.bytes_sent,
                             .right = std::nullopt};
    fmt::print("{}", format_allreduce_report(who, runs));
    if (!o.json.empty())
        records::write_allreduce_records(o.json, runs,
                                         {.rank = o.rank,
                                          .segment = o.size,
                                          .slots = 1,
                                          .algorithm = "recursive doubling",
                                          .tool = "recursive-doubling 1"});
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("recursive-doubling", [&] {
        CommandLine cli{
            "A recursive-doubling allreduce (float32 sum) over RDMA WRITE WITH IMMEDIATE",
            "recursive-doubling"};
        DoublingOptions o;
        AllreduceCommandLine allreduce(cli, o, "64K");  // -s, -n, --json, --rank, --hosts, …
        cli.existing("--port").description("TCP port of rank 0's first link");
        cli.parse_or_exit(argc, argv);
        allreduce.check();
        const int ranks = static_cast<int>(o.hosts.size());
        if (o.port + ranks * doubling_links(ranks) > 65535)
            fail(fmt::format("--port {} leaves no room for {} ranks' links", o.port, ranks));
        return run(o);
    });
}
