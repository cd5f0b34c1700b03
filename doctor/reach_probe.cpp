// rdma-doctor's reachability probe (see reach_probe.hpp): reads, from this host's kernel, how far
// a packet to an unreachable peer gets. The route lookup and the neighbour table over rtnetlink
// (what `ip route get` and `ip neigh` print), the interface from sysfs, and three ICMP echoes.
#include "reach_probe.hpp"

#include "rdmalab/error.hpp"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <utility>

// The rtnetlink macros (NLMSG_DATA, RTA_NEXT…) are C and cast C's way.
#pragma GCC diagnostic ignored "-Wold-style-cast"

namespace rdmalab::doctor {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Owns a socket; closed on every path.
struct Fd {
    int fd;
    explicit Fd(int descriptor) : fd(descriptor) {}
    ~Fd() {
        if (fd >= 0) close(fd);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
};

std::string ipv4_text(const void* four_bytes) {
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, four_bytes, text, sizeof text);
    return text;
}

std::string read_line(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

// Waits at most `wait` for fd to be readable; false when nothing came.
bool readable_within(int fd, milliseconds wait) {
    pollfd ready{.fd = fd, .events = POLLIN, .revents = 0};
    int rc;
    do rc = poll(&ready, 1, static_cast<int>(std::max<long>(0, wait.count())));
    while (rc < 0 && errno == EINTR);
    return rc > 0;
}

// One rtnetlink request and its answers, handed message by message to `each` until the kernel
// says done (a dump) or answers once (a get). Returns the kernel's error (0: none).
template <typename Each>
int netlink_ask(const void* request, std::size_t length, bool dump, Each each) {
    Fd sock(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
    check_errno(sock.fd >= 0, "socket(AF_NETLINK)");
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    check_errno(sendto(sock.fd, request, length, 0, reinterpret_cast<sockaddr*>(&kernel),
                       sizeof kernel) == static_cast<ssize_t>(length),
                "sendto(rtnetlink)");
    alignas(nlmsghdr) std::array<char, 32768> buffer{};
    for (;;) {
        if (!readable_within(sock.fd, milliseconds(2000)))
            fail("rtnetlink: the kernel did not answer within 2 s");
        const ssize_t got = recv(sock.fd, buffer.data(), buffer.size(), 0);
        check_errno(got >= 0, "recv(rtnetlink)");
        int remaining = static_cast<int>(got);
        for (auto* h = reinterpret_cast<nlmsghdr*>(buffer.data()); NLMSG_OK(h, remaining);
             h = NLMSG_NEXT(h, remaining)) {
            if (h->nlmsg_type == NLMSG_DONE) return 0;
            if (h->nlmsg_type == NLMSG_ERROR) {
                const auto* error = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
                return -error->error;  // 0 is an acknowledgement
            }
            each(h);
            if (!dump) return 0;
        }
    }
}

void add_attribute(nlmsghdr& header, std::size_t capacity, unsigned short type, const void* data,
                   std::size_t size) {
    auto* attribute =
        reinterpret_cast<rtattr*>(reinterpret_cast<char*>(&header) + NLMSG_ALIGN(header.nlmsg_len));
    if (NLMSG_ALIGN(header.nlmsg_len) + RTA_LENGTH(size) > capacity)
        fail("rtnetlink: the request has no room for its attribute");
    attribute->rta_type = type;
    attribute->rta_len = static_cast<unsigned short>(RTA_LENGTH(size));
    std::memcpy(RTA_DATA(attribute), data, size);
    header.nlmsg_len = NLMSG_ALIGN(header.nlmsg_len) + RTA_LENGTH(size);
}

// `ip route get PEER`: the route's kind, the interface, the gateway and the source address.
void read_route(const in_addr& peer, ReachFacts& facts, int& out_interface) {
    struct {
        nlmsghdr header;
        rtmsg route;
        char room[64];
    } request{};
    request.header.nlmsg_len = NLMSG_LENGTH(sizeof(rtmsg));
    request.header.nlmsg_type = RTM_GETROUTE;
    request.header.nlmsg_flags = NLM_F_REQUEST;
    request.route.rtm_family = AF_INET;
    request.route.rtm_dst_len = 32;
    add_attribute(request.header, sizeof request, RTA_DST, &peer, sizeof peer);
    unsigned char type = RTN_UNICAST;
    const int error = netlink_ask(&request, request.header.nlmsg_len, false, [&](nlmsghdr* h) {
        if (h->nlmsg_type != RTM_NEWROUTE) return;
        const auto* route = static_cast<const rtmsg*>(NLMSG_DATA(h));
        type = route->rtm_type;
        int length = static_cast<int>(RTM_PAYLOAD(h));
        for (auto* a = RTM_RTA(route); RTA_OK(a, length); a = RTA_NEXT(a, length)) {
            if (a->rta_type == RTA_OIF) out_interface = *static_cast<int*>(RTA_DATA(a));
            if (a->rta_type == RTA_GATEWAY) facts.gateway = ipv4_text(RTA_DATA(a));
            if (a->rta_type == RTA_PREFSRC) facts.source = ipv4_text(RTA_DATA(a));
        }
    });
    // The kernel answers a lookup that ends in a route of type unreachable, prohibit or
    // blackhole with that type's error (fib_props), and one with no route with ENETUNREACH.
    if (error != 0) facts.route_error = std::strerror(error);
    switch (error) {
        case 0:
            break;
        case ENETUNREACH:
            facts.route = RouteKind::kNone;
            return;
        case EHOSTUNREACH:
            facts.route = RouteKind::kUnreachable;
            return;
        case EACCES:
            facts.route = RouteKind::kProhibit;
            return;
        case EINVAL:
            facts.route = RouteKind::kBlackhole;
            return;
        default:
            facts.route = RouteKind::kOther;
            return;
    }
    if (type == RTN_BLACKHOLE)
        facts.route = RouteKind::kBlackhole;
    else if (type == RTN_UNREACHABLE)
        facts.route = RouteKind::kUnreachable;
    else if (type == RTN_PROHIBIT)
        facts.route = RouteKind::kProhibit;
}

void read_interface(int index, ReachFacts& facts) {
    char name[IF_NAMESIZE] = {};
    if (index <= 0 || !if_indextoname(static_cast<unsigned>(index), name)) return;
    facts.interface = name;
    const std::string base = "/sys/class/net/" + facts.interface + "/";
    const unsigned long flags = std::strtoul(read_line(base + "flags").c_str(), nullptr, 16);
    facts.interface_up = (flags & IFF_UP) != 0 && read_line(base + "operstate") != "down";
    // The carrier file cannot be read while the interface is down: no carrier then.
    facts.carrier = read_line(base + "carrier") == "1";
}

NeighbourState state_of(unsigned short nud) {
    if (nud & NUD_PERMANENT) return NeighbourState::kPermanent;
    if (nud & NUD_NOARP) return NeighbourState::kNoArp;
    if (nud & NUD_FAILED) return NeighbourState::kFailed;
    if (nud & NUD_INCOMPLETE) return NeighbourState::kIncomplete;
    if (nud & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE))
        return NeighbourState::kReachable;
    return NeighbourState::kAbsent;
}

// `ip neigh show NEXT_HOP dev IF`.
void read_neighbour(const in_addr& next_hop, int interface, ReachFacts& facts) {
    struct {
        nlmsghdr header;
        ndmsg neighbour;
    } request{};
    request.header.nlmsg_len = NLMSG_LENGTH(sizeof(ndmsg));
    request.header.nlmsg_type = RTM_GETNEIGH;
    request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    request.neighbour.ndm_family = AF_INET;
    netlink_ask(&request, request.header.nlmsg_len, true, [&](nlmsghdr* h) {
        if (h->nlmsg_type != RTM_NEWNEIGH) return;
        const auto* entry = static_cast<const ndmsg*>(NLMSG_DATA(h));
        if (entry->ndm_ifindex != interface) return;
        bool ours = false;
        std::string link_address;
        int length = static_cast<int>(h->nlmsg_len - NLMSG_LENGTH(sizeof(ndmsg)));
        for (auto* a = reinterpret_cast<rtattr*>(
                 reinterpret_cast<char*>(const_cast<ndmsg*>(entry)) + NLMSG_ALIGN(sizeof(ndmsg)));
             RTA_OK(a, length); a = RTA_NEXT(a, length)) {
            if (a->rta_type == NDA_DST && RTA_PAYLOAD(a) == sizeof(in_addr))
                ours = std::memcmp(RTA_DATA(a), &next_hop, sizeof next_hop) == 0;
            if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6) {
                const auto* b = static_cast<const unsigned char*>(RTA_DATA(a));
                link_address = fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", b[0], b[1],
                                           b[2], b[3], b[4], b[5]);
            }
        }
        if (!ours) return;
        facts.neighbour = state_of(entry->ndm_state);
        facts.link_address = link_address;
    });
}

