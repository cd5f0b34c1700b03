// rdma-victim: the RDMA server the security chapter attacks, and its legitimate client, written
// the way many first programs are: QPs connected by hand over TCP, one registered pool whose
// slots every client writes into under one rkey, and (in its naive form) a client that starts its
// packet sequence numbers at 0. Options turn on one defence at a time.
//   rdma-victim server --clients N [--port P] [--keys shared|per-client|window]
//                      [--pd shared|per-client] [--secret none|remote-read|local] [--idle S]
//                      [--timeout S]
//   rdma-victim client --server ADDR [--port P] [--psn zero|random] [--ready-file F]
//                      [--go-file F] [--timeout S]
// The server takes its clients one after the other and keeps every connection until it exits
// (a later client can reach an earlier one's memory, if its keys allow). Each client gets a QP
// and a 64-byte slot it may RDMA WRITE, writes its message, and SENDs a checksum of what it
// wrote; the server then says whether the slot holds those bytes, and the state of that QP:
//   victim: client K: slot holds what it wrote (64 bytes, checksum 0x…); QP 0x… RTS
//   victim: client K: slot holds bytes it did not write: "…"; QP 0x… RTS
//   victim: client K: its done message failed: …; QP 0x… ERROR
// and, when it exits, whether the slots it confirmed still hold what their clients wrote:
//   victim: at exit, client K's slot holds bytes it did not write: "…"
//   victim: at exit, N of M confirmed slots unchanged
// The keys: one registration for the pool (shared), one per slot (per-client), or a type-2
// memory window per client over its slot, bound to that client's QP before it is told the
// connection is ready and invalidated once it is done (window). --pd per-client gives every
// client a protection domain of its own. --secret registers 64 bytes just before slot 1 that no
// client is given a key for: with remote reads allowed (remote-read), or local access only.
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

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <array>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
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

// Posts one signaled work request that touches no remote memory (a window's bind or its
// invalidation) and waits for its completion, which must succeed.
void post_and_complete(ibv_qp* qp, ibv_cq* cq, ibv_send_wr& wr, std::chrono::milliseconds timeout,
                       const char* what) {
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    check_ibv(ibv_post_send(qp, &wr, &bad), fmt::format("ibv_post_send({})", what));
    const ibv_wc wc = wait_for_any_completion(cq, timeout, what);
    if (wc.status != IBV_WC_SUCCESS)
        fail(fmt::format("{} failed: {}", what, ibv_wc_status_str(wc.status)));
}

struct Settings {
    QpOptions connection;
    unsigned clients = 1;
    std::string keys = "shared";
    std::string pd = "shared";
    std::string secret = "none";
    double idle_s = 0;
    std::string psn = "zero";
    std::string ready_file, go_file;
};

// One client's connection and what it was given, kept until the server exits. Declared in
// creation order, released in reverse: the window before the region under it, the QP before
// its CQ, the client's own PD last.
struct Connection {
    ProtectionDomain own_pd;  // --pd per-client
    CompletionQueue cq;
    QueuePair qp;
    MemoryRegion slot_mr;  // --keys per-client, and under the window with --pd per-client
    MemoryWindow window;   // --keys window
    std::optional<ControlWord> done;  // the client's "done": its slot's checksum
    std::array<std::uint8_t, kSlotBytes> confirmed_bytes{};  // the slot as its checksum confirmed
    bool confirmed = false;
};

// The secret's 64 bytes: text no one can know in advance (16 hex digits from the kernel's
// random source), so a reader who prints it has read it.
void fill_secret(std::uint8_t* secret) {
    std::random_device random;
    const std::string text = fmt::format("the server's secret {:08x}{:08x}", random(), random());
    std::memcpy(secret, text.data(), text.size());
}

// --keys and --pd: the registration every slot's key comes from when it is one for all.
MemoryRegion register_pool(const Settings& s, ibv_pd* pd, std::uint8_t* pool, std::size_t size) {
    unsigned access = 0;
    if (s.keys == "shared") access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    // Windows grant the remote access; the region under them only allows binding them.
    if (s.keys == "window" && s.pd == "shared")
        access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND;
    if (access == 0) return MemoryRegion{};
    return MemoryRegion{check_ptr(ibv_reg_mr(pd, pool, size, access), "ibv_reg_mr(pool)")};
}

