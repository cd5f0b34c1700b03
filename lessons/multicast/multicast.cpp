// Lesson: multicast — UD multicast through rdma_cm: receivers join a group and each gets its own
// copy of every datagram one sender sends to it (QPN 0xFFFFFF), or loses it: nobody retransmits.
// Run: multicast server [-b LOCAL_ADDR] (one per receiver) | multicast client LOCAL_ADDR [-n COUNT]
//
// Roles: `server` (alias `receiver`) joins the group and counts; `client LOCAL_ADDR` (alias
// `sender`) joins as a send-only member and sends. Both name their OWN address: a group has no
// server to point at. --group picks the group (default 239.1.1.1, administratively scoped).
#include "rdmalab/connection.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/port_address.hpp"
#include "rdmalab/ud_datagrams.hpp"
#include "rdmalab/verbs.hpp"
#include "rdmalab/verbs_names.hpp"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <poll.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <utility>

using namespace rdmalab;
using std::chrono::milliseconds;

namespace {

constexpr int kResolveTimeoutMs = 2000;
constexpr std::uint32_t kMaxReceiveDepth = 512;  // receives each receiver keeps posted (recycled)
constexpr std::uint32_t kSendWindow = 64;        // SENDs the sender keeps in flight
constexpr int kEndCopies = 3;                    // the end datagram can be lost too: send it thrice
constexpr milliseconds kDrainQuiet{100};         // after the end datagram: stragglers' time
constexpr std::uint32_t kGroupQpn = 0xFFFFFF;    // the QPN every multicast datagram is sent to

struct MulticastOptions : ConnectionOptions {
    std::string group = "239.1.1.1";
    std::uint32_t count = 100;
    bool size_given = false;  // otherwise: the port's active MTU
};

// What rdma_cm's MULTICAST_JOIN event carries (copied before the event is acked): the address
// handle attributes that reach the group, the group's QPN and its Q_Key.
struct JoinedGroup {
    ibv_ah_attr ah_attr{};
    std::uint32_t qpn = 0;
    std::uint32_t qkey = 0;
};

JoinedGroup wait_for_join(rdma_event_channel* channel, milliseconds timeout,
                          const std::string& group) {
    pollfd ready{.fd = channel->fd, .events = POLLIN, .revents = 0};
    const int rc = poll(&ready, 1, static_cast<int>(timeout.count()));
    check_errno(rc >= 0, "poll on the rdma_cm event channel");
    if (rc == 0)
        fail(fmt::format("joining {}: no rdma_cm event within {:.1f} s", group,
                         timeout.count() / 1000.0));
    rdma_cm_event* event = nullptr;
    check_errno(rdma_get_cm_event(channel, &event) == 0, "rdma_get_cm_event");
    const rdma_cm_event_type type = event->event;
    const int status = event->status;
    const JoinedGroup joined{.ah_attr = event->param.ud.ah_attr,
                             .qpn = event->param.ud.qp_num,
                             .qkey = event->param.ud.qkey};
    rdma_ack_cm_event(event);
    if (type != RDMA_CM_EVENT_MULTICAST_JOIN)
        fail(fmt::format("joining multicast group {} failed: {} (status {}){}", group,
                         rdma_event_str(type), status,
                         type == RDMA_CM_EVENT_MULTICAST_ERROR
                             ? ": this device or fabric refused the join"
                             : ""));
    // Checked before use, like anything the network hands us.
    if (joined.qpn != kGroupQpn)
        fail(fmt::format("the join event names QPN {:#x}, not the multicast QPN {:#x}", joined.qpn,
                         kGroupQpn));
    if (!joined.ah_attr.is_global)
        fail("the join event's address handle has no GRH (no multicast GID)");
    return joined;
}

// One UD endpoint on the device that owns local_address, with a QP that rdma_cm has already
// brought to RTS (for UD, rdma_create_qp does INIT with rdma_cm's Q_Key, RTR and RTS itself).
struct GroupMember {
    EventChannel channel;
    CmId id;
    ProtectionDomain pd;
    CompletionQueue cq;
    CmQp qp;
    sockaddr_storage group{};
};

GroupMember open_member(const MulticastOptions& options, const std::string& local_address,
                        std::uint32_t send_depth, std::uint32_t receive_depth) {
    require_device_exists(options.device);
    GroupMember member;
    member.channel.reset(check_ptr(rdma_create_event_channel(), "rdma_create_event_channel"));
    rdma_cm_id* id = nullptr;
    // RDMA_PS_UDP: a UD id (rdma_cm's RC lessons use RDMA_PS_TCP).
    check_errno(rdma_create_id(member.channel.get(), &id, nullptr, RDMA_PS_UDP) == 0,
                "rdma_create_id(UDP)");
    member.id.reset(id);

    auto local = parse_ip_address(local_address, 0);
    if (!local) fail(fmt::format("'{}' is not a numeric IP address", local_address));
    member.group = *parse_ip_address(options.group, 0);  // checked when the options were parsed
    // Resolving the group from our own address binds the id to the RDMA device behind that
    // address; no packet is sent yet.
    const bool started =
        rdma_resolve_addr(id, reinterpret_cast<sockaddr*>(&*local),
                          reinterpret_cast<sockaddr*>(&member.group), kResolveTimeoutMs) == 0;
    const std::string problem = started ? std::string() : std::strerror(errno);
    CmEvent resolved{};
    if (started)
        resolved = wait_for_cm_event(member.channel.get(), milliseconds(kResolveTimeoutMs + 3000));
    if (!started || resolved.type != RDMA_CM_EVENT_ADDR_RESOLVED)
        fail(fmt::format(
            "cannot reach group {} from {}: {} (is {} this host's address on an RDMA interface?)",
            options.group, local_address, started ? rdma_event_str(resolved.type) : problem,
            local_address));
    const char* device = ibv_get_device_name(id->verbs->device);
    if (!options.device.empty() && options.device != device)
        fail(fmt::format("{} is served by device {}, not by -d {}", local_address, device,
                         options.device));

    member.pd.reset(check_ptr(ibv_alloc_pd(id->verbs), "ibv_alloc_pd"));
    member.cq.reset(check_ptr(
        ibv_create_cq(id->verbs, static_cast<int>(send_depth + receive_depth), nullptr, nullptr, 0),
        "ibv_create_cq"));
    ibv_qp_init_attr init{};
    init.send_cq = member.cq.get();
    init.recv_cq = member.cq.get();
    init.qp_type = IBV_QPT_UD;
    init.cap.max_send_wr = send_depth;
    init.cap.max_recv_wr = receive_depth;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    check_errno(rdma_create_qp(id, member.pd.get(), &init) == 0, "rdma_create_qp(UD)");
    member.qp.reset(id);
    return member;
}

// Membership in the group, from rdma_join_multicast until rdma_leave_multicast (which also
// detaches the QP). Leaving must come before the QP is destroyed — a QP still attached to a group
// cannot be — so the membership is declared after the GroupMember and leaves on every path.
class Membership {
  public:
    Membership(rdma_cm_id* id, sockaddr_storage& group) : id_(id), group_(&group) {}
    Membership(const Membership&) = delete;
    Membership& operator=(const Membership&) = delete;
    ~Membership() {
        if (id_ && rdma_leave_multicast(id_, reinterpret_cast<sockaddr*>(group_)) != 0)
            report_release_failure("rdma_leave_multicast", errno);
    }
    void leave() {
        check_errno(rdma_leave_multicast(std::exchange(id_, nullptr),
                                         reinterpret_cast<sockaddr*>(group_)) == 0,
                    "rdma_leave_multicast");
    }

