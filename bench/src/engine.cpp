// The measuring engine: verbs objects of one configuration and the loops; see engine.hpp.
// The hot loops post prepared WR chains and poll in batches: they cost what the verbs cost.
#include "rdmalab/bench/engine.hpp"

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/ud_datagrams.hpp"
#include "rdmalab/verbs_names.hpp"

#include <fmt/core.h>
#include <poll.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cstring>
#include <limits>

namespace rdmalab::bench {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kUdQkey = 0x52444c42;  // "RDLB": both sides' UD QPs use it
constexpr std::uint32_t kPollBatch = 32;       // completions per ibv_poll_cq; also the repost chain
constexpr std::uint64_t kSeqMask = (std::uint64_t{1} << 48) - 1;
constexpr std::uint8_t kMaxReadCredits = 16;
// UC and UD give no acknowledgement: once the sender is done, a receiver that sees nothing for
// this long has seen everything that will arrive.
constexpr std::chrono::milliseconds kUnreliableGrace{300};

double nanoseconds_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::nano>(b - a).count();
}

std::uint64_t wr_id(std::uint32_t queue, std::uint64_t seq) {
    return std::uint64_t{queue} << 48 | seq;
}

// The extended API's version of a prepared WR: the operation with its remote half (UD: its
// destination after it), then its data (inline data is copied by the provider now; SGEs are read
// by the NIC later).
[[gnu::always_inline]] inline void build_extended(ibv_qp_ex* qpx, ExtendedCall call,
                                                  const ibv_send_wr& wr, std::uint32_t imm,
                                                  bool inline_data, bool ud) {
    call(qpx, wr, imm);
    if (ud) ibv_wr_set_ud_addr(qpx, wr.wr.ud.ah, wr.wr.ud.remote_qpn, wr.wr.ud.remote_qkey);
    if (inline_data) {
        std::array<ibv_data_buf, 32> buffers{};
        for (int i = 0; i < wr.num_sge; ++i)
            buffers[static_cast<std::size_t>(i)] = {
                reinterpret_cast<void*>(static_cast<std::uintptr_t>(wr.sg_list[i].addr)),
                wr.sg_list[i].length};
        ibv_wr_set_inline_data_list(qpx, static_cast<std::size_t>(wr.num_sge), buffers.data());
    } else {
        ibv_wr_set_sge_list(qpx, static_cast<std::size_t>(wr.num_sge), wr.sg_list);
    }
}

// Whether this side's memory is written by the peer or by its own receives/READs/atomics.
bool is_target(const BenchConfig& c, Side side) {
    // A latency ping-pong the target answers (write, send, write-imm) is symmetric: both sides
    // are targets.
    bool symmetric = c.mode == Mode::kLatency && operation(c.op).reply != Reply::kCompletion;
    return side == Side::kServer || symmetric;
}

bool side_receives(const BenchConfig& c, Side side) {
    return operation(c.op).target_receives() && is_target(c, side);
}

// What the records call the provider: software providers are named for what they are.
std::string provider_label(const std::string& provider) {
    if (provider == "rxe") return "rxe (Soft-RoCE)";
    if (provider == "siw") return "siw (Soft-iWARP)";
    return provider;
}

std::uint32_t clamp_u32(std::uint64_t value, std::uint64_t low, std::uint64_t high) {
    return static_cast<std::uint32_t>(std::clamp(value, low, high));
}

// Queue depths of one side: send WRs per QP, receives per QP (or the SRQ's total), and the
// entries one CQ needs to hold every completion that can be outstanding at once.
struct Depths {
    std::uint32_t send = 0;
    std::uint32_t receive = 0;
    std::uint64_t cq_entries = 0;
};

Depths depths_for(const BenchConfig& c, Side side, const ibv_device_attr& attrs) {
    Depths d;
    const bool latency = c.mode == Mode::kLatency;
    d.send = latency ? 4 : (side == Side::kClient ? c.window : 1);
    if (side_receives(c, side))
        d.receive = latency ? 16
                            : clamp_u32(2ull * c.window, 64,
                                        static_cast<std::uint64_t>(std::max(attrs.max_qp_wr, 1)));
    if (c.srq)
        d.receive = clamp_u32(std::uint64_t{d.receive} * c.qps, 1,
                              static_cast<std::uint64_t>(std::max(attrs.max_srq_wr, 1)));
    std::uint64_t per_qp = d.send + (c.srq ? 0 : d.receive);
    d.cq_entries = (c.shared_cq ? per_qp * c.qps : per_qp) + (c.srq ? d.receive : 0);
    return d;
}

}  // namespace

const char* post_api_name(PostApi api) {
    return api == PostApi::kExtended ? "ex" : "classic";
}

ibv_qp_type qp_type_of(Transport t) {
    switch (t) {
        case Transport::kRC:
            return IBV_QPT_RC;
        case Transport::kUC:
            return IBV_QPT_UC;
        case Transport::kUD:
            return IBV_QPT_UD;
    }
    return IBV_QPT_RC;
}

// ---- Device.

BenchDevice open_bench_device(const std::string& name, std::uint8_t port, int gid_index,
                              int tclass) {
    BenchDevice device;
    device.context = open_device(name);
    device.port = choose_port_address(device.context.get(), port, gid_index);
    apply_traffic_class(device.port, tclass);  // into every QP this side connects
    check_ibv(ibv_query_device(device.context.get(), &device.attributes), "ibv_query_device");
    device.name = ibv_get_device_name(device.context->device);
    device.provider = provider_label(provider_name(device.context.get()));
    return device;
}