int serve(const Settings& s) {
    const Context context = open_device(s.connection.device);
    const PortAddress local = choose_port_address(context.get(), 1, s.connection.gid_index);
    const ProtectionDomain pd{check_ptr(ibv_alloc_pd(context.get()), "ibv_alloc_pd")};
    // The server's memory: its secret, then a 64-byte slot per client.
    std::vector<std::uint8_t> memory(std::size_t{s.clients + 1} * kSlotBytes, 0);
    std::uint8_t* const secret = memory.data();
    std::uint8_t* const pool = memory.data() + kSlotBytes;
    MemoryRegion secret_mr;
    if (s.secret != "none") {
        fill_secret(secret);
        const unsigned access = s.secret == "remote-read"
                                    ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ
                                    : IBV_ACCESS_LOCAL_WRITE;
        secret_mr.reset(
            check_ptr(ibv_reg_mr(pd.get(), secret, kSlotBytes, access), "ibv_reg_mr(secret)"));
        // Registered for local access only, a region has no remote key (rxe reports 0); its
        // lkey is the key it would have had, index and random byte alike.
        fmt::print("victim: secret at {:#x}, rkey {:#x}, lkey {:#x}, {}: \"{}\"\n",
                   reinterpret_cast<std::uintptr_t>(secret), secret_mr->rkey, secret_mr->lkey,
                   s.secret == "remote-read" ? "REMOTE_READ" : "local access only",
                   printable(secret, kSlotBytes));
    }
    const MemoryRegion pool_mr =
        register_pool(s, pd.get(), pool, std::size_t{s.clients} * kSlotBytes);
    TcpListener listener(s.connection.port, "");
    fmt::print("victim: listening on TCP port {} for {} client(s), keys {}, PD {}\n",
               s.connection.port, s.clients, s.keys, s.pd);
    std::fflush(stdout);
    // The QPs allow what the naive server allows: remote writes, and reads where it has a
    // secret; what a packet may touch is then up to the keys and the registrations.
    const unsigned qp_access =
        IBV_ACCESS_REMOTE_WRITE | (s.secret != "none" ? unsigned{IBV_ACCESS_REMOTE_READ} : 0u);
    Reliability reliability;
    reliability.max_dest_rd_atomic = 1;
    std::vector<std::unique_ptr<Connection>> connections;
    int failures = 0;
    for (unsigned k = 1; k <= s.clients; ++k) {
        std::optional<TcpExchange> tcp;
        if (s.idle_s > 0 && k > 1) {
            tcp = listener.try_accept(milliseconds(static_cast<int>(s.idle_s * 1000)),
                                      s.connection.timeout());
            if (!tcp) {
                fmt::print("victim: no client for {} s: {} served\n", s.idle_s, k - 1);
                break;
            }
        } else {
            tcp = listener.accept(s.connection.timeout());
        }
        auto& c = *connections.emplace_back(std::make_unique<Connection>());
        ibv_pd* client_pd = pd.get();
        if (s.pd == "per-client") {
            c.own_pd.reset(check_ptr(ibv_alloc_pd(context.get()), "ibv_alloc_pd(client)"));
            client_pd = c.own_pd.get();
        }
        std::uint8_t* slot = pool + std::size_t{k - 1} * kSlotBytes;
        c.cq.reset(
            check_ptr(ibv_create_cq(context.get(), 8, nullptr, nullptr, 0), "ibv_create_cq"));
        c.qp = create_rc_qp(client_pd, c.cq.get());
        std::uint32_t rkey = s.keys == "shared" ? pool_mr->rkey : 0;
        if (s.keys == "per-client")
            c.slot_mr.reset(check_ptr(ibv_reg_mr(client_pd, slot, kSlotBytes,
                                                 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE),
                                      "ibv_reg_mr(slot)"));
        if (s.keys == "window") {
            if (s.pd == "per-client")  // a window lives in its region's PD
                c.slot_mr.reset(check_ptr(ibv_reg_mr(client_pd, slot, kSlotBytes,
                                                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND),
                                          "ibv_reg_mr(slot, MW_BIND)"));
            c.window.reset(
                check_ptr(ibv_alloc_mw(client_pd, IBV_MW_TYPE_2), "ibv_alloc_mw(IBV_MW_TYPE_2)"));
            // A type-2 window's key is chosen by its binder: the next one after its current key.
            rkey = ibv_inc_rkey(c.window->rkey);
        }
        if (s.keys == "per-client") rkey = c.slot_mr->rkey;
        apply_transition(c.qp.get(), init_transition(local, qp_access), "victim");
        c.done.emplace(client_pd, ControlWord::Direction::kReceive);
        c.done->post_receive(c.qp.get(), 0);
        // connect_qp's steps, with the window bound between RTS (a bind is a work request on
        // the client's QP) and telling the client the connection is ready.
        const QpEndpoint ours = local_endpoint(
            c.qp.get(), local, reinterpret_cast<std::uintptr_t>(slot), rkey, kSlotBytes);
        const QpEndpoint remote =
            exchange_endpoints(*tcp, local, ours, PeerBuffer::kNone, "victim");
        apply_transition(c.qp.get(), rtr_transition(IBV_QPT_RC, local, remote, reliability),
                         "victim");
        apply_transition(c.qp.get(), rts_transition(IBV_QPT_RC, ours.psn, reliability), "victim");
        if (c.window) {
            ibv_send_wr bind{};
            bind.opcode = IBV_WR_BIND_MW;
            bind.bind_mw.mw = c.window.get();
            bind.bind_mw.rkey = rkey;
            bind.bind_mw.bind_info = {.mr = c.slot_mr ? c.slot_mr.get() : pool_mr.get(),
                                      .addr = reinterpret_cast<std::uintptr_t>(slot),
                                      .length = kSlotBytes,
                                      .mw_access_flags = IBV_ACCESS_REMOTE_WRITE};
            post_and_complete(c.qp.get(), c.cq.get(), bind, s.connection.timeout(), "BIND_MW");
        }
        exchange_ready(*tcp);
        const std::string who = fmt::format("victim: client {}", k);
        std::string verdict;
        try {
            const ibv_wc wc = wait_for_any_completion(c.cq.get(), s.connection.timeout(), "done");
            if (wc.status != IBV_WC_SUCCESS) {
                verdict = fmt::format("its done message failed: {}", ibv_wc_status_str(wc.status));
            } else if (const std::uint32_t checksum =
                           c.done->received_value(wc, "the done message");
                       checksum == slot_checksum(std::span(slot, kSlotBytes))) {
                verdict = fmt::format("slot holds what it wrote ({} bytes, checksum {:#010x})",
                                      kSlotBytes, checksum);
                std::memcpy(c.confirmed_bytes.data(), slot, kSlotBytes);
                c.confirmed = true;
            } else {
                verdict = fmt::format("slot holds bytes it did not write: \"{}\"",
                                      printable(slot, kSlotBytes));
                ++failures;
            }
            if (c.window && wc.status == IBV_WC_SUCCESS) {
                // The client is done: its key must open nothing from now on.
                ibv_send_wr invalidate{};
                invalidate.opcode = IBV_WR_LOCAL_INV;
                invalidate.invalidate_rkey = rkey;
                post_and_complete(c.qp.get(), c.cq.get(), invalidate, s.connection.timeout(),
                                  "LOCAL_INV");
                verdict += fmt::format("; window {:#x} invalidated", rkey);
            }
        } catch (const std::exception& e) {
            verdict = fmt::format("no done message: {}", e.what());
        }
        fmt::print("{}: {}; QP {:#x} {}\n", who, verdict, c.qp->qp_num,
                   qp_state_name(query_qp_state(c.qp.get())));
        std::fflush(stdout);
    }
    // What a later client did to an earlier one's slot shows only now.
    unsigned confirmed = 0, unchanged = 0;
    for (std::size_t i = 0; i < connections.size(); ++i) {
        const Connection& c = *connections[i];
        if (!c.confirmed) continue;
        ++confirmed;
        const std::uint8_t* slot = pool + i * kSlotBytes;
        if (std::memcmp(slot, c.confirmed_bytes.data(), kSlotBytes) == 0) {
            ++unchanged;
        } else {
            fmt::print("victim: at exit, client {}'s slot holds bytes it did not write: \"{}\"\n",
                       i + 1, printable(slot, kSlotBytes));
            ++failures;
        }
    }
    fmt::print("victim: at exit, {} of {} confirmed slots unchanged\n", unchanged, confirmed);
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
    fmt::print("client: connected to QP {:#x}; my first PSN {:#08x}; my slot {:#x}, rkey {:#x}\n",
               slot.qpn, ours.psn, slot.address, slot.rkey);
    std::fflush(stdout);
    if (!s.ready_file.empty()) std::ofstream(s.ready_file) << "connected\n";
    // The go file comes from another host once it has done its own work (under emulation, many
    // seconds): its wait is not the connection's timeout, which bounds the RDMA operations.
    constexpr std::chrono::seconds kGoWait{90};
    const auto give_up = std::chrono::steady_clock::now() + kGoWait;
    while (!s.go_file.empty() && !std::filesystem::exists(s.go_file)) {
        if (std::chrono::steady_clock::now() > give_up)
            fail(fmt::format("no go file within {} s", kGoWait.count()));
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
        CLI::App app{"The RDMA server the security chapter attacks, and its legitimate client",
                     "rdma-victim"};
        app.require_subcommand(1);
        Settings s;
        s.connection.port = 18600;
        s.connection.timeout_s = 20;
        auto* server = app.add_subcommand("server", "serve clients one after the other");
        server->add_option("--clients", s.clients, "how many clients at most (1..1000)")
            ->check(CLI::Range(1, 1000));
        server
            ->add_option("--keys", s.keys,
                         "shared: one rkey for every slot; per-client: a registration each; "
                         "window: a type-2 window per client, invalidated when it is done")
            ->check(CLI::IsMember({"shared", "per-client", "window"}));
        server->add_option("--pd", s.pd, "shared: one protection domain; per-client")
            ->check(CLI::IsMember({"shared", "per-client"}));
        server
            ->add_option("--secret", s.secret,
                         "64 bytes before slot 1 no client is given: none, remote-read, local")
            ->check(CLI::IsMember({"none", "remote-read", "local"}));
        server
            ->add_option("--idle", s.idle_s,
                         "stop taking clients after this many seconds with none (0: wait for all)")
            ->check(CLI::Range(0.0, 600.0));
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
        parse_or_exit(app, argc, argv);
        if (server->parsed() && s.pd == "per-client" && s.keys == "shared")
            fail(
                "--pd per-client needs --keys per-client or window (one registration lives in one "
                "PD)");
        return server->parsed() ? serve(s) : run_client(s);
    });
}
