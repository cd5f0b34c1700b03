#include "rdmalab/unordered/channel.hpp"

#include "rdmalab/error.hpp"
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/qp_transitions.hpp"
#include "rdmalab/ud_datagrams.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>

namespace rdmalab::unordered {

namespace {

// The ACK-carrying and data sends share the slots; a WR's id is its slot.
constexpr std::size_t kSendSlotBytes = std::max(kDataHeaderBytes, kAckBytes);
// UD needs no RC settings; the transitions take them all the same.
constexpr Reliability kNoReliability{};

}  // namespace

Channel::Channel(const QpOptions& options, const Settings& settings)
    : settings_(settings),
      context_(open_device(options.device)),
      local_(choose_port_address(context_.get(), options.ib_port, options.gid_index)),
      receive_slots_(settings.receive_slots),
      receive_slot_bytes_(kGrhBytes + static_cast<std::size_t>(mtu_bytes(local_.active_mtu))),
      receives_(receive_slot_bytes_ * receive_slots_),
      send_slots_(settings.send_slots),
      sends_(kSendSlotBytes * send_slots_),
      window_(settings) {
    payload_ = static_cast<std::uint32_t>(mtu_bytes(local_.active_mtu)) - kDataHeaderBytes;
    pd_.reset(check_ptr(ibv_alloc_pd(context_.get()), "ibv_alloc_pd"));
    cq_.reset(
        check_ptr(ibv_create_cq(context_.get(), static_cast<int>(receive_slots_ + send_slots_),
                                nullptr, nullptr, 0),
                  "ibv_create_cq"));
    // Two SGEs per send: the header from a send slot, the payload from the caller's memory.
    ibv_qp_init_attr init{};
    init.send_cq = cq_.get();
    init.recv_cq = cq_.get();
    init.qp_type = IBV_QPT_UD;
    init.cap = {.max_send_wr = send_slots_,
                .max_recv_wr = receive_slots_,
                .max_send_sge = 2,
                .max_recv_sge = 1,
                .max_inline_data = 0};
    init.sq_sig_all = 1;  // every send completes: its completion frees its slot
    qp_.reset(check_ptr(ibv_create_qp(pd_.get(), &init), "ibv_create_qp(UD)"));
    apply_transition(qp_.get(), ud_init_transition(local_, kQkey), "unordered");

    // Receive slots, written by the NIC: LOCAL_WRITE only. Send slots: read by it alone.
    receives_mr_.reset(
        check_ptr(ibv_reg_mr(pd_.get(), receives_.data(), receives_.size(), IBV_ACCESS_LOCAL_WRITE),
                  "ibv_reg_mr(receive slots)"));
    sends_mr_.reset(check_ptr(ibv_reg_mr(pd_.get(), sends_.data(), sends_.size(), 0),
                              "ibv_reg_mr(send slots)"));
    for (std::uint32_t slot = send_slots_; slot > 0; --slot) free_send_slots_.push_back(slot - 1);
}

Channel::~Channel() = default;

QpEndpoint Channel::endpoint() const {
    QpEndpoint ours = local_endpoint(qp_.get(), local_);
    ours.qkey = kQkey;
    return ours;
}

void Channel::connect(const QpEndpoint& peer) {
    for (std::uint32_t slot = 0; slot < receive_slots_; ++slot) post_receive(slot);
    apply_transition(qp_.get(), rtr_transition(IBV_QPT_UD, local_, peer, kNoReliability),
                     "unordered");
    apply_transition(qp_.get(), rts_transition(IBV_QPT_UD, endpoint().psn, kNoReliability),
                     "unordered");
    ibv_ah_attr attributes = address_vector(local_, peer);
    peer_ah_.reset(check_ptr(ibv_create_ah(pd_.get(), &attributes), "ibv_create_ah"));
    peer_qpn_ = peer.qpn;
    // The smaller MTU of the two ports bounds a datagram.
    payload_ = static_cast<std::uint32_t>(mtu_bytes(std::min(local_.active_mtu, peer.active_mtu))) -
               kDataHeaderBytes;
}

Source Channel::register_source(std::span<const std::byte> bytes) {
    // Access 0: the NIC reads it for our sends; no peer may touch it.
    MemoryRegion mr{ibv_reg_mr(pd_.get(), const_cast<std::byte*>(bytes.data()), bytes.size(), 0)};
    check_ptr(mr.get(), "ibv_reg_mr(source)");
    return Source{bytes, std::move(mr)};
}

std::uint32_t Channel::submit(const Source& source, std::size_t offset, std::uint32_t length,
                              std::uint64_t target_offset) {
    if (length == 0 || offset > source.bytes.size() || length > source.bytes.size() - offset)
        fail(fmt::format("submit: {} bytes from offset {} of a source of {}", length, offset,
                         source.bytes.size()));
    if (peer_ah_ == nullptr) fail("submit: connect the channel first");
    const std::uint32_t id = next_transfer_++;
    DataHeader header{.transfer = id,
                      .sequence = 0,
                      .total = length,
                      .target_offset = target_offset,
                      .payload = payload_};
    window_.add(id, header.count());
    outgoing_.emplace(id, Outgoing{&source, offset, header});
    return id;
}

void Channel::post_receive(std::uint32_t slot) {
    ibv_sge sge{
        .addr = reinterpret_cast<std::uintptr_t>(receives_.data() + slot * receive_slot_bytes_),
        .length = static_cast<std::uint32_t>(receive_slot_bytes_),
        .lkey = receives_mr_->lkey};
    ibv_recv_wr receive{.wr_id = slot, .next = nullptr, .sg_list = &sge, .num_sge = 1};
    ibv_recv_wr* bad = nullptr;
    check_ibv(ibv_post_recv(qp_.get(), &receive, &bad), "ibv_post_recv(UD)");
}

std::uint32_t Channel::take_send_slot() {
    const std::uint32_t slot = free_send_slots_.back();
    free_send_slots_.pop_back();
    return slot;
}

void Channel::post_datagram(const Transmission& transmission) {
    const Outgoing& outgoing = outgoing_.at(transmission.transfer);
    DataHeader header = outgoing.header;
    header.sequence = transmission.sequence;
    const std::uint32_t slot = take_send_slot();
    std::byte* header_bytes = sends_.data() + slot * kSendSlotBytes;
    write_data_header(std::span<std::byte, kDataHeaderBytes>(header_bytes, kDataHeaderBytes),
                      header);
    const std::byte* payload = outgoing.source->bytes.data() + outgoing.offset +
                               std::size_t{header.sequence} * header.payload;
    std::array<ibv_sge, 2> sges{ibv_sge{.addr = reinterpret_cast<std::uintptr_t>(header_bytes),
                                        .length = kDataHeaderBytes,
                                        .lkey = sends_mr_->lkey},
                                ibv_sge{.addr = reinterpret_cast<std::uintptr_t>(payload),
                                        .length = header.length(),
                                        .lkey = outgoing.source->mr->lkey}};
    post_send(slot, sges, "ibv_post_send(UD data)");
    switch (transmission.reason) {
        case SendReason::kNew:
            ++stats_.sent;
            break;
        case SendReason::kGap:
            ++stats_.resent_on_gap;
            break;
        case SendReason::kTimeout:
            ++stats_.resent_on_timeout;
            break;
    }
}

void Channel::post_send(std::uint32_t slot, std::span<ibv_sge> sges, const char* call) {
    // A SEND to the peer's QP through its address handle, with the Q_Key its QP accepts; every
    // send completes (sq_sig_all), and its completion gives the slot back.
    ibv_send_wr send{};
    send.wr_id = slot;
    send.sg_list = sges.data();
    send.num_sge = static_cast<int>(sges.size());
    send.opcode = IBV_WR_SEND;
    send.wr.ud.ah = peer_ah_.get();
    send.wr.ud.remote_qpn = peer_qpn_;
    send.wr.ud.remote_qkey = kQkey;
    ibv_send_wr* bad = nullptr;
    check_ibv(ibv_post_send(qp_.get(), &send, &bad), call);
}

void Channel::send_ack(const Ack& ack) {
    if (free_send_slots_.empty()) return;  // the next arrival or the delay asks again
    const std::uint32_t slot = take_send_slot();
    std::byte* bytes = sends_.data() + slot * kSendSlotBytes;
    write_ack(std::span<std::byte, kAckBytes>(bytes, kAckBytes), ack);
    ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(bytes),
                .length = kAckBytes,
                .lkey = sends_mr_->lkey};
    post_send(slot, std::span(&sge, 1), "ibv_post_send(UD acknowledgement)");
    ++stats_.acks_sent;
}