  private:
    rdma_cm_id* id_;
    sockaddr_storage* group_;
};

// The port's active MTU: no UD datagram, multicast included, may be larger.
int active_mtu(const rdma_cm_id* id) {
    ibv_port_attr port{};
    check_ibv(ibv_query_port(id->verbs, id->port_num, &port), "ibv_query_port");
    return mtu_bytes(port.active_mtu);
}

std::size_t datagram_size(const MulticastOptions& options, int mtu, const char* device) {
    const std::size_t size = options.size_given ? options.size : static_cast<std::size_t>(mtu);
    if (size > static_cast<std::size_t>(mtu))
        fail(fmt::format(
            "datagram size {} is larger than the active MTU of {} ({} bytes): a UD datagram, "
            "multicast too, must fit in one packet (use -s {} or less)",
            size, device, mtu, mtu));
    return size;
}

std::uint32_t qp_qkey(ibv_qp* qp) {
    ibv_qp_attr attributes{};
    ibv_qp_init_attr init{};
    check_ibv(ibv_query_qp(qp, &attributes, IBV_QP_QKEY, &init), "ibv_query_qp");
    return attributes.qkey;
}

// ---- Receiver: join, then count and check every datagram that arrives.

int run_receiver(const MulticastOptions& options) {
    std::string local_address = options.bind_address;
    if (local_address.empty()) {
        auto found = first_rdma_ipv4_address(options.device);
        if (!found) fail("no RDMA port carries an IPv4 address: give one to join from with -b");
        local_address = *found;
    }
    GroupMember member = open_member(options, local_address, 1, kMaxReceiveDepth);
    const char* device = ibv_get_device_name(member.id->verbs->device);
    const int mtu = active_mtu(member.id.get());
    const std::size_t capacity = datagram_size(options, mtu, device);

    // Receives go up BEFORE the join: datagrams can arrive the moment the QP is attached.
    // Each buffer is 40 + capacity bytes: GRH area, then payload. Only our NIC writes it.
    const std::size_t slot = kGrhBytes + capacity;
    const std::uint32_t depth = kMaxReceiveDepth;
    Buffer slots(slot * depth);
    MemoryRegion slots_mr{
        ibv_reg_mr(member.pd.get(), slots.data(), slots.size(), IBV_ACCESS_LOCAL_WRITE)};
    check_ptr(slots_mr.get(), "ibv_reg_mr(receive slots)");
    auto post_receive = [&](std::uint64_t index) {
        ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(slots.data() + index * slot),
                    .length = static_cast<std::uint32_t>(slot),
                    .lkey = slots_mr->lkey};
        ibv_recv_wr receive{.wr_id = index, .next = nullptr, .sg_list = &sge, .num_sge = 1};
        ibv_recv_wr* bad = nullptr;
        check_ibv(ibv_post_recv(member.qp->qp, &receive, &bad), "ibv_post_recv");
    };
    for (std::uint32_t i = 0; i < depth; ++i) post_receive(i);

