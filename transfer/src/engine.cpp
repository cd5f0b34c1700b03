#include "rdmalab/transfer/engine.hpp"

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/qp_endpoint.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>

namespace rdmalab::transfer {

namespace {

constexpr std::uint32_t kNotificationSlice = 0xffffffff;  // a wr_id's slice for the notification
constexpr std::uint32_t kReceives = 64;                   // notifications a rail can take at once
// A receive's wr_id. A send's carries its batch (from 1) in the high half, so the two never
// meet; and a failed completion's opcode is undefined, so the wr_id is what tells them apart.
constexpr std::uint64_t kReceiveWrId = 0;
constexpr std::uint64_t kProbeWrId = 0xfffffffe;  // batch 0 too: a renewed rail's probe

std::uint64_t wr_id_of(BatchId batch, std::uint32_t slice) {
    return std::uint64_t{batch} << 32 | slice;
}

std::string status_of(const ibv_wc& wc) {
    return fmt::format("{} ({})", ibv_wc_status_str(wc.status), static_cast<int>(wc.status));
}

}  // namespace

Engine::Engine(std::vector<RailDevice> rails, const Settings& settings)
    : settings_(settings),
      rail_states_(rails.size(), settings.policy, settings.max_in_flight, settings.retry) {
    if (settings.qps_per_rail == 0 || settings.qps_per_rail > kMaxQpsPerRail)
        fail(fmt::format("{} QPs a rail (1 to {})", settings.qps_per_rail, kMaxQpsPerRail));
    for (const RailDevice& device : rails) {
        Rail rail;
        rail.device = device.device;
        rail.port_number = device.port;
        rail.gid_index_asked = device.gid_index;
        rail.context = open_device(device.device);
        rail.port = choose_port_address(rail.context.get(), device.port, device.gid_index);
        ibv_device_attr attributes{};
        check_ibv(ibv_query_device(rail.context.get(), &attributes), "ibv_query_device");
        rail.responder_depth =
            static_cast<std::uint8_t>(std::clamp(attributes.max_qp_rd_atom, 1, 16));
        rail.pd.reset(check_ptr(ibv_alloc_pd(rail.context.get()), "ibv_alloc_pd"));
        const int depth = static_cast<int>(settings.max_in_flight + kReceives + 8);
        rail.cq.reset(check_ptr(ibv_create_cq(rail.context.get(), depth, nullptr, nullptr, 0),
                                "ibv_create_cq"));
        create_qps(rail);
        rails_.push_back(std::move(rail));
    }
}

// A rail's QPs, in INIT, each with a fresh first PSN: at start, and again when the rail is
// renewed.
void Engine::create_qps(Rail& rail) {
    rail.qps.clear();  // the old ones first: their flushed work requests are accounted for
    rail.psns.clear();
    rail.next_qp = 0;
    ibv_qp_init_attr init{};
    init.send_cq = rail.cq.get();
    init.recv_cq = rail.cq.get();
    init.qp_type = IBV_QPT_RC;
    init.cap = {.max_send_wr = settings_.max_in_flight + 2,  // + a notification or a probe
                .max_recv_wr = kReceives,
                .max_send_sge = 1,
                .max_recv_sge = 1,
                .max_inline_data = 0};
    for (std::uint32_t i = 0; i < settings_.qps_per_rail; ++i) {
        QueuePair qp{check_ptr(ibv_create_qp(rail.pd.get(), &init), "ibv_create_qp(RC)")};
        // INIT now, so its endpoint can be sent: the port, and what the peer may do through this
        // QP (each segment's registration narrows it further).
        ibv_qp_attr attr{};
        attr.qp_state = IBV_QPS_INIT;
        attr.pkey_index = 0;
        attr.port_num = rail.port.port;
        attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
        check_ibv(
            ibv_modify_qp(qp.get(), &attr,
                          IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
            "ibv_modify_qp(RESET -> INIT)");
        rail.qps.push_back(std::move(qp));
        rail.psns.push_back(random_psn());
    }
}

std::string Engine::provider(std::size_t rail) const {
    return provider_name(rails_[rail].context.get());
}

// Members go in reverse order: batches, segments (their MRs), then each rail's QP, CQ, PD and
// device, as the verbs require.
Engine::~Engine() = default;

int segment_access(unsigned remote_access, bool local_write) {
    // Remote write access needs local write access too (the verbs' rule).
    if (local_write || (remote_access & IBV_ACCESS_REMOTE_WRITE) != 0)
        remote_access |= static_cast<unsigned>(IBV_ACCESS_LOCAL_WRITE);
    return static_cast<int>(remote_access);
}

SegmentId Engine::register_segment(std::span<std::byte> bytes, unsigned remote_access,
                                   bool local_write) {
    if (bytes.empty()) fail("register_segment: an empty segment");
    std::vector<MemoryRegion> owned;
    std::vector<ibv_mr*> per_rail;
    for (Rail& rail : rails_) {
        owned.emplace_back(ibv_reg_mr(rail.pd.get(), bytes.data(), bytes.size(),
                                      segment_access(remote_access, local_write)));
        per_rail.push_back(check_ptr(owned.back().get(), "ibv_reg_mr(segment)"));
    }
    const SegmentId id = add_registered_segment(reinterpret_cast<std::uintptr_t>(bytes.data()),
                                                bytes.size(), per_rail);
    segments_.at(id).owned = std::move(owned);
    return id;
}

SegmentId Engine::add_registered_segment(std::uint64_t nic_address, std::size_t length,
                                         std::span<ibv_mr* const> per_rail) {
    if (length == 0) fail("add_registered_segment: an empty segment");
    if (per_rail.size() != rails_.size())
        fail(fmt::format("add_registered_segment: {} MRs for {} rails", per_rail.size(),
                         rails_.size()));
    Segment segment{
        .address = nic_address, .length = length, .lkeys = {}, .rkeys = {}, .owned = {}};
    for (std::size_t rail = 0; rail < rails_.size(); ++rail) {
        const ibv_mr* mr = per_rail[rail];
        // Each MR on its own rail's protection domain, and long enough: else the NIC refuses
        // every slice with a protection error, far from here.
        if (mr == nullptr || mr->pd != rails_[rail].pd.get() || mr->length < length)
            fail(
                fmt::format("add_registered_segment: rail {}'s MR is not of its protection "
                            "domain, or shorter than {} bytes",
                            rail + 1, length));
        segment.lkeys.push_back(mr->lkey);
        segment.rkeys.push_back(mr->rkey);
    }
    const SegmentId id = next_segment_++;
    segments_.emplace(id, std::move(segment));
    return id;
}

SegmentDescriptor Engine::describe(SegmentId id) const {
    const Segment& segment = segments_.at(id);
    return SegmentDescriptor{
        .id = id, .address = segment.address, .length = segment.length, .rkeys = segment.rkeys};
}

std::vector<RailEndpoint> Engine::endpoints_of(std::size_t index) const {
    const Rail& rail = rails_[index];
    std::vector<RailEndpoint> endpoints;
    for (std::size_t i = 0; i < rail.qps.size(); ++i) {
        RailEndpoint endpoint{.rail = static_cast<std::uint8_t>(index),
                              .mtu = static_cast<std::uint16_t>(mtu_bytes(rail.port.active_mtu)),
                              .qp = static_cast<std::uint8_t>(i),
                              .qpn = rail.qps[i]->qp_num,
                              .psn = rail.psns[i],
                              .gid = {}};
        std::memcpy(endpoint.gid.data(), rail.port.gid.raw, endpoint.gid.size());
        endpoints.push_back(endpoint);
    }
    return endpoints;
}

std::vector<RailEndpoint> Engine::endpoints() const {
    std::vector<RailEndpoint> endpoints;
    for (std::size_t index = 0; index < rails_.size(); ++index)
        for (const RailEndpoint& endpoint : endpoints_of(index)) endpoints.push_back(endpoint);
    return endpoints;
}

void Engine::connect(std::span<const RailEndpoint> peer) {
    const std::size_t qps = settings_.qps_per_rail;
    if (peer.size() != rails_.size() * qps)
        fail(fmt::format("the peer sent {} endpoints; this side has {} rails of {} QPs",
                         peer.size(), rails_.size(), qps));
    for (std::size_t index = 0; index < rails_.size(); ++index) {
        post_receives(index, kReceives);
        bring_up(rails_[index], index, peer.subspan(index * qps, qps));
    }
    connected_ = true;
}

// Each of the rail's QPs to the peer's QP of the same rail and index (checked: the peer's
// endpoints come in that order).
void Engine::bring_up(Rail& rail, std::size_t index, std::span<const RailEndpoint> peer) {
    if (peer.size() != rail.qps.size())
        fail(fmt::format("rail {}: the peer has {} QPs, this side {}", index + 1, peer.size(),
                         rail.qps.size()));
    for (std::size_t i = 0; i < peer.size(); ++i) {
        if (peer[i].rail != index || peer[i].qp != i)
            fail(fmt::format("rail {}: the peer's endpoint {} is for rail {} QP {}", index + 1,
                             i + 1, peer[i].rail + 1, peer[i].qp + 1));
        connect_qp(rail, index, i, peer[i]);
    }
}

void Engine::connect_qp(Rail& rail, std::size_t index, std::size_t qp, const RailEndpoint& peer) {
    // INIT -> RTR: the peer's QP, its first PSN, the path MTU, and the address of its port.
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RTR;
    const auto peer_mtu = mtu_from_bytes(peer.mtu);
    attr.path_mtu = std::min(rail.port.active_mtu, peer_mtu.value_or(IBV_MTU_1024));
    attr.dest_qp_num = peer.qpn;
    attr.rq_psn = peer.psn;
    attr.max_dest_rd_atomic = rail.responder_depth;
    attr.min_rnr_timer = 12;
    attr.ah_attr.is_global = 1;
    std::memcpy(attr.ah_attr.grh.dgid.raw, peer.gid.data(), peer.gid.size());
    attr.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(std::max(rail.port.gid_index, 0));
    attr.ah_attr.grh.hop_limit = 64;
    attr.ah_attr.grh.traffic_class = rail.port.traffic_class;
    attr.ah_attr.port_num = rail.port.port;
    check_ibv(ibv_modify_qp(rail.qps[qp].get(), &attr,
                            IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
              fmt::format("ibv_modify_qp(rail {} QP {}: INIT -> RTR)", index + 1, qp + 1));
    // RTR -> RTS: our first PSN, and how long a dead path takes to be given up on.
    attr = {};
    attr.qp_state = IBV_QPS_RTS;
    attr.sq_psn = rail.psns[qp];
    attr.timeout = settings_.timeout;
    attr.retry_cnt = settings_.retry_cnt;
    attr.rnr_retry = 6;
    attr.max_rd_atomic = rail.responder_depth;
    check_ibv(ibv_modify_qp(rail.qps[qp].get(), &attr,
                            IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC),
              fmt::format("ibv_modify_qp(rail {} QP {}: RTR -> RTS)", index + 1, qp + 1));
}

void Engine::add_remote_segment(const SegmentDescriptor& segment) {
    if (segment.rkeys.size() != rails_.size())
        fail(fmt::format("remote segment {} has keys for {} rails; there are {}", segment.id,
                         segment.rkeys.size(), rails_.size()));
    remote_segments_[segment.id] = segment;
}

std::vector<RailEndpoint> Engine::renew_rail(std::size_t rail) {
    if (rail >= rails_.size())
        fail(fmt::format("a renewal of rail {}; there are {}", rail + 1, rails_.size()));
    // What the old QPs left in the CQ first (a notification, flushed receives): polled while the
    // QPs that posted them still exist. Then the port's address afresh — a link that flapped may
    // have its address, and so its GID, back at another index.
    drain_completions(rail);
    Rail& renewed = rails_[rail];
    renewed.port =
        choose_port_address(renewed.context.get(), renewed.port_number, renewed.gid_index_asked);
    create_qps(renewed);
    return endpoints_of(rail);
}

void Engine::reconnect_rail(std::size_t rail, std::span<const RailEndpoint> peer, bool probe) {
    if (rail >= rails_.size())
        fail(fmt::format("a reconnection of rail {}; there are {}", rail + 1, rails_.size()));
    post_receives(rail, kReceives);
    bring_up(rails_[rail], rail, peer);
    if (probe && !remote_segments_.empty()) {
        rail_states_.probing(rail);
        post_probe(rail);
    } else {
        rail_states_.restored(rail, Clock::now());
    }
}

// A WRITE of no bytes on the rail's first fresh QP: it completes once the peer's NIC acknowledges
// it, so the path works again; if the path is still dead, it fails after the QP's retries, and no
// slice waited behind it. (No bytes: the target checks neither address nor key, C9-88.)
void Engine::post_probe(std::size_t rail) {
    const auto now = Clock::now();
    rail_states_.posted(rail, 0, now);
    if (const int rc = post_empty_write(rail, kProbeWrId, remote_segments_.begin()->second);
        rc != 0)
        rail_states_.failed(rail, 0, fmt::format("probe: ibv_post_send: {}", std::strerror(rc)),
                            now);
}

// A signaled WRITE of no bytes on `rail` to `remote` — with an immediate, a notification; without,
// a probe. ibv_post_send's return code.
int Engine::post_empty_write(std::size_t rail, std::uint64_t wr_id, const SegmentDescriptor& remote,
                             std::optional<std::uint32_t> immediate) {
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = nullptr;
    wr.num_sge = 0;
    wr.opcode = immediate ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    if (immediate) wr.imm_data = to_be32(*immediate);
    wr.wr.rdma.remote_addr = remote.address;
    wr.wr.rdma.rkey = remote.rkeys[rail];
    ibv_send_wr* bad = nullptr;
    return ibv_post_send(rails_[rail].qps.front().get(), &wr, &bad);
}

// A rail whose QPs have held work with no completion for twice the time a QP takes to fail by
// itself ((retry_cnt + 1) x 4.096 us x 2^timeout): since it went down, or, up, since it last
// completed anything (or became busy). A QP reports a dead path within that time; on Linux 6.1's
// rxe, with two QPs on a rail whose own link went down, work was seen to get no completion at all
// (vm.transfer's returns part: a batch waited out its 60 s, one run in four). What completed is
// polled; the QPs are destroyed, so nothing more comes from them; what they held is posted
// again elsewhere (idempotent), and the rail, down, is renewed after its back-off.
void Engine::give_up_stuck_rails() {
    const auto now = Clock::now();
    const auto bound = 2 * retry_time(settings_.retry_cnt, settings_.timeout);
    for (std::size_t rail = 0; rail < rails_.size(); ++rail) {
        const RailState& state = rail_states_[rail];
        const auto quiet_since =
            state.up ? std::max(state.busy_since, state.last_completed) : state.down_since;
        if (state.probing || state.in_flight_slices == 0 || now - quiet_since < bound) continue;
        drain_completions(rail);
        if (rail_states_[rail].in_flight_slices == 0) continue;
        create_qps(rails_[rail]);
        for (auto& [id, batch] : batches_) {
            for (const std::uint32_t slice : batch.progress.in_flight_on(rail))
                batch.progress.failed(slice);
            if (batch.progress.state() == BatchState::kNotifying && batch.notified_on == rail)
                batch.progress.notification_failed();
        }
        rail_states_.gave_up(rail, "no completion within twice the QP's retry time", now);
    }
}

// #region retry
// A down rail whose back-off has passed: fresh QPs here and at the peer (the application carries
// the endpoints), then the probe. A renewal that fails leaves the rail down, its back-off doubled.
void Engine::retry_due_rails() {
    if (!renew_) return;
    for (const std::size_t rail : rail_states_.due_for_retry(Clock::now())) {
        try {
            const std::vector<RailEndpoint> ours = renew_rail(rail);
            reconnect_rail(rail, renew_(ours), true);
        } catch (const Error& error) {
            rail_states_.retry_failed(rail, fmt::format("retry: {}", error.what()), Clock::now());
        }
    }
}
// #endregion retry

void Engine::post_receives(std::size_t rail, std::uint32_t count) {
    // A notification is a WRITE WITH IMMEDIATE of no bytes: its receive needs no buffer. It comes
    // on the peer's first QP of the rail, so to ours.
    for (std::uint32_t i = 0; i < count; ++i) {
        ibv_recv_wr receive{
            .wr_id = kReceiveWrId, .next = nullptr, .sg_list = nullptr, .num_sge = 0};
        ibv_recv_wr* bad = nullptr;
        check_ibv(ibv_post_recv(rails_[rail].qps.front().get(), &receive, &bad), "ibv_post_recv");
    }
}

BatchId Engine::submit(std::span<const Request> requests, bool notify) {
    if (!connected_) fail("submit: connect the engine to its peer first");
    if (requests.empty()) fail("submit: a batch of no requests");
    for (const Request& request : requests) {
        auto local = segments_.find(request.local_segment);
        if (local == segments_.end())
            fail(fmt::format("submit: no local segment {}", request.local_segment));
        auto remote = remote_segments_.find(request.remote_segment);
        if (remote == remote_segments_.end())
            fail(fmt::format("submit: no remote segment {} (describe it first)",
                             request.remote_segment));
        if (auto why = refuse_request(request, local->second.length, remote->second.length))
            fail(fmt::format("submit: {}", *why));
    }
    const BatchId id = next_batch_++;
    batches_.emplace(id,
                     Batch{{requests.begin(), requests.end()},
                           BatchProgress(cut_into_slices(requests, settings_.slice_bytes), notify),
                           std::nullopt});
    post_waiting();
    return id;
}

// #region post-slice
void Engine::post_slice(BatchId id, Batch& batch, std::uint32_t index, std::size_t rail) {
    const Slice& slice = batch.progress.slice(index);
    const Request& request = batch.requests[slice.request];
    const Segment& local = segments_.at(request.local_segment);
    const SegmentDescriptor& remote = remote_segments_.at(request.remote_segment);
    ibv_sge sge{.addr = local.address + request.local_offset + slice.offset,
                .length = slice.length,
                .lkey = local.lkeys[rail]};
    ibv_send_wr wr{};
    wr.wr_id = wr_id_of(id, index);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = request.opcode == Opcode::kWrite ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = remote.address + request.remote_offset + slice.offset;
    wr.wr.rdma.rkey = remote.rkeys[rail];
    ibv_send_wr* bad = nullptr;
    batch.progress.posted(index, rail);
    rail_states_.posted(rail, slice.length, Clock::now());
    Rail& on = rails_[rail];
    QueuePair& qp = on.qps[on.next_qp++ % on.qps.size()];  // the rail's QPs in turn
    if (const int rc = ibv_post_send(qp.get(), &wr, &bad); rc != 0) {
        // A QP that cannot take the post (in the error state) is a rail that is down.
        rail_states_.failed(rail, slice.length, fmt::format("ibv_post_send: {}", std::strerror(rc)),
                            Clock::now());
        batch.progress.failed(index);
    }
}
// #endregion post-slice

bool Engine::post_notification(BatchId id, Batch& batch) {
    // After every slice's completion: a QP on one rail does not order another rail's WRITEs,
    // but each completion says its WRITE was acknowledged, so all the bytes are in place.
    const Request& first = batch.requests.front();
    const SegmentDescriptor& remote = remote_segments_.at(first.remote_segment);
    for (std::size_t i = 0; i < rails_.size(); ++i) {
        // A rail up, with room in its send queue (max_in_flight slices + 2 more).
        if (!rail_states_[i].up || rail_states_[i].in_flight_slices >= settings_.max_in_flight + 2)
            continue;
        if (post_empty_write(i, wr_id_of(id, kNotificationSlice), remote, id) == 0) {
            rail_states_.posted(i, 0, Clock::now());
            batch.notified_on = i;
            batch.progress.notification_posted();
            return true;
        }
    }
    return false;
}

void Engine::post_waiting() {
    for (auto& [id, batch] : batches_) {
        BatchProgress& progress = batch.progress;
        if (progress.state() != BatchState::kPending) continue;
        while (auto slice = progress.next_slice()) {
            auto rail = rail_states_.choose(progress.slice(*slice).length);
            if (!rail) break;
            post_slice(id, batch, *slice, *rail);
        }
        if (!rail_states_.any_up()) {
            progress.fail(fmt::format("batch {}: no rail left ({}); {} of {} slices landed", id,
                                      rail_states_.why_all_down(), progress.landed(),
                                      progress.slices()));
            continue;
        }
        if (!progress.all_landed()) continue;
        if (!progress.notify())
            progress.completed_without_notification();
        else if (!post_notification(id, batch) && !rail_states_.any_up())
            progress.fail(
                fmt::format("batch {}: every slice landed but no rail could carry its "
                            "notification ({})",
                            id, rail_states_.why_all_down()));
        // (A rail up but full: the notification waits for the next poll.)
    }
}

void Engine::drain_completions(std::size_t rail) {
    std::array<ibv_wc, 16> completions{};
    for (;;) {
        const int found = ibv_poll_cq(rails_[rail].cq.get(), static_cast<int>(completions.size()),
                                      completions.data());
        check_errno(found >= 0, "ibv_poll_cq");
        if (found == 0) return;
        const auto now = Clock::now();
        for (int i = 0; i < found; ++i) {
            const ibv_wc& wc = completions[static_cast<std::size_t>(i)];
            if (wc.wr_id == kReceiveWrId) {
                // The target's side: a notification (or, on a dead rail, a flushed receive).
                if (wc.status == IBV_WC_SUCCESS && (wc.wc_flags & IBV_WC_WITH_IMM)) {
                    notifications_.push_back(from_be32(wc.imm_data));
                    // Its receive again, on the QP that took it (not a renewed rail's fresh one,
                    // which has its own).
                    if (wc.qp_num == rails_[rail].qps.front()->qp_num) post_receives(rail, 1);
                }
                continue;
            }
            if (wc.wr_id == kProbeWrId) {
                if (wc.status == IBV_WC_SUCCESS) {
                    rail_states_.completed(rail, 0, now);
                    rail_states_.restored(rail, now);
                } else {
                    rail_states_.failed(rail, 0, fmt::format("probe: {}", status_of(wc)), now);
                }
                continue;
            }
            const auto id = static_cast<BatchId>(wc.wr_id >> 32);
            const auto index = static_cast<std::uint32_t>(wc.wr_id & 0xffffffff);
            auto found_batch = batches_.find(id);
            if (found_batch == batches_.end()) continue;  // a batch already given up on
            Batch& batch = found_batch->second;
            if (index == kNotificationSlice) {
                if (wc.status == IBV_WC_SUCCESS) {
                    rail_states_.completed(rail, 0, now);
                    batch.progress.notification_completed();
                } else {
                    rail_states_.failed(rail, 0, status_of(wc), now);
                    batch.progress.notification_failed();
                }
                continue;
            }
            // #region failover
            const std::uint32_t length = batch.progress.slice(index).length;
            if (wc.status == IBV_WC_SUCCESS) {
                rail_states_.completed(rail, length, now);
                batch.progress.completed(index);
            } else {
                // The first failure takes the rail down; the flushes after it bring back the
                // rail's other slices. Each goes to another rail.
                rail_states_.failed(rail, length, status_of(wc), now);
                batch.progress.failed(index);
            }
            // #endregion failover
        }
    }
}

BatchStatus Engine::poll(BatchId id) {
    auto found = batches_.find(id);
    if (found == batches_.end()) fail(fmt::format("poll: no batch {}", id));
    for (std::size_t rail = 0; rail < rails_.size(); ++rail) drain_completions(rail);
    give_up_stuck_rails();
    retry_due_rails();
    post_waiting();
    const BatchProgress& progress = found->second.progress;
    BatchStatus status{.state = progress.state(),
                       .slices = progress.slices(),
                       .landed = 0,
                       .reposted = progress.reposted(),
                       .bytes_per_rail = std::vector<std::uint64_t>(rails_.size(), 0),
                       .error = progress.error()};
    status.landed = progress.landed();
    for (std::uint32_t s = 0; s < progress.slices(); ++s)
        if (auto rail = progress.landed_on(s))
            status.bytes_per_rail[*rail] += progress.slice(s).length;
    return status;
}

BatchStatus Engine::wait(BatchId id, std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
        BatchStatus status = poll(id);
        if (status.state == BatchState::kCompleted || status.state == BatchState::kFailed)
            return status;
        if (Clock::now() > deadline)
            fail(fmt::format("batch {}: {} of {} slices landed within {} ms", id, status.landed,
                             status.slices, timeout.count()));
    }
}

std::optional<std::uint32_t> Engine::poll_notification() {
    for (std::size_t rail = 0; rail < rails_.size(); ++rail) drain_completions(rail);
    if (notifications_.empty()) return std::nullopt;
    const std::uint32_t id = notifications_.front();
    notifications_.erase(notifications_.begin());
    return id;
}

}  // namespace rdmalab::transfer
