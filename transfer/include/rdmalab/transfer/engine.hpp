// The transfer engine on verbs: one RDMA device per rail (its own PD, CQ and one or more RC QPs
// to the peer's device on that rail; slices take the rail's QPs in turn), memory registered on
// every rail, batches of READs and WRITEs cut into slices that go to whichever healthy rail the
// policy picks, and a notification to the target once every slice has landed. A failed completion
// takes its rail down: the QP's other slices flush, and every slice that had not landed is posted
// again on a rail still up (WRITE and READ of the same bytes are idempotent). The rail's other QPs
// keep what they hold until it completes or fails by their own retries (under ECMP a sibling's
// path may still work), or until twice that time has passed: then the engine gives up on them
// (a QP's work with no completion at all was seen on Linux 6.1's rxe). A rail
// that went down is tried again after a back-off: a fresh set of QPs on both sides (the
// application carries the endpoints, as it did at connect), then a WRITE of no bytes on the first
// as a probe; only when the probe completes does the rail take slices again. A batch fails only
// when no rail is up, and says why.
//
// The verbs are called here, in the open: ibv_open_device, ibv_alloc_pd, ibv_reg_mr,
// ibv_create_cq, ibv_create_qp, ibv_modify_qp, ibv_post_send, ibv_post_recv, ibv_poll_cq.
#pragma once

#include "rdmalab/port_address.hpp"
#include "rdmalab/transfer/plan.hpp"
#include "rdmalab/verbs.hpp"

#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rdmalab::transfer {

struct RailDevice {
    std::string device;  // e.g. rxe1; each rail its own device
    std::uint8_t port = 1;
    int gid_index = -1;  // -1: the port's RoCE v2 GID with an IPv4 address
};

struct Settings {
    std::uint32_t slice_bytes = 64 * 1024;
    RailPolicy policy = RailPolicy::kScore;
    std::uint32_t max_in_flight = 16;  // slices per rail, over all its QPs
    // RC QPs per rail, 1 to kMaxQpsPerRail: a NIC works on QPs in parallel, and each has its own
    // UDP source port, which an ECMP fabric hashes (one QP's packets all take one path).
    std::uint32_t qps_per_rail = 1;
    // How long a dead rail takes to be noticed: (retry_cnt + 1) × 4.096 µs × 2^timeout. 14 and
    // 3: 0.27 s. (NCCL's 20 and 7 would be 34 s; and rxe retries forever at retry_cnt 7.)
    std::uint8_t timeout = 14;
    std::uint8_t retry_cnt = 3;
    RailRetry retry{};  // when a down rail is tried again (with a renewal callback)
};

// How a rail's fresh QPs reach the peer: given this side's new endpoints for the rail (one per
// QP), the peer's (which has made fresh QPs of its own and connected them to ours, through
// Engine::renew_rail and Engine::reconnect_rail); throws when the peer cannot be reached.
using RenewRail = std::function<std::vector<RailEndpoint>(std::span<const RailEndpoint> ours)>;

using SegmentId = std::uint32_t;
using BatchId = std::uint32_t;

struct BatchStatus {
    BatchState state = BatchState::kPending;
    std::size_t slices = 0;
    std::size_t landed = 0;
    std::uint32_t reposted = 0;                 // slices posted again after their rail failed
    std::vector<std::uint64_t> bytes_per_rail;  // of the slices that landed, by rail
    std::string error;                          // when kFailed
};

// The access flags a segment is registered with: the remote access a peer needs
// (IBV_ACCESS_REMOTE_WRITE for a segment it writes into, IBV_ACCESS_REMOTE_READ for one it reads),
// plus LOCAL_WRITE where the NIC writes locally (a READ's destination) or remote write needs it.
// Nothing more. For Engine::register_segment, and for a caller that registers memory itself.
int segment_access(unsigned remote_access, bool local_write);

class Engine {
  public:
    Engine(std::vector<RailDevice> rails, const Settings& settings);
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;
    ~Engine();

    std::size_t rails() const { return rails_.size(); }
    std::uint32_t qps_per_rail() const { return settings_.qps_per_rail; }
    const PortAddress& port(std::size_t rail) const { return rails_[rail].port; }
    const std::string& device(std::size_t rail) const { return rails_[rail].device; }
    // The provider behind the rail's device, for records ("rxe", "mlx5").
    std::string provider(std::size_t rail) const;