std::optional<std::string> device_problem(const BenchConfig& c, const BenchDevice& device,
                                          ibv_mtu path_mtu) {
    const ibv_device_attr& a = device.attributes;
    const std::string& dev = device.name;
    if (c.transport == Transport::kUD && c.size > static_cast<std::uint64_t>(mtu_bytes(path_mtu)))
        return fmt::format(
            "UD message of {} B exceeds the path MTU ({} B): a datagram is one packet", c.size,
            mtu_bytes(path_mtu));
    if (c.size > device.port.max_message_size)
        return fmt::format("{} B exceeds {}'s largest message ({} B)", c.size, dev,
                           device.port.max_message_size);
    if (static_cast<int>(c.window) > a.max_qp_wr)
        return fmt::format("window {} exceeds {}'s max_qp_wr ({})", c.window, dev, a.max_qp_wr);
    if (static_cast<int>(c.sge) > a.max_sge)
        return fmt::format("--sge {} exceeds {}'s max_sge ({})", c.sge, dev, a.max_sge);
    if (static_cast<int>(c.qps) > a.max_qp)
        return fmt::format("-q {} exceeds {}'s max_qp ({})", c.qps, dev, a.max_qp);
    if (operation(c.op).atomic && a.atomic_cap == IBV_ATOMIC_NONE)
        return fmt::format("{} has no atomics (atomic_cap NONE)", dev);
    if (operation(c.op).lands_at_initiator && (a.max_qp_rd_atom == 0 || a.max_qp_init_rd_atom == 0))
        return fmt::format("{} allows no outstanding READ/atomic (max_qp_rd_atom 0)", dev);
    if (c.srq && a.max_srq == 0) return fmt::format("{} has no shared receive queues", dev);
    for (Side side : {Side::kClient, Side::kServer}) {
        std::uint64_t entries = depths_for(c, side, a).cq_entries;
        if (entries > static_cast<std::uint64_t>(a.max_cqe))
            return fmt::format(
                "window {} × {} QP(s) needs a CQ of {} entries; {} allows {} (max_cqe)", c.window,
                c.shared_cq ? c.qps : 1, entries, dev, a.max_cqe);
    }
    return std::nullopt;
}

std::optional<std::string> memory_problem(const BenchConfig& c, gpu::MemoryKind client,
                                          gpu::MemoryKind server) {
    if (c.mode != Mode::kLatency || operation(c.op).reply != Reply::kStamp) return std::nullopt;
    for (auto [side, kind] : {std::pair{"client", client}, std::pair{"server", server}})
        if (kind != gpu::MemoryKind::kHost)
            return fmt::format(
                "a write ping-pong polls its buffer's last byte from the CPU, and the {}'s buffer "
                "is {} memory: "
                "measure GPU latency with -o write-imm or send (their ping-pong waits on "
                "completions)",
                side, gpu::kind_name(kind));
    return std::nullopt;
}

// ---- One QP and its prepared chains.

struct Engine::Queue {
    QueuePair qp;
    ibv_qp_ex* qpx = nullptr;  // the same QP's extended interface (--api ex), else null
    bool ud = false;           // a UD QP: every WR names its destination
    std::uint32_t cq = 0;
    std::uint32_t remote_qpn = 0;
    std::uint32_t psn = 0;
    std::vector<ibv_send_wr> send_chain;  // post_list WRs linked by next
    std::vector<ibv_sge> send_sges;       // sge entries per WR
    std::vector<ibv_recv_wr> recv_chain;  // kPollBatch receives linked by next
    std::vector<ibv_sge> recv_sges;
    ExtendedCall extended_call = nullptr;  // --api ex: the ibv_wr_* call of the operation
    std::uint64_t wr_id_base = 0;          // the QP's index in wr_id's top 16 bits
    unsigned base_flags = 0;               // IBV_SEND_INLINE when this configuration inlines
    bool stamp_immediate = false;          // write-imm: each WR carries its sequence number
    std::uint64_t next_signaled = 0;       // the sequence number of the next WR that asks for a CQE
};

Engine::Engine(BenchDevice& device, const BenchConfig& config, Side side,
               const gpu::MemoryOptions& memory, bool stage_each_message, PostApi api)
    : device_(device),
      config_(config),
      operation_(operation(config.op)),
      side_(side),
      slot_stride_((config.slot_bytes() + 63) / 64 * 64),
      memory_(memory.memory, 2 * slot_stride_) {
    const gpu::MemoryKind kind = memory.memory.kind, host = gpu::MemoryKind::kHost;
    if (auto why = memory_problem(config, side == Side::kClient ? kind : host,
                                  side == Side::kServer ? kind : host))
        fail(*why);
    api_ = api;
    // Seen in the lab: rxe's ibv_wr_set_inline_data(_list) leaves the WQE's residual length at 0,
    // so the payload is never sent (the data check fails). Refused rather than mis-measured.
    if (api == PostApi::kExtended && config.inline_size > 0 && config.size <= config.inline_size &&
        device.provider.starts_with("rxe"))
        fail(
            "--api ex with inline data (-I): rxe's ibv_wr_set_inline_data sends no payload "
            "(seen here: the receiver's data check fails); measure inline with --api classic");
    const Depths depths = depths_for(config, side, device.attributes);
    send_depth_ = depths.send;
    receive_depth_ = depths.receive;

    pd_.reset(check_ptr(ibv_alloc_pd(device.context.get()), "ibv_alloc_pd"));
    create_completion_queues(depths.cq_entries);
    if (config.srq && side_receives(config, side)) {
        ibv_srq_init_attr srq_attr{};
        srq_attr.attr.max_wr = receive_depth_;
        srq_attr.attr.max_sge = 1;
        srq_.reset(check_ptr(ibv_create_srq(pd_.get(), &srq_attr), "ibv_create_srq"));
    }
    register_buffer(memory);
    // Per-message staging needs a moment per message on this side: the initiator's posts and
    // completions, the receiver's receives, both ends of a send/write-imm ping-pong.
    const bool latency = config.mode == Mode::kLatency;
    const bool one_sided_target =
        side == Side::kServer && !operation_.target_receives() && !latency;
    stage_each_message_ = stage_each_message && registered_->path() == gpu::Path::kStaging &&
                          !one_sided_target && !operation_.atomic &&
                          !(latency && operation_.reply != Reply::kReceive);

    for (std::uint32_t i = 0; i < config.qps; ++i) queues_.push_back(create_queue(i));
    if (srq_) {  // the SRQ's chain: the first QP's, pointing at its own SGEs
        srq_chain_ = queues_[0].recv_chain;
        srq_sges_ = queues_[0].recv_sges;
        for (std::uint32_t r = 0; r < kPollBatch; ++r) {
            srq_chain_[r].sg_list = &srq_sges_[r];
            srq_chain_[r].next = r + 1 < kPollBatch ? &srq_chain_[r + 1] : nullptr;
        }
    }
}

