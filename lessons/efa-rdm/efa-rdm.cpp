// Lesson: efa-rdm — SEND, RMA WRITE and RMA READ through libfabric's reliable datagram (RDM)
// endpoint, the interface AWS EFA programs use: no connections; peers are address-vector entries.
// Owners of libfabric objects, the provider's choice and the completions: fabric_*.hpp beside it.
// Run: efa-rdm server [--provider tcp|shm|efa] | efa-rdm client 127.0.0.1 [--provider P] [-s SIZE]
#include "efa_rdm_exchange.hpp"
#include "fabric_completions.hpp"
#include "fabric_owners.hpp"
#include "fabric_provider.hpp"
#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/tcp_exchange.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

using namespace rdmalab;
using std::chrono::milliseconds;

namespace {

constexpr std::uint64_t kSendSeed = 0x5E;   // the SEND's bytes
constexpr std::uint64_t kWriteSeed = 0x57;  // the WRITE's bytes
constexpr std::uint64_t kReadSeed = 0x5D;   // the bytes the client READs

struct RdmOptions : ConnectionOptions {
    std::string provider = "tcp";
};

// The objects of one RDM endpoint, in creation order (so destroyed in reverse).
struct RdmEndpoint {
    Info info;  // what fi_getinfo chose: provider, fabric, domain, modes, limits
    Owned<fid_fabric> fabric;
    Owned<fid_domain> domain;
    Owned<fid_cq> cq;
    Owned<fid_av> av;
    Owned<fid_ep> ep;
};

RdmEndpoint open_endpoint(const RdmOptions& options, std::string_view role) {
    pin_ip_providers_to_loopback(role);

    // #region fi-hints
    // The hints say what this program needs and what it can cope with.
    Info hints{fi_allocinfo()};
    if (!hints) fail("fi_allocinfo failed");
    hints->ep_attr->type = FI_EP_RDM;  // reliable, connectionless: SRD on EFA
    hints->caps = FI_MSG | FI_RMA;     // fi_send/fi_recv, fi_write/fi_read (both directions)
    // Modes are duties a provider may put on us. We can give every operation a context the
    // provider may use as scratch space (FI_CONTEXT, FI_CONTEXT2: fabric_completions.hpp).
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    // Memory-registration duties we can meet (which ones apply is decided by the provider):
    // FI_MR_LOCAL: register local buffers and pass their descriptors (we always do);
    // FI_MR_VIRT_ADDR: remote addresses are virtual addresses, else offsets into the region;
    // FI_MR_PROV_KEY: the provider picks keys, else we request a unique one per region;
    // FI_MR_ALLOCATED: only allocated memory may be registered (Buffer is).
    // Not FI_MR_ENDPOINT or FI_MR_RAW: providers that need them are not offered to us.
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;  // one thread uses everything
    // SRD delivers out of order; EFA's provider restores the order of sends when asked.
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    // "tcp" also matches "tcp;ofi_rxm": the rxm utility provider builds RDM over TCP connections.
    hints->fabric_attr->prov_name = strdup(options.provider.c_str());
    // #endregion fi-hints

    fi_info* found = nullptr;
    int rc = fi_getinfo(kFabricApiVersion, nullptr, nullptr, 0, hints.get(), &found);
    Info list{found};  // a list, best first
    // -d picks a domain (an EFA device, an interface) by name.
    const fi_info* match = choose_info(rc, list.get(), *hints, options.provider, options.device);
    RdmEndpoint endpoint;
    endpoint.info.reset(fi_dupinfo(match));
    if (!endpoint.info) fail("fi_dupinfo failed");
    const fi_info& info = *endpoint.info;
    fmt::print("{}: {}\n", role, describe_info(info));
    if (options.size > info.ep_attr->max_msg_size)
        fail(fmt::format("size {} is larger than {} allows ({} bytes)", options.size,
                         info.fabric_attr->prov_name, info.ep_attr->max_msg_size));

    fid_fabric* fabric = nullptr;
    check_fi(fi_fabric(info.fabric_attr, &fabric, nullptr), "fi_fabric");
    endpoint.fabric.reset(fabric);
    fid_domain* domain = nullptr;
    check_fi(fi_domain(fabric, endpoint.info.get(), &domain, nullptr), "fi_domain");
    endpoint.domain.reset(domain);

    // #region fi-objects
    // One CQ for sends and receives; FI_CQ_FORMAT_MSG entries carry the length received.
    fi_cq_attr cq_attr{};
    cq_attr.size = 16;
    cq_attr.format = FI_CQ_FORMAT_MSG;
    cq_attr.wait_obj = FI_WAIT_NONE;  // we poll
    fid_cq* cq = nullptr;
    check_fi(fi_cq_open(domain, &cq_attr, &cq, nullptr), "fi_cq_open");
    endpoint.cq.reset(cq);

    // The address vector holds the peers this endpoint may talk to: one here.
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    av_attr.count = 1;
    fid_av* av = nullptr;
    check_fi(fi_av_open(domain, &av_attr, &av, nullptr), "fi_av_open");
    endpoint.av.reset(av);

    fid_ep* ep = nullptr;
    check_fi(fi_endpoint(domain, endpoint.info.get(), &ep, nullptr), "fi_endpoint");
    endpoint.ep.reset(ep);
    check_fi(fi_ep_bind(ep, &av->fid, 0), "fi_ep_bind(address vector)");
    check_fi(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(completion queue)");
    check_fi(fi_enable(ep), "fi_enable");
    // #endregion fi-objects
    return endpoint;
}

// A registered buffer. Each region gets only the access its operation needs.
struct Region {
    Buffer memory;
    Owned<fid_mr> mr;
    void* descriptor() const { return fi_mr_desc(mr.get()); }  // the local "lkey"
    std::uint64_t key() const { return fi_mr_key(mr.get()); }  // the remote "rkey"
};

// #region fi-register
Region register_region(const RdmEndpoint& endpoint, std::size_t size, std::uint64_t access,
                       std::uint64_t requested_key, std::string_view what) {
    Region region{Buffer(size), nullptr};
    fid_mr* mr = nullptr;
    // requested_key is used unless FI_MR_PROV_KEY; it must be unique in the domain (else
    // -FI_ENOKEY). offset 0: without FI_MR_VIRT_ADDR the region's remote addresses start at 0.
    check_fi(fi_mr_reg(endpoint.domain.get(), region.memory.data(), size, access, /*offset=*/0,
                       requested_key, /*flags=*/0, &mr, nullptr),
             fmt::format("fi_mr_reg({})", what));
    region.mr.reset(mr);
    return region;
}
// #endregion fi-register

// The address a peer names in fi_write/fi_read to reach the start of region.
std::uint64_t remote_address(const RdmEndpoint& endpoint, const Region& region) {
    if (endpoint.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR)
        return reinterpret_cast<std::uintptr_t>(region.memory.data());
    return 0;
}

// What we tell the peer out of band: our endpoint address (fi_getname) and how to read it.
FabricHello our_hello(const RdmEndpoint& endpoint) {
    FabricHello hello;
    hello.provider = endpoint.info->fabric_attr->prov_name;
    hello.address_format = endpoint.info->addr_format;
    hello.address.resize(kMaxFabricAddress);
    size_t length = hello.address.size();
    check_fi(fi_getname(&endpoint.ep->fid, hello.address.data(), &length), "fi_getname");
    hello.address.resize(length);
    return hello;
}

// "fi_sockaddr_in://127.0.0.1:41234", "fi_shm://4242", "fi_addr_efa://[fe80::…]:1:…".
std::string printable_address(const RdmEndpoint& endpoint, const std::vector<std::byte>& address) {
    char text[256] = {};
    size_t length = sizeof text;
    fi_av_straddr(endpoint.av.get(), address.data(), text, &length);
    return text;
}

// #region av-insert
// Connectionless: the peer becomes an entry in the address vector, and every send, write and
// read names that entry (an fi_addr_t) — like a UD address handle, but delivery is reliable.
fi_addr_t insert_peer(const RdmEndpoint& endpoint, const FabricHello& peer, std::string_view who) {
    const fi_info& info = *endpoint.info;
    if (peer.provider != info.fabric_attr->prov_name || peer.address_format != info.addr_format)
        fail(
            fmt::format("the {} uses provider '{}' (address format {}), we use '{}' (format {}): "
                        "give both sides the same --provider",
                        who, peer.provider, peer.address_format, info.fabric_attr->prov_name,
                        info.addr_format));
    if (info.addr_format == FI_ADDR_STR && peer.address.back() != std::byte{0})
        fail(fmt::format("the {}'s address is not a terminated string", who));
    fi_addr_t address = FI_ADDR_NOTAVAIL;
    int inserted = fi_av_insert(endpoint.av.get(), peer.address.data(), 1, &address, 0, nullptr);
    check_fi(inserted, "fi_av_insert");
    if (inserted != 1) fail(fmt::format("fi_av_insert did not accept the {}'s address", who));
    return address;
}
// #endregion av-insert

// The client's "done" message (SEND, 24 bytes): bytes sent, bytes written, bytes it read and
// verified (0: the check failed). The server's verdict (SEND, 16 bytes): bytes it verified of
// the client's SEND and of its WRITE (0: that check failed).
constexpr std::size_t kDoneSize = 24;
constexpr std::size_t kVerdictSize = 16;

// Requested MR keys, unique within each process's domain (used unless FI_MR_PROV_KEY).
enum RegionKey : std::uint64_t { kMessageKey = 1, kWriteKey, kReadKey, kDoneKey, kVerdictKey };

int run_server(const RdmOptions& options) {
    auto endpoint = open_endpoint(options, "server");
    fid_ep* ep = endpoint.ep.get();
    fid_cq* cq = endpoint.cq.get();
    const milliseconds timeout = options.timeout();

    // Least privilege: the peer may write only the write target and read only the read source;
    // FI_RECV regions only receive, the verdict is only sent. The write target starts as zeros,
    // so a write that never happened cannot pass the check.
    Region message = register_region(endpoint, options.size, FI_RECV, kMessageKey, "message");
    Region write_target =
        register_region(endpoint, options.size, FI_REMOTE_WRITE, kWriteKey, "write target");
    Region read_source =
        register_region(endpoint, options.size, FI_REMOTE_READ, kReadKey, "read source");
    fill_pattern(read_source.memory.bytes(), kReadSeed);
    Region done = register_region(endpoint, kDoneSize, FI_RECV, kDoneKey, "done");
    Region verdict = register_region(endpoint, kVerdictSize, FI_SEND, kVerdictKey, "verdict");

    // Receives before anything can arrive, from any peer (FI_ADDR_UNSPEC). They are matched in
    // the order posted, and with FI_ORDER_SAS the client's message lands in the first.
    Operation message_received{.name = "receiving the client's message"};
    Operation done_received{.name = "receiving the client's 'done'"};
    post(cq, timeout, "fi_recv(message)", [&] {
        return fi_recv(ep, message.memory.data(), message.memory.size(), message.descriptor(),
                       FI_ADDR_UNSPEC, &message_received.context);
    });
    post(cq, timeout, "fi_recv(done)", [&] {
        return fi_recv(ep, done.memory.data(), done.memory.size(), done.descriptor(),
                       FI_ADDR_UNSPEC, &done_received.context);
    });

    // Out of band: our endpoint address and where the client may write and read; its address back.
    FabricHello hello = our_hello(endpoint);
    hello.receive_capacity = message.memory.size();
    hello.write_target = {remote_address(endpoint, write_target), write_target.key(),
                          write_target.memory.size()};
    hello.read_source = {remote_address(endpoint, read_source), read_source.key(),
                         read_source.memory.size()};
    fmt::print(
        "server: endpoint {}; write target {} bytes at {:#x} key {:#x}; read source {} "
        "bytes at {:#x} key {:#x}\n",
        printable_address(endpoint, hello.address), hello.write_target.length,
        hello.write_target.address, hello.write_target.key, hello.read_source.length,
        hello.read_source.address, hello.read_source.key);
    auto exchange =
        TcpExchange::accept_one(options.port, options.bind_address, options.accept_timeout());
    send_fabric_hello(exchange, hello);
    FabricHello client = receive_fabric_hello(exchange, "client");
    const fi_addr_t client_address = insert_peer(endpoint, client, "client");
    fmt::print("server: client endpoint {} inserted into the address vector\n",
               printable_address(endpoint, client.address));

    // Wait for the message and the "done" that follows the client's WRITE and READ. Polling here
    // is also what serves the client's WRITE and READ on providers with manual progress.
    const std::size_t message_length =
        wait_for_each(cq, timeout, "the client's message and 'done'",
                      {{&message_received, std::nullopt}, {&done_received, kDoneSize}})[0];

    // The client's claims are checked against what arrived before they are used.
    ByteReader claims(done.memory.bytes(), "the client's done message");
    const std::uint64_t sent = claims.u64();
    const std::uint64_t written = claims.u64();
    const std::uint64_t read = claims.u64();
    if (sent != message_length)
        fail(fmt::format("the client says it sent {} bytes, {} arrived", sent, message_length));
    if (written == 0 || written > write_target.memory.size())
        fail(fmt::format("the client claims it wrote {} bytes into a {}-byte buffer", written,
                         write_target.memory.size()));

    bool message_ok = true, write_ok = true;
    if (auto mismatch =
            find_pattern_mismatch(message.memory.bytes().first(message_length), kSendSeed)) {
        fmt::print("server: data check FAILED: SEND byte {} of {}\n", *mismatch, message_length);
        message_ok = false;
    } else {
        fmt::print("server: SEND: {} bytes received into a posted buffer, content verified\n",
                   message_length);
    }
    auto target = write_target.memory.bytes();
    if (auto mismatch = find_pattern_mismatch(target.first(written), kWriteSeed)) {
        fmt::print("server: data check FAILED: WRITE byte {} of {}\n", *mismatch, written);
        write_ok = false;
    } else if (!all_zero(target.subspan(written))) {
        fmt::print("server: data check FAILED: bytes beyond the {} written were changed\n",
                   written);
        write_ok = false;
    } else {
        fmt::print("server: WRITE: {} bytes placed by the client's RMA write, content verified\n",
                   written);
    }

    // The verdict goes back as a SEND to the client's address-vector entry.
    ByteWriter answer(verdict.memory.bytes(), "the verdict");
    answer.u64(message_ok ? message_length : 0);
    answer.u64(write_ok ? written : 0);
    Operation verdict_sent{.name = "sending the verdict"};
    post(cq, timeout, "fi_send(verdict)", [&] {
        return fi_send(ep, verdict.memory.data(), kVerdictSize, verdict.descriptor(),
                       client_address, &verdict_sent.context);
    });
    expect_completion(cq, timeout, verdict_sent);
    if (!message_ok || !write_ok) return 1;
    fmt::print(
        "server: verified the client's SEND and WRITE over {}; the client reports its READ "
        "of our buffer {}\n",
        endpoint.info->fabric_attr->prov_name,
        read > 0 && read <= read_source.memory.size() ? fmt::format("verified ({} bytes)", read)
                                                      : std::string("FAILED"));
    return 0;
}

int run_client(const RdmOptions& options) {
    auto endpoint = open_endpoint(options, "client");
    fid_ep* ep = endpoint.ep.get();
    fid_cq* cq = endpoint.cq.get();
    const milliseconds timeout = options.timeout();

    // Least privilege: the message and "done" are only sent (FI_SEND), the write source is only
    // the source of a WRITE (FI_WRITE), the read destination only the sink of a READ (FI_READ),
    // the verdict only received. Nothing here is open to the peer (no FI_REMOTE_*).
    Region message = register_region(endpoint, options.size, FI_SEND, kMessageKey, "message");
    fill_pattern(message.memory.bytes(), kSendSeed);
    Region write_source =
        register_region(endpoint, options.size, FI_WRITE, kWriteKey, "write source");
    fill_pattern(write_source.memory.bytes(), kWriteSeed);
    Region read_destination =
        register_region(endpoint, options.size, FI_READ, kReadKey, "read destination");
    Region done = register_region(endpoint, kDoneSize, FI_SEND, kDoneKey, "done");
    Region verdict = register_region(endpoint, kVerdictSize, FI_RECV, kVerdictKey, "verdict");

    Operation verdict_received{.name = "receiving the server's verdict"};
    post(cq, timeout, "fi_recv(verdict)", [&] {
        return fi_recv(ep, verdict.memory.data(), kVerdictSize, verdict.descriptor(),
                       FI_ADDR_UNSPEC, &verdict_received.context);
    });

    // Out of band: the server's address and regions, checked before use; then our address.
    auto exchange = TcpExchange::connect_to(options.server_address, options.port, timeout);
    FabricHello server = receive_fabric_hello(exchange, "server");
    const std::uint64_t fits =
        std::min({server.receive_capacity, server.write_target.length, server.read_source.length});
    if (options.size > fits)
        fail(fmt::format("the server's buffers hold {} bytes; cannot move {} (use -s {} or less)",
                         fits, options.size, fits));
    const fi_addr_t server_address = insert_peer(endpoint, server, "server");
    send_fabric_hello(exchange, our_hello(endpoint));
    fmt::print("client: server endpoint {} inserted into the address vector\n",
               printable_address(endpoint, server.address));

    // #region fi-send-write
    // 1. SEND: two-sided; it lands in the receive the server posted.
    Operation sent{.name = "fi_send(message)"};
    post(cq, timeout, "fi_send(message)", [&] {
        return fi_send(ep, message.memory.data(), options.size, message.descriptor(),
                       server_address, &sent.context);
    });
    expect_completion(cq, timeout, sent);
    fmt::print("client: SEND of {} bytes completed\n", options.size);

    // 2. WRITE: one-sided, into the server's write target. By default (FI_TRANSMIT_COMPLETE) a
    // write completes once the peer has received it, not necessarily placed it, and an RDM
    // endpoint does not order it before a later SEND (SRD is unordered). FI_DELIVERY_COMPLETE
    // (fi_writemsg is fi_write with flags) completes only once the data is visible in the
    // server's memory, so the "done" SEND below cannot overtake it.
    Operation written{.name = "fi_writemsg(write source)"};
    iovec local{write_source.memory.data(), options.size};
    void* local_descriptor = write_source.descriptor();
    fi_rma_iov remote{server.write_target.address, options.size, server.write_target.key};
    fi_msg_rma write{&local, &local_descriptor, 1, server_address, &remote, 1, &written.context, 0};
    post(cq, timeout, "fi_writemsg",
         [&] { return fi_writemsg(ep, &write, FI_COMPLETION | FI_DELIVERY_COMPLETE); });
    expect_completion(cq, timeout, written);
    // #endregion fi-send-write
    fmt::print("client: WRITE of {} bytes into the server's memory completed (delivery complete)\n",
               options.size);

    // 3. READ: one-sided, from the server's read source; on completion the data is here.
    Operation read{.name = "fi_read(read destination)"};
    post(cq, timeout, "fi_read", [&] {
        return fi_read(ep, read_destination.memory.data(), options.size,
                       read_destination.descriptor(), server_address, server.read_source.address,
                       server.read_source.key, &read.context);
    });
    expect_completion(cq, timeout, read);
    auto mismatch = find_pattern_mismatch(read_destination.memory.bytes(), kReadSeed);
    if (mismatch)
        fmt::print("client: data check FAILED: READ byte {} of {}\n", *mismatch, options.size);
    else
        fmt::print("client: READ: {} bytes read from the server's memory, content verified\n",
                   options.size);

    // 4. "done", then the server's verdict (their completions may come in either order).
    ByteWriter claims(done.memory.bytes(), "the done message");
    claims.u64(options.size);
    claims.u64(options.size);
    claims.u64(mismatch ? 0 : options.size);
    Operation done_sent{.name = "fi_send(done)"};
    post(cq, timeout, "fi_send(done)", [&] {
        return fi_send(ep, done.memory.data(), kDoneSize, done.descriptor(), server_address,
                       &done_sent.context);
    });
    wait_for_each(cq, timeout, "the server's verdict",
                  {{&done_sent, std::nullopt}, {&verdict_received, kVerdictSize}});
    ByteReader answer(verdict.memory.bytes(), "the server's verdict");
    const std::uint64_t send_verified = answer.u64();
    const std::uint64_t write_verified = answer.u64();
    if (send_verified != options.size || write_verified != options.size)
        fail(fmt::format("the server verified {} bytes of our SEND and {} of our WRITE, not {}",
                         send_verified, write_verified, options.size));
    if (mismatch) return 1;
    fmt::print(
        "client: SEND, WRITE and READ of {} bytes verified over {} (RDM endpoint, "
        "no connection)\n",
        options.size, endpoint.info->fabric_attr->prov_name);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("efa-rdm", [&] {
        CommandLine cli{"SEND, WRITE and READ through a libfabric RDM endpoint (the EFA interface)",
                        "efa-rdm"};
        RdmOptions options;
        cli.add_connection_options(options);
        cli.option("--provider", options.provider,
                   "libfabric provider: tcp (tcp;ofi_rxm), shm, efa, …")
            .show_default();
        // The shared options, adapted: -d names a libfabric domain, -p the TCP port of the
        // address exchange; libfabric picks addresses itself, so there is no --gid-index (and its
        // providers set no traffic class from here: no --tclass).
        cli.existing("--ib-dev")
            .description("libfabric domain to use (efa: the device; tcp: the interface)");
        cli.existing("--port").description("TCP port of the out-of-band address exchange");
        cli.remove("--gid-index");
        cli.remove("--tclass");
        cli.parse_or_exit(argc, argv);
        return options.server ? run_server(options) : run_client(options);
    });
}
