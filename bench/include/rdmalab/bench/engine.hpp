// rdma-bench's measuring engine: the verbs objects of one configuration on one side (QPs, CQs,
// an optional SRQ and completion channel, one registered buffer in host or GPU memory) and the
// loops that measure — the initiator's windowed posting, the receiver's count, the ping-pong.
#pragma once

#include "rdmalab/bench/config.hpp"
#include "rdmalab/gpu/options.hpp"
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/verbs.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace rdmalab::bench {

enum class Side { kClient, kServer };

// The verbs QP type of a transport.
ibv_qp_type qp_type_of(Transport transport);

// The device a run uses, opened once: its port address, limits and provider.
struct BenchDevice {
    Context context;
    PortAddress port;
    ibv_device_attr attributes{};
    std::string name;      // "rxe0"
    std::string provider;  // the kernel driver behind it ("rdma_rxe", "mlx5_core"), or "unknown"
};
BenchDevice open_bench_device(const std::string& name, std::uint8_t port, int gid_index,
                              int tclass = -1);

// Rules that need the device: window vs max_qp_wr, UD size vs the path MTU, size vs
// max_msg_sz, SGEs, QPs, atomics support. Returns why the configuration cannot run here.
std::optional<std::string> device_problem(const BenchConfig& config, const BenchDevice& device,
                                          ibv_mtu path_mtu);
// Rules that need the memory kind of each side: a write ping-pong polls the buffer from the CPU,
// which GPU memory does not allow (send and write-imm ping-pongs wait on completions instead).
std::optional<std::string> memory_problem(const BenchConfig& config, gpu::MemoryKind client,
                                          gpu::MemoryKind server);

// What a side measured in one phase.
struct InitiatorResult {
    std::uint64_t ops = 0;  // WRs completed, all QPs
    double seconds = 0;     // first post to last completion
    std::vector<std::uint64_t> per_qp;
};
struct ReceiverResult {
    std::uint64_t messages = 0;
    std::uint64_t bytes = 0;  // payload bytes (without the UD GRH area)
    double seconds = 0;       // first to last receive
};

// Limits every wait in a phase: no completion for `idle` is an error, and so is a phase that
// runs longer than `phase` (a guard for a peer that makes progress too slowly to finish).
struct Limits {
    std::chrono::milliseconds idle{10'000};
    std::chrono::milliseconds phase{300'000};
};

// How the initiator posts: ibv_post_send with prepared ibv_send_wr chains (classic), or the
// extended API — ibv_wr_start, ibv_wr_<operation>, ibv_wr_set_sge_list, ibv_wr_complete — on a QP
// made by ibv_create_qp_ex (--api ex).
enum class PostApi { kClassic, kExtended };
const char* post_api_name(PostApi api);  // "classic", "ex"

class Engine {
  public:
    // Creates PD, CQs (and channel), SRQ, QPs (RESET→INIT) and allocates the buffer in the memory
    // asked for, registered by the GPU layer's ladder (host memory: as it is) with only the access
    // this side's role needs; throws (one line) if the device or the memory refuses any of it.
    // stage_each_message: on the staging path, copy between the GPU and the bounce buffer for
    // every message, inside the timed loops (where this side has a per-message moment: see
    // staging_copies()), instead of once per phase outside them.
    Engine(BenchDevice& device, const BenchConfig& config, Side side,
           const gpu::MemoryOptions& memory = {}, bool stage_each_message = false,
           PostApi api = PostApi::kClassic);
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;
    ~Engine();

    // This side's QPs as endpoint records, each advertising the slot the peer accesses.
    std::vector<QpEndpoint> local_endpoints() const;
    // How many READs/atomics this side serves per QP (sent to the peer, which may not exceed it).
    std::uint8_t responder_depth() const;
    // INIT→RTR→RTS against the peer's endpoints (UD: an address handle), then posts receives.
    void connect(std::span<const QpEndpoint> remote, std::uint8_t peer_responder_depth);

    // Bandwidth, initiator side: per_qp operations on every QP (or, with duration > 0, as many as
    // fit in it, rounded up to whole signal intervals), window WRs outstanding per QP.
    InitiatorResult run_initiator(std::uint64_t per_qp, double duration_s, const Limits& limits);
    // Bandwidth, receiving side (send, write-imm): counts receives and reposts them until
    // `expected()` (polled while idle) returns the per-QP counts the peer sent and all have
    // arrived — or, on UC and UD, until nothing arrives for a short grace period (losses).
    ReceiverResult run_receiver(
        const std::function<std::optional<std::vector<std::uint64_t>>()>& expected,
        const Limits& limits);

    // Latency: `count` round trips. The client returns one sample (ns) per round trip; the
    // server answers each (send, write-imm, write) or returns at once (read, atomics).
    std::vector<double> run_ping(std::uint64_t count, const Limits& limits);
    void run_pong(std::uint64_t count, const Limits& limits);

    // Zeroes the destination slot and the atomic counter before a phase (where the NIC sees it:
    // a staged buffer's bounce copy too, so a phase that moves nothing cannot pass the check).
    void clear_destination();
    // After a bandwidth phase: the bytes that were moved equal the sender's pattern and the rest
    // of the slot is still zero (write, write-imm and send checked at the server, read at the
    // client; in GPU memory by a GPU kernel, after the path made the NIC's writes visible).
    std::optional<std::string> verify_destination();
    // The 8-byte counter the atomics target (server side).
    std::uint64_t atomic_counter();

    // How the buffer is registered: the path taken and the ladder's report lines.
    gpu::Path memory_path() const { return registered_->path(); }
    const std::vector<std::string>& memory_report() const { return registered_->report(); }
    std::string memory_description() const { return memory_.description(); }
    // When this side's staging copies run: "none" (not the staging path), "per phase" (outside the
    // timed loops), or "per message" (inside them: before each message the NIC reads, after each
    // one it wrote that this side learns of — not for a write's or read's target, atomics, or a
    // write ping-pong, which keep "per phase").
    const char* staging_copies_mode() const;
    // Copies made inside the timed loop of the last phase (per message only).
    std::uint64_t staging_copies() const { return staging_copies_; }

  private:
    struct Queue;  // one QP with its prepared send chain and receive chain
    // Set-up, in the constructor's order: CQs (and channel), the registered buffer, each QP.
    void create_completion_queues(std::uint64_t entries);
    void register_buffer(const gpu::MemoryOptions& memory);
    Queue create_queue(std::uint32_t index);
    void prepare_send_chain(Queue& queue);
    void prepare_receive_chain(Queue& queue, std::uint32_t index);
    // The hot path: one WR, or a post list of count WRs, per doorbell (see bench-post).
    unsigned send_flags(Queue& queue, std::uint64_t seq, std::uint64_t last_seq) const;
    void post_one(Queue& queue, std::uint64_t seq, std::uint64_t last_seq);
    void post_one_extended(Queue& queue, std::uint64_t seq, std::uint64_t last_seq);
    void post_batch_extended(Queue& queue, std::uint64_t first_seq, std::uint32_t count,
                             std::uint64_t last_seq);
    void post_single(Queue& queue, std::uint64_t seq);  // a ping-pong's one signaled WR
    void post_send_batch(Queue& queue, std::uint64_t first_seq, std::uint32_t count,
                         std::uint64_t last_seq);
    // Per-message staging: count messages' source copied GPU → bounce before the NIC reads it, or
    // count messages' destination copied bounce → GPU (and waited for) after the NIC wrote it.
    void stage_sources(std::uint64_t count);
    void stage_destinations(std::uint64_t count);
    void post_receives(Queue& queue, std::uint32_t count);
    void post_srq_receives(std::uint32_t count);
    void repost(std::vector<std::uint32_t>& pending);
    // Polls every CQ once; returns the number of completions written to wcs (up to wcs.size()).
    int poll_all(std::span<ibv_wc> wcs);
    // Completion channel: arms every CQ, re-polls, then sleeps until an event (or up to timeout).
    void wait_for_event(std::chrono::milliseconds timeout);
    [[noreturn]] void fail_completion(const ibv_wc& wc) const;
    // The latency loops' shared steps: process completions until done() holds, or wait for the
    // peer's stamp in the last byte of the destination (write); both bounded by the limits.
    struct PingPong;
    PingPong ping_pong_state(std::uint64_t count);
    template <typename Done>
    void complete_until(Done done, PingPong& state, std::uint64_t round, const Limits& limits,
                        const char* waiting_for);
    void await_stamp(const PingPong& state, std::uint64_t round, const Limits& limits,
                     const char* waiting_for) const;
    std::uint32_t queue_index(const ibv_wc& wc) const;

    BenchDevice& device_;
    BenchConfig config_;
    const Operation& operation_;  // config_.op's row: what this engine asks of the operation
    Side side_;
    std::uint64_t slot_stride_ = 0;
    std::uint32_t receive_depth_ = 0;  // per QP (or the SRQ's total)
    std::uint32_t send_depth_ = 0;
    unsigned access_ = 0;  // what the peer may do to this side's memory
    bool stage_each_message_ =
        false;  // per-message staging copies, where this side has the moments
    std::uint64_t staging_copies_ = 0;
    PostApi api_ = PostApi::kClassic;

    // Declared in creation order so they are released in reverse.
    gpu::DeviceMemory memory_;  // two slots: the source, then the destination
    ProtectionDomain pd_;
    CompletionChannel channel_;
    std::vector<CompletionQueue> cqs_;
    SharedReceiveQueue srq_;
    std::optional<gpu::RegisteredMemory> registered_;
    std::vector<Queue> queues_;
    AddressHandle ah_;
    std::unordered_map<std::uint32_t, std::uint32_t> index_of_qpn_;
    std::vector<ibv_recv_wr> srq_chain_;
    std::vector<ibv_sge> srq_sges_;
    std::vector<bool> armed_;
};

}  // namespace rdmalab::bench