    // Registers host memory on every rail with segment_access(remote_access, local_write).
    // (transfer-bench registers through gpu/'s ladder and add_registered_segment instead, so that
    // its bytes can be GPU memory.)
    SegmentId register_segment(std::span<std::byte> bytes, unsigned remote_access,
                               bool local_write);
    // Memory the caller registered itself, one MR per rail on that rail's protection domain
    // (GPU memory through dma-buf or peer memory: the registration ladder, gpu/memory.hpp), at
    // the address the NIC knows it by. The caller keeps the MRs and releases them before the
    // engine goes (its protection domains go with it).
    SegmentId add_registered_segment(std::uint64_t nic_address, std::size_t length,
                                     std::span<ibv_mr* const> per_rail);
    ibv_pd* protection_domain(std::size_t rail) const { return rails_[rail].pd.get(); }
    SegmentDescriptor describe(SegmentId segment) const;

    // This side's QPs on every rail, for the peer (rail by rail, each rail's QPs in order); then
    // the peer's, in the same order, to connect to.
    std::vector<RailEndpoint> endpoints() const;
    void connect(std::span<const RailEndpoint> peer);
    // A down rail is tried again only with this set (the initiator's side).
    void on_rail_renewal(RenewRail renew) { renew_ = std::move(renew); }
    // The peer's side of a renewal: fresh QPs for `rail` (the old ones, and whatever they still
    // held, destroyed), their endpoints to send back once connected with reconnect_rail.
    std::vector<RailEndpoint> renew_rail(std::size_t rail);
    // The fresh QPs of `rail` connected to the peer's; with `probe`, the rail is up once a WRITE
    // of no bytes completes on its first QP, else at once.
    void reconnect_rail(std::size_t rail, std::span<const RailEndpoint> peer, bool probe);
    // A segment of the peer's, described out of band: checked, then usable in requests.
    void add_remote_segment(const SegmentDescriptor& segment);

    // Checks every request against the segments, cuts them into slices and queues them; with
    // `notify`, the target hears the batch's id once every slice has landed — at least once: a
    // notification whose completion failed may still have arrived, and it is sent again on another
    // rail, so a target counts each batch's first notification only.
    BatchId submit(std::span<const Request> requests, bool notify);
    // Progress on every rail (completions, failovers, posts); the batch's state.
    BatchStatus poll(BatchId batch);
    // poll() until the batch completes or fails, or `timeout` passes (then throws).
    BatchStatus wait(BatchId batch, std::chrono::milliseconds timeout);
    // The target's side: the id of a batch whose notification arrived, if one did.
    std::optional<std::uint32_t> poll_notification();

    const Rails& rail_states() const { return rail_states_; }

  private:
    struct Rail {
        std::string device;
        std::uint8_t port_number = 1;
        int gid_index_asked =
            -1;  // as RailDevice asked: the port's address is chosen again on renewal
        Context context;
        PortAddress port;
        ProtectionDomain pd;
        CompletionQueue cq;
        std::vector<QueuePair> qps;  // the first also carries notifications and probes
        std::vector<std::uint32_t> psns;
        std::uint32_t next_qp = 0;  // the QP the rail's next slice takes
        std::uint8_t responder_depth = 1;
    };
    struct Segment {
        std::uint64_t address = 0;  // as the NIC addresses it: sge.addr here, remote_addr there
        std::size_t length = 0;
        std::vector<std::uint32_t> lkeys, rkeys;  // one each per rail
        std::vector<MemoryRegion> owned;          // register_segment's MRs (none for the caller's)
    };
    struct Batch {
        std::vector<Request> requests;
        BatchProgress progress;
        std::optional<std::size_t> notified_on;  // the rail the notification went out on
    };

    void create_qps(Rail& rail);
    void bring_up(Rail& rail, std::size_t index, std::span<const RailEndpoint> peer);
    std::vector<RailEndpoint> endpoints_of(std::size_t index) const;
    void connect_qp(Rail& rail, std::size_t index, std::size_t qp, const RailEndpoint& peer);
    void retry_due_rails();
    void give_up_stuck_rails();
    void post_probe(std::size_t rail);
    int post_empty_write(std::size_t rail, std::uint64_t wr_id, const SegmentDescriptor& remote,
                         std::optional<std::uint32_t> immediate = std::nullopt);
    void post_receives(std::size_t rail, std::uint32_t count);
    void post_slice(BatchId id, Batch& batch, std::uint32_t slice, std::size_t rail);
    bool post_notification(BatchId id, Batch& batch);
    void drain_completions(std::size_t rail);
    void post_waiting();

    Settings settings_;
    std::vector<Rail> rails_;
    Rails rail_states_;
    std::map<SegmentId, Segment> segments_;
    std::map<std::uint32_t, SegmentDescriptor> remote_segments_;
    std::map<BatchId, Batch> batches_;
    std::vector<std::uint32_t> notifications_;
    SegmentId next_segment_ = 1;
    BatchId next_batch_ = 1;
    bool connected_ = false;
    RenewRail renew_;
};

}  // namespace rdmalab::transfer