    // #region multicast-join
    // The join: rdma_cm makes this port a member (on RoCE an IGMP report; on InfiniBand the SA)
    // and, when the event arrives, librdmacm attaches our QP to the group (ibv_attach_mcast).
    check_errno(rdma_join_multicast(member.id.get(), reinterpret_cast<sockaddr*>(&member.group),
                                    nullptr) == 0,
                "rdma_join_multicast");
    Membership membership(member.id.get(), member.group);
    const JoinedGroup joined =
        wait_for_join(member.channel.get(), options.timeout(), options.group);
    // A member QP delivers only datagrams that carry its Q_Key: it must be the group's.
    const std::uint32_t our_qkey = qp_qkey(member.qp->qp);
    if (our_qkey != joined.qkey)
        fail(fmt::format("our QP's Q_Key {:#x} is not the group's {:#x}", our_qkey, joined.qkey));
    // #endregion multicast-join
    fmt::print(
        "server: listening on multicast group {} as a receiver: joined through {} ({} port {}), "
        "group GID {}, QPN {:#x}, Q_Key {:#x}; {} receives of {} + {} bytes posted\n",
        options.group, local_address, device, member.id->port_num,
        format_gid(joined.ah_attr.grh.dgid), joined.qpn, joined.qkey, depth, kGrhBytes, capacity);
    std::fflush(stdout);