// One CQ per QP, or one for all: each must hold every completion that can be outstanding.
void Engine::create_completion_queues(std::uint64_t entries) {
    ibv_context* context = device_.context.get();
    if (config_.events)
        channel_.reset(check_ptr(ibv_create_comp_channel(context), "ibv_create_comp_channel"));
    if (entries > static_cast<std::uint64_t>(device_.attributes.max_cqe))
        fail(fmt::format("a CQ would need {} entries; {} allows {}", entries, device_.name,
                         device_.attributes.max_cqe));
    const std::uint32_t count = config_.shared_cq ? 1 : config_.qps;
    for (std::uint32_t i = 0; i < count; ++i)
        cqs_.emplace_back(
            check_ptr(ibv_create_cq(context, static_cast<int>(entries), nullptr, channel_.get(), 0),
                      "ibv_create_cq"));
    armed_.assign(count, false);
}

void Engine::register_buffer(const gpu::MemoryOptions& memory) {
    // #region bench-register
    // Least privilege: a side that is only an initiator registers LOCAL_WRITE only if READ results
    // or atomic return values land in its memory, and nothing at all for write and send.
    unsigned mr_access = 0;
    if (is_target(config_, side_)) {
        access_ = operation_.target_access;
        mr_access = access_ | (operation_.lands_at_target ? unsigned{IBV_ACCESS_LOCAL_WRITE} : 0u);
    } else if (operation_.lands_at_initiator) {
        mr_access = IBV_ACCESS_LOCAL_WRITE;
    }
    registered_.emplace(
        gpu::register_memory(pd_.get(), memory_, static_cast<int>(mr_access), memory.path));
    // The sender's pattern (source slot), written by a kernel in GPU memory; the receiver compares
    // its destination slot with it. The NIC reads the source only after the fill has finished
    // (staging: after it was copied into the bounce buffer, once, outside every timed loop).
    memory_.fill_pattern(config_.size, config_.size);
    registered_->before_nic_reads(config_.size);
    // #endregion bench-register
}

Engine::Queue Engine::create_queue(std::uint32_t index) {
    Queue queue;
    queue.cq = config_.shared_cq ? 0 : index;
    ibv_qp_init_attr init{};
    init.send_cq = cqs_[queue.cq].get();
    init.recv_cq = cqs_[queue.cq].get();
    init.srq = srq_.get();
    init.qp_type = qp_type_of(config_.transport);
    init.cap.max_send_wr = send_depth_;
    init.cap.max_recv_wr = srq_ ? 0 : std::max<std::uint32_t>(receive_depth_, 1);
    init.cap.max_send_sge = config_.sge;
    init.cap.max_recv_sge = 1;
    init.cap.max_inline_data = config_.inline_size;
    if (api_ == PostApi::kExtended) {
        // The extended QP names up front the one operation the ibv_wr_* calls will post.
        ibv_qp_init_attr_ex extended{};
        extended.send_cq = init.send_cq;
        extended.recv_cq = init.recv_cq;
        extended.srq = init.srq;
        extended.qp_type = init.qp_type;
        extended.cap = init.cap;
        extended.pd = pd_.get();
        extended.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
        extended.send_ops_flags = operation_.extended_flag;
        queue.qp.reset(ibv_create_qp_ex(device_.context.get(), &extended));
        if (queue.qp) queue.qpx = ibv_qp_to_qp_ex(queue.qp.get());
    } else {
        queue.qp.reset(ibv_create_qp(pd_.get(), &init));
    }
    if (!queue.qp)
        fail(fmt::format("{} ({} QP {} of {}, send {} WRs × {} SGE, inline {} B): {}",
                         api_ == PostApi::kExtended ? "ibv_create_qp_ex" : "ibv_create_qp",
                         transport_name(config_.transport), index + 1, config_.qps, send_depth_,
                         config_.sge, config_.inline_size, std::strerror(errno)));
    index_of_qpn_[queue.qp->qp_num] = index;
    queue.wr_id_base = wr_id(index, 0);
    queue.base_flags = config_.inline_size > 0 && config_.size <= config_.inline_size
                           ? unsigned{IBV_SEND_INLINE}
                           : 0u;
    queue.stamp_immediate = operation_.carries_immediate;
    queue.extended_call = operation_.extended_call;
    queue.ud = config_.transport == Transport::kUD;
    queue.psn = random_psn();

    // RESET→INIT: UD names its Q_Key; RC/UC name what the peer may do through this QP.
    QpTransition to_init = config_.transport == Transport::kUD
                               ? ud_init_transition(device_.port, kUdQkey)
                               : init_transition(device_.port, access_);
    check_ibv(ibv_modify_qp(queue.qp.get(), &to_init.attributes, to_init.mask),
              "ibv_modify_qp (RESET→INIT)");
    prepare_send_chain(queue);
    prepare_receive_chain(queue, index);
    return queue;
}

// post_list WRs linked by next, each with `sge` pieces of the message. Work requests address the
// buffer as the NIC knows it: the GPU address (or dma-buf iova), the bounce buffer, or the host
// buffer. READ results and atomic return values land in the destination slot.
void Engine::prepare_send_chain(Queue& queue) {
    const std::uint64_t nic_base = registered_->nic_address();
    const std::uint64_t base = nic_base + (operation_.lands_at_initiator ? slot_stride_ : 0);
    const std::uint32_t wrs = config_.mode == Mode::kLatency ? 1 : config_.post_list;
    const std::uint64_t piece = config_.size / config_.sge;
    queue.send_chain.resize(wrs);
    queue.send_sges.resize(std::size_t{wrs} * config_.sge);
    for (std::uint32_t w = 0; w < wrs; ++w) {
        ibv_send_wr& wr = queue.send_chain[w];
        wr.opcode = operation_.opcode;
        wr.num_sge = static_cast<int>(config_.sge);
        wr.sg_list = &queue.send_sges[std::size_t{w} * config_.sge];
        wr.next = w + 1 < wrs ? &queue.send_chain[w + 1] : nullptr;
        for (std::uint32_t s = 0; s < config_.sge; ++s) {
            ibv_sge& sge = wr.sg_list[s];
            sge.addr = base + s * piece;
            sge.length =
                static_cast<std::uint32_t>(s + 1 < config_.sge ? piece : config_.size - s * piece);
            sge.lkey = registered_->lkey();
        }
    }
}