std::uint16_t icmp_checksum(const unsigned char* bytes, std::size_t length) {
    std::uint32_t sum = 0;
    for (std::size_t i = 0; i + 1 < length; i += 2) sum += (bytes[i] << 8) | bytes[i + 1];
    if (length % 2) sum += bytes[length - 1] << 8;
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return htons(static_cast<std::uint16_t>(~sum));
}

// Three ICMP echoes, 300 ms apart, answers awaited until 1 s after the last. An unprivileged
// ping socket where the system allows one (net.ipv4.ping_group_range), else a raw socket.
void send_echoes(const in_addr& peer, ReachFacts& facts) {
    bool raw = false;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_ICMP);
    if (fd < 0) {
        raw = true;
        fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
    }
    if (fd < 0) {
        facts.echo_error = fmt::format("socket(ICMP): {}", std::strerror(errno));
        return;
    }
    Fd sock(fd);
    const std::uint16_t id = static_cast<std::uint16_t>(getpid());
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr = peer;
    constexpr unsigned kEchoes = 3;
    std::array<bool, kEchoes> answered{};
    const auto spacing = milliseconds(300);
    const auto start = Clock::now();
    const auto end = start + spacing * (kEchoes - 1) + milliseconds(1000);
    unsigned next = 0;
    while (Clock::now() < end) {
        if (next < kEchoes && Clock::now() >= start + spacing * next) {
            std::array<unsigned char, 16> packet{};
            auto* header = reinterpret_cast<icmphdr*>(packet.data());
            header->type = ICMP_ECHO;
            header->un.echo.id = htons(id);  // a ping socket sets its own
            header->un.echo.sequence = htons(static_cast<std::uint16_t>(next));
            header->checksum = icmp_checksum(packet.data(), packet.size());
            // A send the kernel refuses at once (no route, a FAILED neighbour) is an echo that
            // goes unanswered, not an error of the probe.
            sendto(sock.fd, packet.data(), packet.size(), 0, reinterpret_cast<sockaddr*>(&to),
                   sizeof to);
            ++facts.echoes_sent;
            ++next;
        }
        const auto until = next < kEchoes ? start + spacing * next : end;
        const auto wait = std::chrono::duration_cast<milliseconds>(until - Clock::now());
        if (!readable_within(sock.fd, wait)) continue;
        std::array<unsigned char, 1500> reply{};
        sockaddr_in from{};
        socklen_t from_length = sizeof from;
        const ssize_t got = recvfrom(sock.fd, reply.data(), reply.size(), 0,
                                     reinterpret_cast<sockaddr*>(&from), &from_length);
        if (got < 0 || from.sin_addr.s_addr != peer.s_addr) continue;
        std::size_t offset = 0;
        if (raw) offset = static_cast<std::size_t>(reply[0] & 0x0f) * 4;  // the IP header
        if (static_cast<std::size_t>(got) < offset + sizeof(icmphdr)) continue;
        const auto* header = reinterpret_cast<const icmphdr*>(reply.data() + offset);
        if (header->type != ICMP_ECHOREPLY || (raw && ntohs(header->un.echo.id) != id)) continue;
        const unsigned sequence = ntohs(header->un.echo.sequence);
        if (sequence < kEchoes) answered[sequence] = true;
    }
    for (bool a : answered) facts.echoes_answered += a ? 1 : 0;
}

}  // namespace

