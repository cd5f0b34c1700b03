// rdma-victim: the RDMA server the security chapter attacks, and its legitimate client, written
// the way many first programs are: QPs connected by hand over TCP, one registered pool whose
// slots every client writes into under one rkey, and (in its naive form) a client that starts its
// packet sequence numbers at 0.
//   rdma-victim server --clients N [--port P] [--keys shared|per-client] [--timeout S]
//   rdma-victim client --server ADDR [--port P] [--psn zero|random] [--ready-file F]
//                      [--go-file F] [--timeout S]
// The server serves its clients one after the other: each gets a QP and a 64-byte slot it may
// RDMA WRITE, writes its message, and SENDs a checksum of what it wrote. The server then says, for
// each client, whether its slot holds those bytes, and the state of that client's QP:
//   victim: client K: slot holds what it wrote (64 bytes, checksum 0x…); QP 0x… RTS
//   victim: client K: slot holds bytes it did not write: "…"; QP 0x… RTS
//   victim: client K: its done message failed: …; QP 0x… ERROR
// The client WRITEs its message when --go-file exists (after saying it is connected in
// --ready-file), and exits 0 only if its WRITE and its SEND both completed successfully.
#include "victim_protocol.hpp"

#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/port_address.hpp"
#include "rdmalab/qp_bringup.hpp"
#include "rdmalab/qp_transitions.hpp"
#include "rdmalab/tcp_exchange.hpp"
#include "rdmalab/verbs.hpp"
#include "rdmalab/verbs_names.hpp"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <array>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

using namespace rdmalab;
using namespace rdmalab::security;
using std::chrono::milliseconds;

namespace {

// The slot's bytes as text a reader can see, non-printable bytes as '.'.
std::string printable(const std::uint8_t* bytes, std::size_t size) {
    std::string text;
    for (std::size_t i = 0; i < size && bytes[i] != 0; ++i)
        text += (bytes[i] >= 0x20 && bytes[i] < 0x7f) ? static_cast<char>(bytes[i]) : '.';
    return text;
}

QueuePair create_rc_qp(ibv_pd* pd, ibv_cq* cq) {
    ibv_qp_init_attr init{};
    init.send_cq = cq;
    init.recv_cq = cq;
    init.qp_type = IBV_QPT_RC;
    init.cap = {.max_send_wr = 4,
                .max_recv_wr = 4,
                .max_send_sge = 1,
                .max_recv_sge = 1,
                .max_inline_data = 0};
    return QueuePair{check_ptr(ibv_create_qp(pd, &init), "ibv_create_qp")};
}

void post_receive(ibv_qp* qp, void* buffer, std::uint32_t length, std::uint32_t lkey) {
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(buffer), length, lkey};
    ibv_recv_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    check_ibv(ibv_post_recv(qp, &wr, &bad), "ibv_post_recv");
}

struct Settings {
    QpOptions connection;
    unsigned clients = 1;
    std::string keys = "shared";
    std::string psn = "zero";
    std::string ready_file, go_file;
};

int serve(const Settings& s) {
    const Context context = open_device(s.connection.device);
    const PortAddress local = choose_port_address(context.get(), 1, s.connection.gid_index);
    const ProtectionDomain pd{check_ptr(ibv_alloc_pd(context.get()), "ibv_alloc_pd")};
    // One pool, a 64-byte slot per client; with --keys shared one registration (one rkey) for all.
    std::vector<std::uint8_t> pool(std::size_t{s.clients} * kSlotBytes, 0);
    const unsigned remote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    MemoryRegion pool_mr;
    if (s.keys == "shared")
        pool_mr.reset(
            check_ptr(ibv_reg_mr(pd.get(), pool.data(), pool.size(), remote), "ibv_reg_mr(pool)"));
    fmt::print("victim: listening on TCP port {} for {} client(s), keys {}\n", s.connection.port,
               s.clients, s.keys);
    std::fflush(stdout);
    int failures = 0;
    for (unsigned k = 1; k <= s.clients; ++k) {
        TcpExchange tcp = TcpExchange::accept_one(s.connection.port, "", s.connection.timeout());
        std::uint8_t* slot = pool.data() + std::size_t{k - 1} * kSlotBytes;
        MemoryRegion slot_mr;  // --keys per-client: a registration (and an rkey) per slot
        if (s.keys != "shared")
            slot_mr.reset(
                check_ptr(ibv_reg_mr(pd.get(), slot, kSlotBytes, remote), "ibv_reg_mr(slot)"));
        const ibv_mr& mr = s.keys == "shared" ? *pool_mr : *slot_mr;
        const CompletionQueue cq{
            check_ptr(ibv_create_cq(context.get(), 8, nullptr, nullptr, 0), "ibv_create_cq")};
        QueuePair qp = create_rc_qp(pd.get(), cq.get());
        apply_transition(qp.get(), init_transition(local, IBV_ACCESS_REMOTE_WRITE), "victim");
        std::uint32_t done = 0;
        const MemoryRegion done_mr{check_ptr(
            ibv_reg_mr(pd.get(), &done, sizeof done, IBV_ACCESS_LOCAL_WRITE), "ibv_reg_mr(done)")};
        post_receive(qp.get(), &done, sizeof done, done_mr->lkey);
        const QpEndpoint ours = local_endpoint(
            qp.get(), local, reinterpret_cast<std::uintptr_t>(slot), mr.rkey, kSlotBytes);
        connect_qp(qp.get(), tcp, local, ours, PeerBuffer::kNone, Reliability{}, "victim");
        const std::string who = fmt::format("victim: client {}", k);
        std::string verdict;
        try {
            const ibv_wc wc = wait_for_any_completion(cq.get(), s.connection.timeout(), "done");
            if (wc.status != IBV_WC_SUCCESS) {
                verdict = fmt::format("its done message failed: {}", ibv_wc_status_str(wc.status));
            } else if (ntohl(done) == slot_checksum(std::span(slot, kSlotBytes))) {
                verdict = fmt::format("slot holds what it wrote ({} bytes, checksum {:#010x})",
                                      kSlotBytes, ntohl(done));
            } else {
                verdict = fmt::format("slot holds bytes it did not write: \"{}\"",
                                      printable(slot, kSlotBytes));
                ++failures;
            }
        } catch (const std::exception& e) {
            verdict = fmt::format("no done message: {}", e.what());
        }
        fmt::print("{}: {}; QP {:#x} {}\n", who, verdict, qp->qp_num,
                   qp_state_name(query_qp_state(qp.get())));
        std::fflush(stdout);
    }
    return failures == 0 ? 0 : 1;
}