// kPollBatch receives linked by next, each landing in the destination slot (zero SGEs for
// write-imm, whose data goes where the sender wrote it); wr_id is the QP's index.
void Engine::prepare_receive_chain(Queue& queue, std::uint32_t index) {
    const std::uint64_t destination = registered_->nic_address() + slot_stride_;
    queue.recv_chain.resize(kPollBatch);
    queue.recv_sges.resize(kPollBatch);
    for (std::uint32_t r = 0; r < kPollBatch; ++r) {
        ibv_recv_wr& wr = queue.recv_chain[r];
        wr.wr_id = index;
        wr.next = r + 1 < kPollBatch ? &queue.recv_chain[r + 1] : nullptr;
        wr.num_sge = operation_.data_in_receive() ? 1 : 0;
        wr.sg_list = &queue.recv_sges[r];
        queue.recv_sges[r] = {destination, static_cast<std::uint32_t>(config_.slot_bytes()),
                              registered_->lkey()};
    }
}

Engine::~Engine() = default;

std::uint8_t Engine::responder_depth() const {
    return static_cast<std::uint8_t>(
        std::min<int>(kMaxReadCredits, device_.attributes.max_qp_rd_atom));
}

std::vector<QpEndpoint> Engine::local_endpoints() const {
    // The peer writes the destination slot (its data, its atomics) or reads the source slot.
    std::uint64_t slot = operation_.lands_at_target ? slot_stride_ : 0;
    std::vector<QpEndpoint> endpoints;
    for (const Queue& queue : queues_) {
        QpEndpoint e;
        e.qp_type = qp_type_of(config_.transport);
        e.link_layer = device_.port.link_layer;
        e.active_mtu = device_.port.active_mtu;
        e.qpn = queue.qp->qp_num;
        e.psn = queue.psn;
        e.lid = device_.port.lid;
        e.gid = device_.port.gid;
        e.address = registered_->nic_address() + slot;
        e.rkey = registered_->rkey();
        e.length = static_cast<std::uint32_t>(config_.slot_bytes());
        if (e.qp_type == IBV_QPT_UD) e.qkey = kUdQkey;
        endpoints.push_back(e);
    }
    return endpoints;
}

void Engine::connect(std::span<const QpEndpoint> remote, std::uint8_t peer_responder_depth) {
    if (remote.size() != queues_.size())
        fail(fmt::format("the peer has {} QPs, this side {}", remote.size(), queues_.size()));
    Reliability reliability;
    reliability.rnr_retry = 7;      // a bench receiver may fall behind: wait for it, never fail
    reliability.min_rnr_timer = 1;  // … and retry soon (0.01 ms)
    reliability.max_dest_rd_atomic = responder_depth();
    reliability.max_rd_atomic = static_cast<std::uint8_t>(std::min<int>(
        {kMaxReadCredits, device_.attributes.max_qp_init_rd_atom, peer_responder_depth}));
    for (std::size_t i = 0; i < queues_.size(); ++i) {
        Queue& queue = queues_[i];
        const QpEndpoint& peer = remote[i];
        if (peer.length < config_.size)
            fail(fmt::format("the peer's buffer holds {} B, less than a {}-byte message",
                             peer.length, config_.size));
        queue.remote_qpn = peer.qpn;
        const ibv_qp_type type = qp_type_of(config_.transport);
        QpTransition rtr = rtr_transition(type, device_.port, peer, reliability);
        check_ibv(ibv_modify_qp(queue.qp.get(), &rtr.attributes, rtr.mask),
                  "ibv_modify_qp (INIT→RTR)");
        QpTransition rts = rts_transition(type, queue.psn, reliability);
        check_ibv(ibv_modify_qp(queue.qp.get(), &rts.attributes, rts.mask),
                  "ibv_modify_qp (RTR→RTS)");
        if (type == IBV_QPT_UD && !ah_) {  // one address handle names the peer's port
            ibv_ah_attr av = address_vector(device_.port, peer);
            ah_.reset(check_ptr(ibv_create_ah(pd_.get(), &av), "ibv_create_ah"));
        }
        for (ibv_send_wr& wr : queue.send_chain) {
            if (type == IBV_QPT_UD) {
                wr.wr.ud.ah = ah_.get();
                wr.wr.ud.remote_qpn = peer.qpn;
                wr.wr.ud.remote_qkey = peer.qkey;  // the key the peer's QP accepts
            } else if (operation_.atomic) {
                wr.wr.atomic.remote_addr = peer.address;
                wr.wr.atomic.rkey = peer.rkey;
                wr.wr.atomic.compare_add = operation_.atomic_compare_add;
                wr.wr.atomic.swap = 0;  // compare 0, swap 0: succeeds without changing the counter
            } else {
                wr.wr.rdma.remote_addr = peer.address;
                wr.wr.rdma.rkey = peer.rkey;
            }
        }
    }
    if (receive_depth_ == 0) return;
    if (srq_) {
        for (std::uint32_t posted = 0; posted < receive_depth_; posted += kPollBatch)
            post_srq_receives(std::min(kPollBatch, receive_depth_ - posted));
    } else {
        for (Queue& queue : queues_)
            for (std::uint32_t posted = 0; posted < receive_depth_; posted += kPollBatch)
                post_receives(queue, std::min(kPollBatch, receive_depth_ - posted));
    }
}

// ---- Posting.

// ---- Staging copies (the GPU staging path only).

const char* Engine::staging_copies_mode() const {
    if (registered_->path() != gpu::Path::kStaging) return "none";
    return stage_each_message_ ? "per message" : "per phase";
}

void Engine::stage_sources(std::uint64_t count) {
    for (std::uint64_t i = 0; i < count; ++i) registered_->before_nic_reads(config_.size);
    staging_copies_ += count;
}