    // Sized from the first datagram's count (which read_datagram has checked).
    std::optional<SequenceTally> tally;
    bool ended = false;
    std::uint32_t arrivals = 0;
    using Clock = std::chrono::steady_clock;
    auto last_event = Clock::now();
    for (;;) {
        std::array<ibv_wc, 16> wcs{};
        const int found = ibv_poll_cq(member.cq.get(), static_cast<int>(wcs.size()), wcs.data());
        if (found < 0) fail("ibv_poll_cq failed");
        for (const ibv_wc& wc : std::span(wcs).first(static_cast<std::size_t>(found))) {
            if (wc.status != IBV_WC_SUCCESS)
                fail(fmt::format("a receive: {}", failed_completion(wc)));
            if (wc.opcode != IBV_WC_RECV || wc.wr_id >= depth || wc.byte_len < kGrhBytes)
                fail(fmt::format("unexpected completion: opcode {}, wr_id {}, {} bytes",
                                 static_cast<int>(wc.opcode), wc.wr_id, wc.byte_len));
            std::span<const std::byte> buffer{slots.data() + wc.wr_id * slot, wc.byte_len};
            auto checked = read_datagram(buffer.subspan(kGrhBytes));
            if (auto* reason = std::get_if<std::string>(&checked))
                fail(fmt::format("a {}-byte datagram from QP {:#x} failed its check: {}",
                                 wc.byte_len - kGrhBytes, wc.src_qp, *reason));
            const auto& datagram = std::get<Datagram>(checked);
            if (!tally) tally.emplace(datagram.count);
            if (datagram.count != tally->count())
                fail(fmt::format("datagram {} announces {} datagrams, earlier ones said {}",
                                 datagram.sequence, datagram.count, tally->count()));
            if (arrivals++ == 0) {
                auto header = read_network_header(buffer.first<kGrhBytes>());
                fmt::print(
                    "server: first datagram from QP {:#x}: byte_len {} = {} (GRH area{}) + {} "
                    "payload\n",
                    wc.src_qp, wc.byte_len, kGrhBytes,
                    header ? fmt::format(": {} header {} -> {}", header->ipv4 ? "IPv4" : "GRH",
                                         header->source, header->destination)
                           : std::string(", no network header"),
                    wc.byte_len - kGrhBytes);
            }
            if (datagram.kind == DatagramKind::kEnd)
                ended = true;  // later copies change nothing
            else
                tally->record(datagram.sequence);
            post_receive(wc.wr_id);
            last_event = Clock::now();
        }
        if (found > 0) continue;
        const auto quiet = Clock::now() - last_event;
        if (ended && quiet > kDrainQuiet) break;
        const double limit = arrivals == 0 ? options.accept_timeout_s : options.timeout_s;
        if (quiet > to_milliseconds(limit))
            fail(
                tally
                    ? fmt::format("no end datagram within {:.1f} s of the last datagram (received "
                                  "{} of {})",
                                  limit, tally->received(), tally->count())
                    : fmt::format(
                          "no datagram arrived for group {} within {:.1f} s (is a sender running?)",
                          options.group, limit));
        std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    membership.leave();

    fmt::print(
        "server: received {} of {} datagrams (lost {}, duplicates {}, out of order {}); every one "
        "that arrived was verified\n",
        tally->received(), tally->count(), tally->lost(), tally->duplicates(),
        tally->out_of_order());
    if (tally->received() == 0) fail("not one data datagram arrived, only the end");
    fmt::print("server: left group {}; multicast is UD: each receiver counts its own losses\n",
               options.group);
    return 0;
}

// ---- Sender: a send-only join yields the group's address handle; then plain UD SENDs.

int run_sender(const MulticastOptions& options) {
    const std::uint32_t window = std::min(kSendWindow, options.count + kEndCopies);
    GroupMember member = open_member(options, options.server_address, window, 1);
    const char* device = ibv_get_device_name(member.id->verbs->device);
    const std::size_t size = datagram_size(options, active_mtu(member.id.get()), device);

    // A send-only full member may send to the group but is not attached to it: its own
    // datagrams do not come back to it.
    // #region multicast-send-only
    // A sender need not receive: a send-only full member joins without attaching its QP, and
    // the join's event gives the group's address (a multicast GID), QPN and Q_Key.
    rdma_cm_join_mc_attr_ex join{};
    join.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS;
    join.join_flags = RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER;
    join.addr = reinterpret_cast<sockaddr*>(&member.group);
    check_errno(rdma_join_multicast_ex(member.id.get(), &join, nullptr) == 0,
                "rdma_join_multicast_ex");
    Membership membership(member.id.get(), member.group);
    JoinedGroup joined = wait_for_join(member.channel.get(), options.timeout(), options.group);
    AddressHandle ah{check_ptr(ibv_create_ah(member.pd.get(), &joined.ah_attr), "ibv_create_ah")};
    // #endregion multicast-send-only
    fmt::print(
        "client: joined {} as a send-only member through {} ({} port {}): group GID {}, QPN {:#x}, "
        "Q_Key {:#x}\n",
        options.group, options.server_address, device, member.id->port_num,
        format_gid(joined.ah_attr.grh.dgid), joined.qpn, joined.qkey);

    Buffer slots(size * window);
    // The NIC only reads the send slots: access flags 0.
    MemoryRegion slots_mr{ibv_reg_mr(member.pd.get(), slots.data(), slots.size(), 0)};
    check_ptr(slots_mr.get(), "ibv_reg_mr(send slots)");
    std::uint32_t in_flight = 0;
    auto send_datagram = [&](std::uint32_t index, const Datagram& datagram) {
        if (in_flight == window) {
            wait_for_completion(member.cq.get(), options.timeout(), "a multicast SEND");
            --in_flight;
        }
        std::span<std::byte> message{slots.data() + (index % window) * size, size};
        write_datagram(message, datagram);
        ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(message.data()),
                    .length = static_cast<std::uint32_t>(size),
                    .lkey = slots_mr->lkey};
        // #region multicast-post
        ibv_send_wr wr{};
        wr.wr_id = index;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_SEND;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.wr.ud.ah = ah.get();              // the group's address (its multicast GID)
        wr.wr.ud.remote_qpn = joined.qpn;    // 0xFFFFFF: every QP attached to the group
        wr.wr.ud.remote_qkey = joined.qkey;  // the group's Q_Key
        // #endregion multicast-post
        ibv_send_wr* bad = nullptr;
        check_ibv(ibv_post_send(member.qp->qp, &wr, &bad), "ibv_post_send(multicast SEND)");
        ++in_flight;
    };
    for (std::uint32_t sequence = 0; sequence < options.count; ++sequence)
        send_datagram(sequence,
                      {.kind = DatagramKind::kData, .sequence = sequence, .count = options.count});
    for (int copy = 0; copy < kEndCopies; ++copy) {
        std::this_thread::sleep_for(milliseconds(5));  // apart, so one bad moment cannot drop all
        send_datagram(
            options.count + static_cast<std::uint32_t>(copy),
            {.kind = DatagramKind::kEnd, .sequence = options.count, .count = options.count});
    }
    for (; in_flight > 0; --in_flight)
        wait_for_completion(member.cq.get(), options.timeout(), "a multicast SEND");
    membership.leave();
    fmt::print(
        "client: sent {} datagrams of {} bytes (and {} end marks) to group {}; no receiver "
        "acknowledges a multicast datagram: each one reports what it got\n",
        options.count, size, kEndCopies, options.group);
    return 0;
}