void Channel::place(const DataHeader& header, std::span<const std::byte> payload) {
    // From the network: its place must lie inside the target, and it must agree with what the
    // transfer's first datagram said.
    auto known = incoming_.find(header.transfer);
    const DataHeader* first =
        known == incoming_.end() ? nullptr : &known->second.reassembly.transfer();
    if (auto refusal = refuse_placement(header, target_.size(), first)) fail(*refusal);
    auto [entry, created] = incoming_.try_emplace(header.transfer, Incoming{Reassembly(header)});
    Incoming& incoming = entry->second;
    ++stats_.received;
    const bool fresh = incoming.reassembly.record(header.sequence);
    if (!fresh) {
        ++stats_.duplicates;
        send_ack(incoming.reassembly.ack());  // its ACK may have been lost
        incoming.unacknowledged = 0;
        return;
    }
    if (!created && header.sequence < incoming.highest) ++stats_.out_of_order;
    incoming.highest = std::max(incoming.highest, header.sequence);
    std::memcpy(target_.data() + header.place(), payload.data(), payload.size());
    if (incoming.unacknowledged++ == 0) incoming.first_unacknowledged = Clock::now();
    if (incoming.reassembly.complete()) {
        events_.push_back(
            {Event::Kind::kLanded, header.transfer, header.target_offset, header.total});
        send_ack(incoming.reassembly.ack());
        incoming.unacknowledged = 0;
    } else if (incoming.unacknowledged >= settings_.ack_every) {
        send_ack(incoming.reassembly.ack());
        incoming.unacknowledged = 0;
    }
}