void Engine::stage_destinations(std::uint64_t count) {
    const std::size_t offset = slot_stride_ + (config_.transport == Transport::kUD ? kGrhBytes : 0);
    for (std::uint64_t i = 0; i < count; ++i) {
        registered_->after_nic_writes(config_.size, offset);
        memory_
            .synchronize();  // the copy is queued on the GPU's stream: its cost is waiting for it
    }
    staging_copies_ += count;
}

// The hot path. One WR in signal_every asks for a completion, and the last one always does, so
// the initiator sees the end; the sequence number of the next signaled WR is kept, so deciding
// costs one comparison, not a division. Inlined into the loops: a call per post would cost more
// than the work it does.

// A WR's flags: the queue's own (inline, when it inlines), plus SIGNALED for one WR in signal_every
// and for the last one.
[[gnu::always_inline]] inline unsigned Engine::send_flags(Queue& queue, std::uint64_t seq,
                                                          std::uint64_t last_seq) const {
    unsigned flags = queue.base_flags;
    if (seq == queue.next_signaled || seq == last_seq) [[unlikely]] {
        flags |= IBV_SEND_SIGNALED;
        queue.next_signaled = seq + config_.signal_every;
    }
    return flags;
}

// One WR per doorbell (post list 1, the default): fill in its id and flags, post it.
[[gnu::always_inline]] inline void Engine::post_one(Queue& queue, std::uint64_t seq,
                                                    std::uint64_t last_seq) {
    ibv_send_wr& wr = queue.send_chain.front();
    wr.wr_id = queue.wr_id_base | seq;
    wr.send_flags = send_flags(queue, seq, last_seq);
    if (queue.stamp_immediate) wr.imm_data = to_be32(static_cast<std::uint32_t>(seq));
    ibv_send_wr* bad = nullptr;
    if (const int rc = ibv_post_send(queue.qp.get(), &wr, &bad); rc != 0) [[unlikely]]
        check_ibv(rc, "ibv_post_send");
}

// #region bench-post
// A post list: `count` WRs of the prepared chain, one doorbell.
[[gnu::always_inline]] inline void Engine::post_send_batch(Queue& queue, std::uint64_t first_seq,
                                                           std::uint32_t count,
                                                           std::uint64_t last_seq) {
    ibv_send_wr* const chain = queue.send_chain.data();
    for (std::uint32_t w = 0; w < count; ++w) {
        const std::uint64_t seq = first_seq + w;
        chain[w].wr_id = queue.wr_id_base | seq;
        chain[w].send_flags = send_flags(queue, seq, last_seq);
        if (queue.stamp_immediate) chain[w].imm_data = to_be32(static_cast<std::uint32_t>(seq));
    }
    // A batch shorter than the chain: cut the chain after it, and mend it after the post.
    ibv_send_wr* const cut = count < queue.send_chain.size() ? &chain[count - 1] : nullptr;
    if (cut) [[unlikely]]
        cut->next = nullptr;
    ibv_send_wr* bad = nullptr;
    const int rc = ibv_post_send(queue.qp.get(), chain, &bad);
    if (cut) [[unlikely]]
        cut->next = cut + 1;
    if (rc != 0) [[unlikely]]
        check_ibv(rc, "ibv_post_send");
}
// #endregion bench-post

// #region bench-post-extended
// --api ex: the same WR built by the extended API. Between ibv_wr_start and ibv_wr_complete the
// provider writes the WQE as each ibv_wr_* call names a part of it; nothing is copied from an
// ibv_send_wr.
[[gnu::always_inline]] inline void Engine::post_one_extended(Queue& queue, std::uint64_t seq,
                                                             std::uint64_t last_seq) {
    ibv_qp_ex* const qpx = queue.qpx;
    ibv_wr_start(qpx);
    qpx->wr_id = queue.wr_id_base | seq;
    qpx->wr_flags = send_flags(queue, seq, last_seq);  // IBV_SEND_INLINE too: rxe reads it here
    build_extended(qpx, queue.extended_call, queue.send_chain.front(),
                   queue.stamp_immediate ? to_be32(static_cast<std::uint32_t>(seq)) : 0,
                   queue.base_flags & IBV_SEND_INLINE, queue.ud);
    if (const int rc = ibv_wr_complete(qpx); rc != 0) [[unlikely]]
        check_ibv(rc, "ibv_wr_complete");
}

// A post list: count WRs between one ibv_wr_start and one ibv_wr_complete (one doorbell).
void Engine::post_batch_extended(Queue& queue, std::uint64_t first_seq, std::uint32_t count,
                                 std::uint64_t last_seq) {
    ibv_qp_ex* const qpx = queue.qpx;
    ibv_wr_start(qpx);
    for (std::uint32_t w = 0; w < count; ++w) {
        const std::uint64_t seq = first_seq + w;
        qpx->wr_id = queue.wr_id_base | seq;
        qpx->wr_flags = send_flags(queue, seq, last_seq);
        build_extended(qpx, queue.extended_call, queue.send_chain[w],
                       queue.stamp_immediate ? to_be32(static_cast<std::uint32_t>(seq)) : 0,
                       queue.base_flags & IBV_SEND_INLINE, queue.ud);
    }
    if (const int rc = ibv_wr_complete(qpx); rc != 0) [[unlikely]]
        check_ibv(rc, "ibv_wr_complete");
}
// #endregion bench-post-extended

void Engine::post_single(Queue& queue, std::uint64_t seq) {
    if (queue.qpx)
        post_one_extended(queue, seq, seq);
    else
        post_one(queue, seq, seq);
}

void Engine::post_receives(Queue& queue, std::uint32_t count) {
    ibv_recv_wr* last = &queue.recv_chain[count - 1];
    ibv_recv_wr* saved_next = last->next;
    last->next = nullptr;
    ibv_recv_wr* bad = nullptr;
    int rc = ibv_post_recv(queue.qp.get(), queue.recv_chain.data(), &bad);
    last->next = saved_next;
    check_ibv(rc, "ibv_post_recv");
}