bool is_multicast(const std::string& text) {
    auto address = parse_ip_address(text, 0);
    if (!address) return false;
    if (address->ss_family == AF_INET)  // 224.0.0.0/4
        return ntohl(reinterpret_cast<const sockaddr_in*>(&*address)->sin_addr.s_addr) >> 28 == 0xE;
    // ff00::/8
    return reinterpret_cast<const sockaddr_in6*>(&*address)->sin6_addr.s6_addr[0] == 0xff;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("multicast", [&] {
        CommandLine cli{"UD multicast through rdma_cm: one sender, any number of receivers",
                        "multicast"};
        MulticastOptions options;
        cli.add_connection_options(options);
        cli.existing("--size")
            .description(
                "client: bytes per datagram; server: the most it accepts (default: the port's "
                "active MTU)")
            .size_at_least(kDatagramHeaderBytes,
                           fmt::format("a datagram needs at least {} bytes for its header",
                                       kDatagramHeaderBytes));
        cli.option("--group", options.group, "multicast group address")
            .check([](const std::string& text) {
                return is_multicast(text)
                           ? std::string()
                           : "'" + text +
                                 "' is not a multicast address (IPv4 224.0.0.0/4, IPv6 ff00::/8)";
            })
            .show_default();
        auto receiver = cli.subcommand("server");
        receiver.alias("receiver");
        receiver.describe("join the group and count what arrives (start receivers first)");
        receiver.existing("--bind").description(
            "local IP address to join from (default: the first IPv4 address of an RDMA port)");
        receiver.existing("--accept-timeout").description("seconds to wait for the first datagram");
        auto sender = cli.subcommand("client");
        sender.alias("sender");
        sender.describe("join as a send-only member and send the datagrams");
        sender.existing("address").description(
            "this host's IP address on the RDMA interface to send from");
        sender.option("-n,--iters", options.count, "number of datagrams")
            .range(1u, kMaxDatagramCount)
            .show_default();
        cli.parse_or_exit(argc, argv);
        options.size_given = cli.given("--size");
        return options.server ? run_receiver(options) : run_sender(options);
    });
}