int run_client(const Settings& s) {
    QpResources r = create_qp_resources(s.connection, IBV_QPT_RC, 4, 4, "client");
    apply_transition(r.qp.get(), init_transition(r.local, 0), "client");
    QpEndpoint ours = local_endpoint(r);
    if (s.psn == "zero") ours.psn = 0;  // the naive client: every connection starts at 0
    // The server serves one client at a time, listening again between them: a refused
    // connection is tried again for the whole timeout.
    TcpExchange tcp = TcpExchange::connect_to(s.connection.server_address, s.connection.port,
                                              s.connection.timeout(), s.connection.timeout());
    const QpEndpoint slot = connect_qp(r.qp.get(), tcp, r.local, ours, PeerBuffer::kAdvertised,
                                       Reliability{}, "client");
    fmt::print("client: connected to QP {:#x}; my first PSN {:#08x}\n", slot.qpn, ours.psn);
    std::fflush(stdout);
    if (!s.ready_file.empty()) std::ofstream(s.ready_file) << "connected\n";
    const auto give_up = std::chrono::steady_clock::now() + s.connection.timeout();
    while (!s.go_file.empty() && !std::filesystem::exists(s.go_file)) {
        if (std::chrono::steady_clock::now() > give_up) fail("no go file within the timeout");
        std::this_thread::sleep_for(milliseconds(50));
    }
    // The client's message, a whole slot; then the checksum of it, as a SEND.
    std::array<std::uint8_t, kSlotBytes> message{};
    const std::string text = "client 2 wrote this, and nobody else";
    std::memcpy(message.data(), text.data(), text.size());
    const MemoryRegion message_mr{check_ptr(
        ibv_reg_mr(r.pd.get(), message.data(), message.size(), 0), "ibv_reg_mr(message)")};
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(message.data()), kSlotBytes, message_mr->lkey};
    ibv_send_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = slot.address;
    wr.wr.rdma.rkey = slot.rkey;
    ibv_send_wr* bad = nullptr;
    check_ibv(ibv_post_send(r.qp.get(), &wr, &bad), "ibv_post_send(WRITE)");
    const ibv_wc written = wait_for_any_completion(r.cq.get(), s.connection.timeout(), "the WRITE");
    fmt::print("client: my WRITE completed: {}\n", ibv_wc_status_str(written.status));
    if (written.status != IBV_WC_SUCCESS) return 1;
    const ibv_wc_status sent = send_done(r.qp.get(), r.pd.get(), r.cq.get(), slot_checksum(message),
                                         s.connection.timeout());
    fmt::print("client: my SEND completed: {}\n", ibv_wc_status_str(sent));
    return sent == IBV_WC_SUCCESS ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("rdma-victim", [&] {
        CLI::App app{"The RDMA server the security chapter attacks, and its legitimate client"};
        app.require_subcommand(1);
        Settings s;
        s.connection.port = 18600;
        s.connection.timeout_s = 20;
        auto* server = app.add_subcommand("server", "serve clients one after the other");
        server->add_option("--clients", s.clients, "how many clients (1..16)")
            ->check(CLI::Range(1, 16));
        server->add_option("--keys", s.keys, "shared: one rkey for every slot; per-client")
            ->check(CLI::IsMember({"shared", "per-client"}));
        auto* client = app.add_subcommand("client", "connect, write a message, send its checksum");
        client->add_option("--server", s.connection.server_address, "the server's address")
            ->required();
        client->add_option("--psn", s.psn, "zero: start at PSN 0; random")
            ->check(CLI::IsMember({"zero", "random"}));
        client->add_option("--ready-file", s.ready_file, "written once connected");
        client->add_option("--go-file", s.go_file, "wait for this file before writing");
        for (CLI::App* sub : {server, client}) {
            sub->add_option("-p,--port", s.connection.port, "TCP port")
                ->check(CLI::Range(1, 65535));
            sub->add_option("--timeout", s.connection.timeout_s, "seconds each wait may take")
                ->check(CLI::Range(1.0, 600.0));
        }
        try {
            app.parse(argc, argv);
        } catch (const CLI::ParseError& e) {
            std::exit(app.exit(e));
        }
        return server->parsed() ? serve(s) : run_client(s);
    });
}