void Engine::post_srq_receives(std::uint32_t count) {
    ibv_recv_wr* last = &srq_chain_[count - 1];
    ibv_recv_wr* saved_next = last->next;
    last->next = nullptr;
    ibv_recv_wr* bad = nullptr;
    int rc = ibv_post_srq_recv(srq_.get(), srq_chain_.data(), &bad);
    last->next = saved_next;
    check_ibv(rc, "ibv_post_srq_recv");
}

void Engine::repost(std::vector<std::uint32_t>& pending) {
    for (std::size_t q = 0; q < pending.size(); ++q) {
        while (pending[q] > 0) {
            std::uint32_t n = std::min(pending[q], kPollBatch);
            if (srq_)
                post_srq_receives(n);
            else
                post_receives(queues_[q], n);
            pending[q] -= n;
        }
    }
}

// ---- Completions.

[[gnu::always_inline]] inline int Engine::poll_all(std::span<ibv_wc> wcs) {
    if (cqs_.size() == 1) [[likely]] {  // a shared CQ, or one QP: the busy poll stays short
        const int n = ibv_poll_cq(cqs_.front().get(), static_cast<int>(wcs.size()), wcs.data());
        if (n < 0) [[unlikely]]
            fail("ibv_poll_cq failed");
        return n;
    }
    int total = 0;
    for (CompletionQueue& cq : cqs_) {
        int room = static_cast<int>(wcs.size()) - total;
        if (room <= 0) break;
        int n = ibv_poll_cq(cq.get(), room, wcs.data() + total);
        if (n < 0) fail("ibv_poll_cq failed");
        total += n;
    }
    return total;
}

void Engine::wait_for_event(std::chrono::milliseconds timeout) {
    bool newly_armed = false;
    for (std::size_t c = 0; c < cqs_.size(); ++c) {
        if (armed_[c]) continue;
        check_ibv(ibv_req_notify_cq(cqs_[c].get(), 0), "ibv_req_notify_cq");
        armed_[c] = true;
        newly_armed = true;
    }
    // A completion that arrived before its CQ was armed raises no event: after arming, return
    // so the caller polls once more; sleep only when every CQ was already armed.
    if (newly_armed) return;
    pollfd waiting{channel_->fd, POLLIN, 0};
    int ready =
        ::poll(&waiting, 1,
               static_cast<int>(std::min<std::chrono::milliseconds::rep>(timeout.count(), 1000)));
    check_errno(ready >= 0, "poll (completion channel)");
    if (ready == 0) return;
    ibv_cq* cq = nullptr;
    void* cq_context = nullptr;
    check_errno(ibv_get_cq_event(channel_.get(), &cq, &cq_context) == 0, "ibv_get_cq_event");
    ibv_ack_cq_events(cq, 1);
    for (std::size_t c = 0; c < cqs_.size(); ++c)
        if (cqs_[c].get() == cq) armed_[c] = false;
}

void Engine::fail_completion(const ibv_wc& wc) const {
    fail(failed_completion(wc));
}

std::uint32_t Engine::queue_index(const ibv_wc& wc) const {
    if (wc.opcode & IBV_WC_RECV) {
        if (!srq_) return static_cast<std::uint32_t>(wc.wr_id);
        auto found = index_of_qpn_.find(wc.qp_num);
        if (found == index_of_qpn_.end())
            fail(fmt::format("a receive completed on unknown QP {:#x}", wc.qp_num));
        return found->second;
    }
    return static_cast<std::uint32_t>(wc.wr_id >> 48);
}

// ---- Bandwidth: the initiator.

InitiatorResult Engine::run_initiator(std::uint64_t per_qp, double duration_s,
                                      const Limits& limits) {
    const std::uint32_t window = config_.window;
    const std::uint32_t batch = config_.post_list;
    const std::uint32_t qps = config_.qps;
    const bool timed = duration_s > 0;
    std::vector<std::uint64_t> target(qps, timed ? kSeqMask : per_qp);
    std::vector<std::uint64_t> posted(qps, 0), completed(qps, 0);
    std::uint32_t unfinished = qps;
    std::array<ibv_wc, kPollBatch> wcs;
    for (Queue& queue : queues_)
        queue.next_signaled = config_.signal_every - 1;  // every phase starts at seq 0
    // Per-message staging, decided once: the loop below must cost what the verbs cost.
    const bool stage_each_source = stage_each_message_ && !operation_.lands_at_initiator;
    const bool stage_each_read = stage_each_message_ && operation_.lands_at_initiator;

    const auto start = Clock::now();
    const auto stop_posting_at = start + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(duration_s));
    auto last_progress = start;
    auto last_completion = start;
    bool stopping = !timed;
    std::uint64_t idle = 0;

    while (unfinished > 0) {
        bool posted_any = false;
        for (std::uint32_t q = 0; q < qps; ++q) {
            // Post whole batches while the window has room (a shorter one only at the end). The
            // counters are locals here, so they stay in registers across each post.
            Queue& queue = queues_[q];
            const std::uint64_t end = target[q], window_end = completed[q] + window;
            std::uint64_t sent = posted[q];
            if (batch == 1 && queue.qpx) {
                for (const std::uint64_t limit = std::min(end, window_end); sent < limit; ++sent) {
                    if (stage_each_source) [[unlikely]]
                        stage_sources(1);
                    post_one_extended(queue, sent, end - 1);
                }
            } else if (batch == 1) {
                for (const std::uint64_t limit = std::min(end, window_end); sent < limit; ++sent) {
                    if (stage_each_source) [[unlikely]]
                        stage_sources(1);
                    post_one(queue, sent, end - 1);
                }
            } else {
                while (sent < end) {
                    const auto n =
                        static_cast<std::uint32_t>(std::min<std::uint64_t>(batch, end - sent));
                    if (sent + n > window_end) break;
                    if (stage_each_source) [[unlikely]]
                        stage_sources(n);
                    if (queue.qpx)
                        post_batch_extended(queue, sent, n, end - 1);
                    else
                        post_send_batch(queue, sent, n, end - 1);
                    sent += n;
                }
            }
            posted_any |= sent != posted[q];
            posted[q] = sent;
        }
        int polled = poll_all(wcs);
        if (polled > 0) {
            last_completion = Clock::now();
            last_progress = last_completion;
            idle = 0;
            for (int i = 0; i < polled; ++i) {
                const ibv_wc& wc = wcs[static_cast<std::size_t>(i)];
                if (wc.status != IBV_WC_SUCCESS) fail_completion(wc);
                std::uint32_t q = queue_index(wc);
                const std::uint64_t now_completed =
                    (wc.wr_id & kSeqMask) + 1;  // a QP's send completions arrive in order
                if (stage_each_read) [[unlikely]]
                    stage_destinations(now_completed - completed[q]);
                completed[q] = now_completed;
                if (completed[q] == target[q]) --unfinished;
            }
        } else if (!posted_any) {
            if (++idle % 1024 == 0 || config_.events) {
                auto now = Clock::now();
                if (now - last_progress > limits.idle)
                    fail(fmt::format("no completion for {:.1f} s ({} QPs: posted {}, completed {})",
                                     limits.idle.count() / 1000.0, qps, posted[0], completed[0]));
                if (now - start > limits.phase)
                    fail(fmt::format("the phase ran past its limit of {:.0f} s: lower -n or -D",
                                     limits.phase.count() / 1000.0));
                if (config_.events) wait_for_event(limits.idle);
            }
        }
        if (!stopping && Clock::now() >= stop_posting_at) {
            // Time is up: finish each QP at the next signal boundary so its last WR is signaled.
            stopping = true;
            for (std::uint32_t q = 0; q < qps; ++q) {
                std::uint64_t rounded = (posted[q] + config_.signal_every - 1) /
                                        config_.signal_every * config_.signal_every;
                target[q] = std::max<std::uint64_t>(rounded, 1);
                if (completed[q] == target[q]) --unfinished;
            }
        }
    }
    InitiatorResult result;
    result.seconds = nanoseconds_between(start, last_completion) / 1e9;
    result.per_qp = completed;
    for (std::uint64_t c : completed) result.ops += c;
    return result;
}