void Channel::on_receive(const ibv_wc& wc) {
    const auto slot = static_cast<std::uint32_t>(wc.wr_id);
    if (wc.byte_len < kGrhBytes || wc.src_qp != peer_qpn_)
        fail(fmt::format("a datagram of {} bytes from QP {:#x} (the peer is QP {:#x})", wc.byte_len,
                         wc.src_qp, peer_qpn_));
    std::span<const std::byte> datagram{receives_.data() + slot * receive_slot_bytes_ + kGrhBytes,
                                        wc.byte_len - kGrhBytes};
    auto arrival = read_datagram(datagram);
    if (auto* reason = std::get_if<std::string>(&arrival))
        fail(fmt::format("a datagram failed its check: {}", *reason));
    const Arrival& what = std::get<Arrival>(arrival);
    if (const auto* header = std::get_if<DataHeader>(&what)) {
        if (target_.empty()) fail("a data datagram arrived and no target is exposed");
        place(*header, datagram.subspan(kDataHeaderBytes));
    } else {
        const Ack& ack = std::get<Ack>(what);
        ++stats_.acks_received;
        for (std::uint32_t done : window_.acknowledge(ack, Clock::now())) {
            const Outgoing& outgoing = outgoing_.at(done);
            events_.push_back({Event::Kind::kAcknowledged, done, outgoing.header.target_offset,
                               outgoing.header.total});
            outgoing_.erase(done);
        }
    }
    post_receive(slot);  // the slot's bytes are used up: give it back
}

void Channel::flush_acks(bool all) {
    const auto now = Clock::now();
    for (auto& [id, incoming] : incoming_) {
        if (incoming.unacknowledged == 0) continue;
        if (!all && now - incoming.first_unacknowledged < settings_.ack_delay) continue;
        send_ack(incoming.reassembly.ack());
        incoming.unacknowledged = 0;
    }
}

std::vector<Event> Channel::poll() {
    std::array<ibv_wc, 32> completions{};
    const int found =
        ibv_poll_cq(cq_.get(), static_cast<int>(completions.size()), completions.data());
    check_errno(found >= 0, "ibv_poll_cq");
    for (int i = 0; i < found; ++i) {
        const ibv_wc& wc = completions[static_cast<std::size_t>(i)];
        if (wc.status != IBV_WC_SUCCESS)
            fail(fmt::format("a UD completion failed: {} (opcode {}, wr_id {})",
                             ibv_wc_status_str(wc.status), static_cast<int>(wc.opcode), wc.wr_id));
        if (wc.opcode == IBV_WC_RECV)
            on_receive(wc);
        else
            free_send_slots_.push_back(static_cast<std::uint32_t>(wc.wr_id));
    }
    flush_acks(false);
    // Sends and resends, while the send queue has room (one slot kept for an acknowledgement).
    const auto now = Clock::now();
    while (free_send_slots_.size() > 1) {
        auto transmission = window_.next(now);
        if (!transmission) break;
        post_datagram(*transmission);
    }
    stats_.resent_not_needed = window_.spurious_resends();
    std::vector<Event> events;
    events.swap(events_);
    return events;
}

}  // namespace rdmalab::unordered