TcpOutcome tcp_outcome(int error) {
    switch (error) {
        case 0:
            return TcpOutcome::kConnected;
        case ECONNREFUSED:
            return TcpOutcome::kRefused;
        case ETIMEDOUT:
            return TcpOutcome::kSilent;
        case EHOSTUNREACH:
        case ENETUNREACH:
            return TcpOutcome::kUnreachable;
        default:
            return TcpOutcome::kOther;
    }
}

ReachFacts probe_reach(const std::string& peer, std::uint16_t port, double connect_wait_s,
                       int connect_error) {
    ReachFacts facts;
    facts.peer = peer;
    facts.port = port;
    facts.connect_wait_s = connect_wait_s;
    facts.tcp = tcp_outcome(connect_error);
    facts.tcp_error = std::strerror(connect_error);
    in_addr address{};
    if (inet_pton(AF_INET, peer.c_str(), &address) != 1) {
        // IPv6 peers: the TCP outcome alone (the layers below it are read for IPv4 only).
        facts.layers_read = false;
        facts.echo_error = "not sent: the layers below TCP are read for IPv4 peers only";
        return facts;
    }
    // The echoes first: they also give ARP its time to reach FAILED before the table is read.
    send_echoes(address, facts);
    int interface = 0;
    read_route(address, facts, interface);
    if (facts.route != RouteKind::kUnicast) return facts;
    read_interface(interface, facts);
    facts.next_hop = facts.gateway.empty() ? peer : facts.gateway;
    in_addr next_hop{};
    inet_pton(AF_INET, facts.next_hop.c_str(), &next_hop);
    read_neighbour(next_hop, interface, facts);
    return facts;
}

}  // namespace rdmalab::doctor