// ---- Bandwidth: the receiver.

ReceiverResult Engine::run_receiver(
    const std::function<std::optional<std::vector<std::uint64_t>>()>& expected_counts,
    const Limits& limits) {
    const std::uint32_t qps = config_.qps;
    const bool reliable = config_.transport == Transport::kRC;
    const std::uint64_t header = config_.transport == Transport::kUD ? kGrhBytes : 0;
    std::vector<std::uint64_t> received(qps, 0);
    std::vector<std::uint32_t> pending(srq_ ? 1 : qps, 0);
    std::optional<std::vector<std::uint64_t>> expected;
    std::array<ibv_wc, kPollBatch> wcs;
    ReceiverResult result;
    Clock::time_point first{}, last{};
    const auto start = Clock::now();
    auto last_progress = start;
    std::uint64_t idle = 0;

    auto all_arrived = [&] {
        for (std::uint32_t q = 0; q < qps; ++q)
            if (received[q] < (*expected)[q]) return false;
        return true;
    };
    for (;;) {
        int polled = poll_all(wcs);
        if (polled > 0) {
            auto now = Clock::now();
            if (result.messages == 0) first = now;
            last = now;
            last_progress = now;
            idle = 0;
            for (int i = 0; i < polled; ++i) {
                const ibv_wc& wc = wcs[static_cast<std::size_t>(i)];
                if (wc.status != IBV_WC_SUCCESS) fail_completion(wc);
                if (!(wc.opcode & IBV_WC_RECV)) continue;
                std::uint32_t q = queue_index(wc);
                ++received[q];
                if (stage_each_message_) stage_destinations(1);
                ++pending[srq_ ? 0 : q];
                ++result.messages;
                result.bytes += operation_.data_in_receive() ? wc.byte_len - header : config_.size;
            }
            repost(pending);
            if (expected && all_arrived()) break;
            continue;
        }
        if (++idle % 256 != 0 && !config_.events) continue;
        auto now = Clock::now();
        if (!expected) {
            expected = expected_counts();
            if (expected && expected->size() != qps)
                fail(fmt::format("the peer reported counts for {} QPs, not {}", expected->size(),
                                 qps));
            if (expected && all_arrived()) break;
            if (expected) last_progress = now;
        } else if (!reliable && now - last_progress > kUnreliableGrace) {
            break;  // the rest was lost: UC and UD drop what finds no receive or buffer
        }
        if (now - last_progress > limits.idle) {
            if (!expected)
                fail(fmt::format("nothing arrived for {:.1f} s and the peer did not finish",
                                 limits.idle.count() / 1000.0));
            std::uint64_t want = 0;
            for (std::uint64_t e : *expected) want += e;
            fail(fmt::format("RC delivered {} of {} messages and then nothing for {:.1f} s",
                             result.messages, want, limits.idle.count() / 1000.0));
        }
        if (now - start > limits.phase) fail("the phase ran past its limit: lower -n or -D");
        if (config_.events) wait_for_event(std::chrono::milliseconds(expected ? 10 : 100));
    }
    result.seconds = result.messages > 1 ? nanoseconds_between(first, last) / 1e9 : 0;
    return result;
}

// ---- Latency.

namespace {

// The byte a write ping-pong polls: the last of the message, stamped with the round number
// (never 0, so a cleared slot cannot pass for round 0).
std::uint8_t round_tag(std::uint64_t round) {
    return static_cast<std::uint8_t>(round % 255 + 1);
}

}  // namespace

// What both ends of a ping-pong track: completions seen, receives to repost, and where each
// side's last-byte stamp lives (the write ping-pong polls memory instead of the CQ).
struct Engine::PingPong {
    std::uint64_t count = 0;  // round trips in this phase
    std::uint64_t sends_done = 0, recvs_done = 0;
    std::vector<std::uint32_t> pending = std::vector<std::uint32_t>(1, 0);
    volatile std::uint8_t* source_tag = nullptr;
    volatile std::uint8_t* arrived_tag = nullptr;
    Clock::time_point phase_start = Clock::now();
};

template <typename Done>
void Engine::complete_until(Done done, PingPong& state, std::uint64_t round, const Limits& limits,
                            const char* waiting_for) {
    std::array<ibv_wc, kPollBatch> wcs;
    const auto since = Clock::now();
    std::uint64_t spins = 0;
    while (!done()) {
        int polled = poll_all(wcs);
        for (int i = 0; i < polled; ++i) {
            const ibv_wc& wc = wcs[static_cast<std::size_t>(i)];
            if (wc.status != IBV_WC_SUCCESS) fail_completion(wc);
            if (wc.opcode & IBV_WC_RECV) {
                ++state.recvs_done;
                ++state.pending[0];
            } else {
                ++state.sends_done;
            }
        }
        if (polled > 0) {
            repost(state.pending);
            continue;
        }
        if (++spins % 4096 == 0 || config_.events) {
            auto now = Clock::now();
            if (now - since > limits.idle)
                fail(fmt::format("no {} for {:.1f} s (round trip {} of {})", waiting_for,
                                 limits.idle.count() / 1000.0, round + 1, state.count));
            if (now - state.phase_start > limits.phase)
                fail("the latency phase ran past its limit: lower -n");
            if (config_.events) wait_for_event(limits.idle);
        }
    }
}

void Engine::await_stamp(const PingPong& state, std::uint64_t round, const Limits& limits,
                         const char* waiting_for) const {
    const auto since = Clock::now();
    std::uint64_t spins = 0;
    while (*state.arrived_tag != round_tag(round)) {
        if (++spins % 65536 == 0 && Clock::now() - since > limits.idle)
            fail(fmt::format("no {} written for {:.1f} s (round trip {} of {})", waiting_for,
                             limits.idle.count() / 1000.0, round + 1, state.count));
    }
}

Engine::PingPong Engine::ping_pong_state(std::uint64_t count) {
    PingPong state;
    state.count = count;
    if (operation_.reply == Reply::kStamp) {
        // memory_problem() keeps GPU memory out of the write ping-pong: the CPU polls these bytes,
        // where the NIC puts them (host memory, or the staging bounce buffer).
        const gpu::Path path = registered_->path();
        if (path != gpu::Path::kHost && path != gpu::Path::kStaging)
            fail("a write ping-pong needs a buffer the CPU can poll (host memory)");
        auto* polled = reinterpret_cast<volatile std::uint8_t*>(registered_->nic_address());
        state.source_tag = polled + config_.size - 1;
        state.arrived_tag = polled + slot_stride_ + config_.size - 1;
    }
    return state;
}

std::vector<double> Engine::run_ping(std::uint64_t count, const Limits& limits) {
    Queue& queue = queues_[0];
    PingPong state = ping_pong_state(count);
    std::vector<double> samples;
    samples.reserve(count);
    const Reply reply = operation_.reply;

    for (std::uint64_t round = 0; round < count; ++round) {
        if (reply == Reply::kStamp) *state.source_tag = round_tag(round);
        auto t0 = Clock::now();
        if (stage_each_message_) stage_sources(1);  // the staged round trip starts in GPU memory
        post_single(queue, round);                  // every WR signaled in a ping-pong
        if (reply == Reply::kStamp) {
            await_stamp(state, round, limits, "reply");
        } else if (reply == Reply::kReceive) {
            complete_until([&] { return state.recvs_done > round; }, state, round, limits, "reply");
            if (stage_each_message_) stage_destinations(1);  // … and ends there
        } else {  // READ and atomics: the completion is the reply
            complete_until([&] { return state.sends_done > round; }, state, round, limits,
                           "completion");
        }
        auto t1 = Clock::now();
        samples.push_back(nanoseconds_between(t0, t1));
        complete_until([&] { return state.sends_done > round; }, state, round, limits,
                       "send completion");
    }
    return samples;
}

void Engine::run_pong(std::uint64_t count, const Limits& limits) {
    if (operation_.reply == Reply::kCompletion) return;  // the initiator's completion is the reply
    Queue& queue = queues_[0];
    PingPong state = ping_pong_state(count);
    for (std::uint64_t round = 0; round < count; ++round) {
        if (operation_.reply == Reply::kStamp) {
            await_stamp(state, round, limits, "ping");
            *state.source_tag = round_tag(round);
        } else {
            complete_until([&] { return state.recvs_done > round; }, state, round, limits, "ping");
            if (stage_each_message_) {
                stage_destinations(1);
                stage_sources(1);
            }
        }
        post_single(queue, round);
        complete_until([&] { return state.sends_done > round; }, state, round, limits,
                       "send completion");
    }
}

// ---- Checks.

// #region bench-verify
void Engine::clear_destination() {
    staging_copies_ = 0;  // every phase starts here, on both sides
    // Zeros copied in, then handed to the NIC's side as any source is (staging: into the bounce
    // buffer, so stale bytes there cannot pass the check; host memory: a memcpy, nothing else).
    const std::vector<std::byte> zeros(slot_stride_);
    memory_.copy_from_host(zeros, slot_stride_);
    registered_->before_nic_reads(slot_stride_, slot_stride_);
}

std::optional<std::string> Engine::verify_destination() {
    // READ: the client's destination holds the server's source; otherwise the server's
    // destination (after the UD GRH area) holds the client's source. Both are the same pattern,
    // and the rest of the slot must still be zero (nothing written past the message).
    const std::size_t offset = slot_stride_ + (config_.transport == Transport::kUD ? kGrhBytes : 0);
    const std::size_t length = 2 * slot_stride_ - offset;
    registered_->after_nic_writes(length,
                                  offset);  // staging: bounce → memory; GPU: flush where needed
    auto mismatch = memory_.find_mismatch(config_.size, config_.size, offset, length);
    if (!mismatch) return std::nullopt;
    if (*mismatch >= config_.size)
        return fmt::format("byte {} of the destination, past the {}-byte message, is not zero",
                           *mismatch, config_.size);
    return fmt::format("byte {} of the {}-byte destination differs from the sender's pattern",
                       *mismatch, config_.size);
}
// #endregion bench-verify

std::uint64_t Engine::atomic_counter() {
    // Atomics are performed in the target's byte order (the host's, here: both sides are this host
    // type).
    registered_->after_nic_writes(sizeof(std::uint64_t), slot_stride_);
    std::uint64_t value = 0;
    memory_.copy_to_host(std::as_writable_bytes(std::span(&value, 1)), slot_stride_);
    return value;
}

}  // namespace rdmalab::bench
