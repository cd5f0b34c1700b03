// transfer-bench: the transfer engine (transfer/) between hosts over every rail, pairwise or
// several initiators into one target (server --clients N), in the shape of Mooncake's tebench
// and nixlbench: batches of `--batch` blocks of `-s` bytes, READ or WRITE, sliced over the rails;
// the batch latency's percentiles, the bandwidth per rail and in all, and with --check every byte
// verified. The server is the target: it registers its segment, is told the run's plan by the
// client, and (WRITE) checks each batch when the batch's notification arrives. The client's last
// line is a record: `record KEY=VALUE ...`; with --json FILE it writes the same run as a typed
// record (records/transfer.hpp) that `rdma-bench records` reads and `rdma-bench plot --y gbit`
// draws. The rails: every RDMA device whose port is up (--devices auto), those nearest a NUMA node
// or a GPU (--near numa:N, --near gpu:BUS:DEV.FN; transfer/rail_choice.hpp), or the devices named.
//   transfer-bench server [--devices auto|rxe0,rxe1] [--near numa:N|gpu:PCI] [--clients N]
//   transfer-bench client ADDR [--devices ...] [--near ...] [--op write|read] [-s BLOCK]
//                  [--batch N] [--batches N] [--slice SIZE] [--qps N] [--policy score|round-robin]
//                  [--check] [--json FILE] [--retry N] [--ack-timeout N] [--rail-retry MS]
//                  [--rail-retry-max MS]
//   Either side: --mem host|cuda[:N]|rocm[:N] and --path auto|dma-buf|peer: its bytes in GPU
//   memory, registered on every rail through the ladder (gpu/memory.hpp; not staging).
//   transfer-bench job --hosts H0,H1,... [--rank R] [--pattern pairwise|many-to-one] [client
//                  options] [--json FILE]: one rank of a job under mpirun or srun (the rank from
//                  the launcher), a target or an initiator as transfer/job.hpp lays them out;
//                  "{rank}" in FILE becomes the rank.
#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/gpu/memory.hpp"
#include "rdmalab/gpu/options.hpp"
#include "rdmalab/options.hpp"
#include "rdmalab/pattern.hpp"
#include "rdmalab/percentile.hpp"
#include "rdmalab/port_address.hpp"
#include "rdmalab/rank_hosts.hpp"
#include "rdmalab/records/transfer.hpp"
#include "rdmalab/tcp_exchange.hpp"
#include "rdmalab/transfer/engine.hpp"
#include "rdmalab/transfer/job.hpp"
#include "rdmalab/transfer/rail_choice.hpp"
#include "rdmalab/verbs.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <sstream>
#include <utility>
#include <variant>

using namespace rdmalab;
using namespace rdmalab::transfer;

namespace {

constexpr std::uint32_t kPlanMagic = 0x5442504c;  // "TBPL"
constexpr std::uint32_t kDone = 0x444f4e45;       // "DONE"
constexpr std::uint32_t kRefused = 0x54524e4f;    // "TRNO": a renewal the server could not make
constexpr std::size_t kMaxReason = 200;           // bytes of a refusal's reason
constexpr std::size_t kMaxBytes = 1ULL << 30;     // a run's segment, on each side
constexpr std::size_t kMaxRecord = 4096;

struct BenchOptions : ConnectionOptions {
    std::string devices = "auto";
    std::string near;  // "numa:N" or "gpu:PCI"; "" anywhere
    std::string json;  // the client's record file
    std::string op = "write";
    std::uint32_t batch = 8;
    std::uint32_t batches = 32;
    std::string slice = "64K";
    std::string policy = "score";
    bool check = false;
    int retry_cnt = 3;
    int ack_timeout = 14;
    int rail_retry_ms = 1000;
    int rail_retry_max_ms = 30000;
    std::uint32_t clients = 1;  // the server's initiators, at once
    std::uint32_t qps = 1;      // RC QPs per rail
    std::string hosts;          // job: every rank's host, in rank order
    int rank = -1;              // job: -1, from the launcher
    std::string pattern = "pairwise";
    gpu::MemoryOptions memory;  // --mem, --path: where this side's bytes live
};

// What the client tells the server: "TBPL" | op (1) | check (1) | rails (1) | QPs per rail (1) |
// block (4) | batch (4) | batches (4).
struct Plan {
    Opcode op = Opcode::kWrite;
    bool check = false;
    std::uint8_t rails = 0;
    std::uint8_t qps = 1;
    std::uint32_t block = 0;
    std::uint32_t batch = 0;
    std::uint32_t batches = 0;
    std::size_t bytes() const { return std::size_t{block} * batch * batches; }
};

void send_record(TcpExchange& tcp, std::span<const std::byte> bytes) {
    std::array<std::byte, 4> length{};
    store_be32(length, static_cast<std::uint32_t>(bytes.size()));
    tcp.send_all(length);
    tcp.send_all(bytes);
}

std::vector<std::byte> receive_record(TcpExchange& tcp, const char* what) {
    std::array<std::byte, 4> length{};
    tcp.receive_exact(length);
    const std::uint32_t size = load_be32(length);
    if (size == 0 || size > kMaxRecord)
        fail(fmt::format("the peer's {} claims {} bytes (1 to {})", what, size, kMaxRecord));
    std::vector<std::byte> bytes(size);
    tcp.receive_exact(bytes);
    return bytes;
}

// "TRNO" | the reason, at most kMaxReason bytes.
std::vector<std::byte> refusal(std::string_view reason) {
    std::vector<std::byte> bytes(4);
    store_be32(bytes, kRefused);
    for (char c : reason.substr(0, kMaxReason)) bytes.push_back(static_cast<std::byte>(c));
    return bytes;
}

bool is_refusal(std::span<const std::byte> bytes) {
    return bytes.size() >= 4 && load_be32(bytes.first(4)) == kRefused;
}

// One of the server's answers to a renewal: its endpoint for a QP of the rail, or why it could
// not renew the rail.
RailEndpoint renewal_answer(std::span<const std::byte> bytes) {
    if (is_refusal(bytes)) {
        std::string reason;
        for (std::byte b : bytes.subspan(4, std::min(bytes.size() - 4, kMaxReason))) {
            const auto c = static_cast<char>(b);
            reason += c >= ' ' && c <= '~' ? c : '?';  // printed: nothing the terminal acts on
        }
        fail("the server could not renew the rail: " + reason);
    }
    auto answer = decode_rail_endpoint(bytes);
    if (auto* why = std::get_if<std::string>(&answer)) fail("the server's " + *why);
    return std::get<RailEndpoint>(answer);
}

std::vector<std::byte> encode_plan(const Plan& plan) {
    std::vector<std::byte> bytes;
    ByteWriter writer(bytes, "the run's plan");
    writer.u32(kPlanMagic);
    writer.u8(plan.op == Opcode::kWrite ? 1 : 2);
    writer.u8(plan.check ? 1 : 0);
    writer.u8(plan.rails);
    writer.u8(plan.qps);
    writer.u32(plan.block);
    writer.u32(plan.batch);
    writer.u32(plan.batches);
    return bytes;
}

Plan decode_plan(std::span<const std::byte> bytes, std::size_t rails) {
    if (bytes.size() != 20)
        fail(fmt::format("the client's plan has {} bytes, not 20", bytes.size()));
    ByteReader reader(bytes, "the run's plan");
    if (reader.u32() != kPlanMagic) fail("the client's plan lacks its magic");
    Plan plan;
    const std::uint8_t op = reader.u8();
    if (op != 1 && op != 2) fail(fmt::format("the client's plan names operation {}", op));
    plan.op = op == 1 ? Opcode::kWrite : Opcode::kRead;
    plan.check = reader.u8() != 0;
    plan.rails = reader.u8();
    plan.qps = reader.u8();
    plan.block = reader.u32();
    plan.batch = reader.u32();
    plan.batches = reader.u32();
    if (plan.rails != rails)
        fail(fmt::format("the client has {} rails, this server {}", plan.rails, rails));
    if (plan.qps == 0 || plan.qps > kMaxQpsPerRail)
        fail(fmt::format("the client's plan asks for {} QPs a rail (1 to {})", plan.qps,
                         kMaxQpsPerRail));
    if (plan.block == 0 || plan.batch == 0 || plan.batches == 0 ||
        std::size_t{plan.block} * plan.batch > kMaxBytes ||
        std::size_t{plan.block} * plan.batch * plan.batches > kMaxBytes)
        fail(
            fmt::format("the client's plan: {} batches of {} blocks of {} bytes (at most {} bytes "
                        "in all, none zero)",
                        plan.batches, plan.batch, plan.block, kMaxBytes));
    return plan;
}

// The devices --devices names, each one this host has; or why not.
std::variant<std::vector<RailDevice>, std::string> named_devices(
    const std::string& list, const std::vector<DeviceFacts>& host) {
    std::vector<std::string> known;
    for (const DeviceFacts& device : host) known.push_back(device.name);
    std::vector<RailDevice> rails;
    std::stringstream names(list);
    for (std::string name; std::getline(names, name, ',');) {
        if (name.empty()) return fmt::format("--devices '{}': an empty device name", list);
        if (std::find(known.begin(), known.end(), name) == known.end())
            return fmt::format("--devices: no RDMA device {} on this host (it has {})", name,
                               known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", ")));
        rails.push_back({name});
    }
    if (rails.empty()) return fmt::format("--devices '{}': no device named", list);
    return rails;
}

// The rails (printed, with why the other devices were left out), or why the options name none
// (the caller refuses them: exit 2). A host with no RDMA device, or none left by --near, throws.
std::variant<std::vector<RailDevice>, std::string> rail_devices(const BenchOptions& options,
                                                                const char* side) {
    const std::vector<DeviceFacts> host = read_host_devices();
    if (options.devices != "auto") {
        if (!options.near.empty())
            return "--near chooses among every device: give it with --devices auto, not a list";
        auto named = named_devices(options.devices, host);
        if (auto* rails = std::get_if<std::vector<RailDevice>>(&named)) {
            if (rails->size() > kMaxRails)
                return fmt::format("--devices names {} rails (at most {})", rails->size(),
                                   kMaxRails);
            fmt::print("{}: rails: {} (as --devices names them)\n", side, options.devices);
        }
        return named;
    }
    RailTarget target;
    if (!options.near.empty()) {
        auto parsed = parse_rail_target(options.near);
        if (auto* why = std::get_if<std::string>(&parsed)) return *why;
        target = std::get<RailTarget>(parsed);
    }
    if (target.kind == RailTarget::Kind::kGpu) {
        auto place = read_pci_place("/sys/bus/pci/devices/" + target.gpu_address);
        if (!place)
            return fmt::format("--near {}: no PCI device {} on this host", options.near,
                               target.gpu_address);
        target.gpu_place = *place;
    }
    if (host.empty())
        fail(
            "no RDMA device on this host (/sys/class/infiniband lists none): no rail to run on "
            "(run it in the Soft-RoCE lab, ./rdmalab lab -- build/bin/transfer-bench ...)");
    const RailChoice choice = choose_rails(host, target);
    const std::string line = describe_choice(choice);
    if (choice.rails.empty())
        fail(fmt::format("no rail{}: {}", options.near.empty() ? "" : " near " + options.near,
                         line));
    fmt::print("{}: {}\n", side, line);
    std::vector<RailDevice> rails;
    for (const std::string& name : choice.rails) rails.push_back({name});
    return rails;
}

// Both sides: endpoints swapped (server first), segments described, QPs brought to RTS.
void exchange_endpoints(Engine& engine, TcpExchange& tcp, bool server) {
    auto send_endpoints = [&] {
        for (const RailEndpoint& endpoint : engine.endpoints()) send_record(tcp, encode(endpoint));
    };
    std::vector<RailEndpoint> peer;
    auto receive_endpoints = [&] {
        for (std::size_t i = 0; i < engine.rails() * engine.qps_per_rail(); ++i) {
            auto decoded = decode_rail_endpoint(receive_record(tcp, "rail endpoint"));
            if (auto* why = std::get_if<std::string>(&decoded)) fail("the peer's " + *why);
            peer.push_back(std::get<RailEndpoint>(decoded));
        }
    };
    if (server) {
        send_endpoints();
        receive_endpoints();
    } else {
        receive_endpoints();
        send_endpoints();
    }
    engine.connect(peer);
}

// The bytes one side moves, in the memory --mem names, registered on every rail through the
// registration ladder (gpu/memory.hpp: host memory as it is; GPU memory by dma-buf or peer
// memory) and given to the engine as one segment. The staging rung is refused: it copies through
// a bounce buffer of its own per registration, so each rail would move other bytes.
class BenchSegment {
  public:
    BenchSegment(Engine& engine, const gpu::MemoryOptions& options, std::size_t bytes,
                 unsigned remote_access, bool local_write, const char* side)
        : memory_(options.memory, bytes) {
        const int access = segment_access(remote_access, local_write);
        std::vector<ibv_mr*> mrs;
        for (std::size_t rail = 0; rail < engine.rails(); ++rail) {
            registered_.push_back(gpu::register_memory(engine.protection_domain(rail), memory_,
                                                       access, options.path));
            const gpu::RegisteredMemory& r = registered_.back();
            if (r.path() == gpu::Path::kStaging)
                fail(
                    fmt::format("--mem {}: the staging rung copies through a bounce buffer per "
                                "rail; transfer-bench needs the NIC to reach the memory itself "
                                "(--path dma-buf or peer, where the host has them)",
                                gpu::to_string(options.memory)));
            if (r.nic_address() != registered_.front().nic_address())
                fail("the rails' registrations address the memory differently");
            mrs.push_back(r.mr());
        }
        id_ = engine.add_registered_segment(registered_.front().nic_address(), bytes, mrs);
        fmt::print("{}: {} bytes of {}; {}, on each of {} rails\n", side, bytes,
                   memory_.description(), registered_.front().report().back(), engine.rails());
    }
    SegmentId id() const { return id_; }
    std::string memory() const { return gpu::to_string(memory_.spec()); }
    const char* registration() const { return gpu::path_name(registered_.front().path()); }
    // The pattern of `seed` into [offset, offset + length), ready for the NIC to read.
    void fill(std::size_t offset, std::size_t length, std::uint64_t seed) {
        Buffer pattern(length);
        fill_pattern(pattern.bytes(), seed);
        memory_.copy_from_host(pattern.bytes(), offset);
        registered_.front().before_nic_reads(length, offset);
    }
    // What the NIC wrote into [offset, offset + destination's size), copied out.
    void read(std::size_t offset, std::span<std::byte> destination) {
        registered_.front().after_nic_writes(destination.size(), offset);
        memory_.copy_to_host(destination, offset);
    }
    // The first byte of [offset, offset + length) that is not the pattern of `seed`, if any.
    std::optional<std::size_t> mismatch(std::size_t offset, std::size_t length,
                                        std::uint64_t seed) {
        Buffer landed(length);
        read(offset, landed.bytes());
        return find_pattern_mismatch(landed.bytes(), seed);
    }

  private:
    gpu::DeviceMemory memory_;
    std::vector<gpu::RegisteredMemory> registered_;  // one per rail; released before memory_
    SegmentId id_ = 0;
};

// One initiator as the target sees it: its exchange, its plan, the bytes it writes into (or
// reads from), and an engine of its own joining this host's rails to the initiator's.
struct Initiator {
    TcpExchange tcp;
    Plan plan;
    std::unique_ptr<Engine> engine;
    std::unique_ptr<BenchSegment> target;  // after the engine: its MRs go before the engine's PDs
    std::vector<bool> notified_batches;  // notifications are at least once: each batch counted once
    std::uint32_t notified = 0, verified = 0;
    bool done = false;
};

Initiator accept_initiator(const BenchOptions& options, TcpListener& listener,
                           const std::vector<RailDevice>& rail_list) {
    auto tcp = listener.accept(options.accept_timeout());
    const Plan plan = decode_plan(receive_record(tcp, "plan"), rail_list.size());
    Settings settings;
    settings.qps_per_rail = plan.qps;
    auto engine = std::make_unique<Engine>(rail_list, settings);
    // WRITE: the client writes into it (REMOTE_WRITE); READ: it reads from it (REMOTE_READ).
    const bool writes = plan.op == Opcode::kWrite;
    auto target = std::make_unique<BenchSegment>(
        *engine, options.memory, plan.bytes(),
        writes ? IBV_ACCESS_REMOTE_WRITE : IBV_ACCESS_REMOTE_READ, false, "server");
    if (!writes) target->fill(0, plan.bytes(), 1);
    send_record(tcp, encode(engine->describe(target->id())));
    exchange_endpoints(*engine, tcp, true);
    fmt::print("server: initiator {}: {} rails of {} QP(s) connected, {} bytes registered for {}\n",
               format_ip(tcp.peer_address()), engine->rails(), plan.qps, plan.bytes(),
               writes ? "WRITEs" : "READs");
    return {std::move(tcp), plan, std::move(engine), std::move(target),
            std::vector<bool>(plan.batches, false)};
}

// A notification (WRITE): the batch it names has landed, every slice of it; checked with --check.
void on_notification(Initiator& from, std::uint32_t id) {
    const Plan& plan = from.plan;
    const std::uint32_t index = id - 1;  // the client's batches count from 1
    if (plan.op != Opcode::kWrite || index >= plan.batches)
        fail(fmt::format("a notification for batch {}", id));
    // A notification whose completion failed at the client may have arrived all the same, and it
    // comes again on another rail: the batch counts once.
    if (from.notified_batches[index]) return;
    from.notified_batches[index] = true;
    ++from.notified;
    if (!plan.check) return;
    const std::size_t batch_bytes = std::size_t{plan.block} * plan.batch;
    if (auto bad = from.target->mismatch(index * batch_bytes, batch_bytes, index + 1))
        fail(fmt::format("batch {}: byte {} is not what the client wrote", id, *bad));
    ++from.verified;
}

// A control message: the client's end of its run, or its fresh QPs for a rail it renews, one
// record each (ours go back once our fresh QPs are connected to them, or why not).
void on_control(Initiator& from) {
    const auto message = receive_record(from.tcp, "control message");
    if (message.size() == 4 && load_be32(message) == kDone) {
        if (from.plan.op == Opcode::kWrite && from.notified != from.plan.batches)
            fail(fmt::format("the client finished after {} of {} batches' notifications",
                             from.notified, from.plan.batches));
        send_word(from.tcp, from.verified);
        from.done = true;
        return;
    }
    std::vector<RailEndpoint> peer;
    for (std::uint32_t qp = 0; qp < from.engine->qps_per_rail(); ++qp) {
        auto decoded = decode_rail_endpoint(qp == 0 ? std::span<const std::byte>(message)
                                                    : receive_record(from.tcp, "renewal"));
        if (auto* why = std::get_if<std::string>(&decoded)) fail("the client's renewal: " + *why);
        peer.push_back(std::get<RailEndpoint>(decoded));
        if (peer.back().rail != peer.front().rail)
            fail(fmt::format("the client's renewal of rail {} has an endpoint for rail {}",
                             peer.front().rail + 1, peer.back().rail + 1));
    }
    const std::size_t rail = peer.front().rail;
    try {
        const std::vector<RailEndpoint> ours = from.engine->renew_rail(rail);
        from.engine->reconnect_rail(rail, peer, false);
        for (const RailEndpoint& endpoint : ours) send_record(from.tcp, encode(endpoint));
        fmt::print("server: rail {} renewed at the client's request\n", rail + 1);
    } catch (const Error& error) {
        // Not this run's end: the rail stays down, and the client tries again later.
        send_record(from.tcp, refusal(error.what()));
        fmt::print("server: rail {} not renewed: {}\n", rail + 1, error.what());
    }
}

// The target of --clients initiators at once (many-to-one; 1: pairwise). Each connects and is
// held until all have, so that their batches start together; then, until every one has said it
// is done, each one's notifications and control messages.
int run_server(const BenchOptions& options, std::vector<RailDevice> rail_list) {
    TcpListener listener(options.port, options.bind_address);
    std::vector<Initiator> initiators;
    for (std::uint32_t i = 0; i < options.clients; ++i)
        initiators.push_back(accept_initiator(options, listener, rail_list));
    for (Initiator& initiator : initiators) send_word(initiator.tcp, kDone);
    for (Initiator& initiator : initiators)
        expect_word(initiator.tcp, kDone, "the peer's word that its QPs are ready");
    const auto start = Clock::now();
    auto quiet_since = start;
    std::size_t done = 0;
    while (done < initiators.size()) {
        bool heard = false;
        for (Initiator& initiator : initiators) {
            if (initiator.done) continue;
            if (auto id = initiator.engine->poll_notification()) {
                on_notification(initiator, *id);
                heard = true;
            } else if (initiator.tcp.readable()) {
                on_control(initiator);
                done += initiator.done ? 1 : 0;
                heard = true;
            }
        }
        if (heard)
            quiet_since = Clock::now();
        else if (Clock::now() - quiet_since > options.timeout())
            fail(fmt::format("nothing from {} of {} clients for {} s", initiators.size() - done,
                             initiators.size(), options.timeout_s));
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::uint64_t bytes = 0;
    std::uint32_t verified = 0;
    for (const Initiator& initiator : initiators) {
        bytes += initiator.plan.bytes();
        verified += initiator.verified;
    }
    fmt::print("server: {} batches verified here\n", verified);
    fmt::print("server: {} initiator(s), {} bytes in {:.3f} s: {:.4f} Gbit/s into this host\n",
               initiators.size(), bytes, seconds, bytes * 8 / seconds / 1e9);
    fmt::print("record side=server clients={} bytes={} seconds={:.6f} gbit={:.4f} verified={}\n",
               initiators.size(), bytes, seconds, bytes * 8 / seconds / 1e9, verified);
    return 0;
}

// What the client measured, for its lines and its record.
struct ClientRun {
    std::vector<double> latencies_ms;
    std::vector<std::uint64_t> per_rail;  // bytes landed, by rail
    std::uint32_t reposted = 0;
    double seconds = 0;
};

// The run as transfer-bench's typed record, with where it ran.
records::TransferRecord transfer_record(const BenchOptions& options, const Engine& engine,
                                        const BenchSegment& local, const Plan& plan,
                                        const ClientRun& run) {
    records::TransferRecord record;
    record.config = {.op = options.op,
                     .rails = static_cast<std::uint32_t>(engine.rails()),
                     .devices = {},
                     .block = plan.block,
                     .batch = plan.batch,
                     .batches = plan.batches,
                     .slice = *parse_size(options.slice),
                     .policy = options.policy,
                     .retry_cnt = options.retry_cnt,
                     .ack_timeout = options.ack_timeout,
                     .rail_retry_ms = options.rail_retry_ms,
                     .rail_retry_max_ms = options.rail_retry_max_ms,
                     .check = plan.check,
                     .qps_per_rail = plan.qps,
                     .mem = local.memory(),
                     .registration = local.registration()};
    record.result = {.bytes = plan.bytes(),
                     .seconds = run.seconds,
                     .gbit_per_s = plan.bytes() * 8 / run.seconds / 1e9,
                     .batch_p50_ms = percentile(run.latencies_ms, 0.5),
                     .batch_p99_ms = percentile(run.latencies_ms, 0.99),
                     .batch_p999_ms = percentile(run.latencies_ms, 0.999),
                     .reposted = run.reposted,
                     .verified = plan.check,
                     .rails = {}};
    const Rails& rails = engine.rail_states();
    for (std::size_t rail = 0; rail < engine.rails(); ++rail) {
        const RailState& state = rails[rail];
        record.config.devices.push_back(engine.device(rail));
        records::TransferRail entry{.device = engine.device(rail),
                                    .bytes = run.per_rail[rail],
                                    .up = state.up,
                                    .failures = state.failures,
                                    .restored = state.restored};
        // How long the dead rail took to be noticed: from its last completion to its error.
        if (state.first_detection)
            entry.detect_ms =
                std::chrono::duration<double, std::milli>(*state.first_detection).count();
        if (!state.up) entry.down_because = state.down_because;
        record.result.rails.push_back(entry);
    }
    record.environment = records::host_environment(records::kTransferTool);
    record.environment.device = fmt::format("{}", fmt::join(record.config.devices, ","));
    record.environment.provider = engine.provider(0);
    record.environment.link_layer =
        engine.port(0).link_layer == IBV_LINK_LAYER_INFINIBAND ? "InfiniBand" : "Ethernet";
    const char* lab = std::getenv("RDMALAB_IN_LAB");
    record.environment.lab = lab ? fmt::format("rdmalab lab ({})", lab) : "no";
    if (const char* hosts = std::getenv("RDMALAB_HOSTS")) record.environment.lab_hosts = hosts;
    if (const char* faults = std::getenv("RDMALAB_FAULTS"); faults && *faults)
        record.environment.lab_faults = faults;
    return record;
}

// The client's last lines: each dead rail, the run in words, and the record line; then the
// record file, with --json.
void report_run(const BenchOptions& options, const records::TransferRecord& record) {
    const records::TransferResult& r = record.result;
    std::string per_rail_fields, rail_lines;
    for (std::size_t rail = 0; rail < r.rails.size(); ++rail) {
        const records::TransferRail& state = r.rails[rail];
        per_rail_fields += fmt::format(
            " rail{0}_bytes={1} rail{0}_up={2} rail{0}_failures={3} rail{0}_restored={4}", rail + 1,
            state.bytes, state.up ? 1 : 0, state.failures, state.restored);
        if (state.detect_ms) {
            per_rail_fields += fmt::format(" rail{}_detect_ms={:.1f}", rail + 1, *state.detect_ms);
            rail_lines += fmt::format(
                "client: rail {} went down {:.1f} ms after its last completion (the QP's bound: "
                "({} + 1) x 4.096 us x 2^{} = {:.1f} ms); {}\n",
                rail + 1, *state.detect_ms, options.retry_cnt, options.ack_timeout,
                std::chrono::duration<double, std::milli>(
                    retry_time(options.retry_cnt, options.ack_timeout))
                    .count(),
                state.up ? fmt::format("back after {} failure(s)", state.failures)
                         : fmt::format("down: {}", state.down_because.value_or("")));
        }
    }
    const records::TransferConfig& c = record.config;
    fmt::print(
        "{}client: {} batches of {} x {} bytes ({}) in {:.3f} s: {:.3f} Gbit/s; batch latency "
        "p50 {:.2f} ms, p99 {:.2f} ms, p99.9 {:.2f} ms; {} slices posted again; {}\n",
        rail_lines, c.batches, c.batch, c.block, c.op, r.seconds, r.gbit_per_s, r.batch_p50_ms,
        r.batch_p99_ms, r.batch_p999_ms, r.reposted,
        c.check ? "every byte verified" : "not verified (--check verifies)");
    fmt::print(
        "record op={} rails={} qps={} block={} batch={} batches={} bytes={} seconds={:.6f} "
        "gbit={:.4f} p50_ms={:.3f} p99_ms={:.3f} p999_ms={:.3f} reposted={} verified={}{}\n",
        c.op, c.rails, c.qps_per_rail.value_or(1), c.block, c.batch, c.batches, r.bytes, r.seconds,
        r.gbit_per_s, r.batch_p50_ms, r.batch_p99_ms, r.batch_p999_ms, r.reposted, c.check ? 1 : 0,
        per_rail_fields);
    std::fflush(stdout);
    if (!options.json.empty()) records::write_transfer_records(options.json, record);
}

// One rank of a job: its role from its rank (the launcher's, unless --rank), the hosts and the
// pattern, made into the server's or the client's options; or why it has none.
std::optional<std::string> take_job_role(BenchOptions& options) {
    const std::vector<std::string> hosts = split_hosts(options.hosts);
    for (const std::string& host : hosts)
        if (host.empty()) return fmt::format("--hosts '{}': an empty host name", options.hosts);
    const int rank = options.rank >= 0 ? options.rank : launcher_rank();
    if (rank < 0) return "no rank: give --rank, or run under mpirun or srun";
    const JobPattern pattern =
        options.pattern == "pairwise" ? JobPattern::kPairwise : JobPattern::kManyToOne;
    auto role = job_role(pattern, rank, static_cast<int>(hosts.size()), options.port);
    if (auto* why = std::get_if<std::string>(&role)) return "--hosts: " + *why;
    const JobRole& r = std::get<JobRole>(role);
    const int initiators = job_initiators(pattern, static_cast<int>(hosts.size()));
    if (!options.json.empty() && initiators > 1 && options.json.find("{rank}") == std::string::npos)
        return fmt::format("--json {}: {} initiators would each write it; put {{rank}} in the name",
                           options.json, initiators);
    options.server = r.target;
    options.server_address = hosts[static_cast<std::size_t>(r.peer)];
    options.port = r.port;
    options.clients = r.target ? r.initiators : 1;
    options.json = with_rank(options.json, rank);
    if (r.target)
        fmt::print("rank {} of {}: the target of {} initiator(s), on port {}\n", rank, hosts.size(),
                   r.initiators, r.port);
    else
        fmt::print("rank {} of {}: an initiator into rank {} ({}), port {}\n", rank, hosts.size(),
                   r.peer, options.server_address, r.port);
    std::fflush(stdout);
    return std::nullopt;
}

int run_client(const BenchOptions& options, std::vector<RailDevice> rail_list) {
    Settings settings;
    settings.slice_bytes = static_cast<std::uint32_t>(*parse_size(options.slice));
    settings.policy = options.policy == "score" ? RailPolicy::kScore : RailPolicy::kRoundRobin;
    settings.retry_cnt = static_cast<std::uint8_t>(options.retry_cnt);
    settings.timeout = static_cast<std::uint8_t>(options.ack_timeout);
    settings.retry.first = std::chrono::milliseconds(options.rail_retry_ms);
    settings.retry.longest = std::chrono::milliseconds(options.rail_retry_max_ms);
    settings.qps_per_rail = options.qps;
    Engine engine(std::move(rail_list), settings);
    const Plan plan{.op = options.op == "write" ? Opcode::kWrite : Opcode::kRead,
                    .check = options.check,
                    .rails = static_cast<std::uint8_t>(engine.rails()),
                    .qps = static_cast<std::uint8_t>(options.qps),
                    .block = static_cast<std::uint32_t>(options.size),
                    .batch = options.batch,
                    .batches = options.batches};
    const bool writes = plan.op == Opcode::kWrite;
    const std::size_t batch_bytes = std::size_t{plan.block} * plan.batch;
    // The source of WRITEs needs no access beyond the NIC reading it; READs land here.
    BenchSegment local(engine, options.memory, plan.bytes(), 0, !writes, "client");
    if (writes)
        for (std::uint32_t b = 0; b < plan.batches; ++b)
            local.fill(b * batch_bytes, batch_bytes, b + 1);
    const SegmentId segment = local.id();
    auto tcp = TcpExchange::connect_to(options.server_address, options.port, options.timeout());
    send_record(tcp, encode_plan(plan));
    auto described = decode_segment(receive_record(tcp, "segment descriptor"));
    if (auto* why = std::get_if<std::string>(&described)) fail("the server's " + *why);
    const SegmentDescriptor remote = std::get<SegmentDescriptor>(described);
    engine.add_remote_segment(remote);
    exchange_endpoints(engine, tcp, false);
    // Ready; the server answers once every client it waits for is (their batches start together).
    send_word(tcp, kDone);
    expect_word(tcp, kDone, "the server's word that every client is connected");
    // A rail that went down is tried again after its back-off: our fresh QPs' endpoints to the
    // server, which makes fresh QPs of its own, connects them and answers with their endpoints.
    // A renewal whose exchange broke (no answer within the exchange's time limit) leaves the
    // stream out of step: a late answer would be read as the next one. No renewal after it.
    bool exchange_broken = false;
    if (options.rail_retry_ms > 0)
        engine.on_rail_renewal([&](std::span<const RailEndpoint> ours) {
            if (exchange_broken) fail("no renewal: an earlier one's exchange broke");
            std::vector<std::vector<std::byte>> answers;
            try {
                for (const RailEndpoint& endpoint : ours) send_record(tcp, encode(endpoint));
                // An endpoint per QP, or one refusal.
                do {
                    answers.push_back(receive_record(tcp, "answer to a renewal"));
                } while (!is_refusal(answers.back()) && answers.size() < ours.size());
            } catch (const Error&) {
                exchange_broken = true;
                throw;
            }
            std::vector<RailEndpoint> theirs;
            for (const auto& answer : answers) theirs.push_back(renewal_answer(answer));
            return theirs;
        });

    // READ: the server filled its segment from seed 1; what each batch read is checked
    // against the same bytes made here.
    std::optional<Buffer> expected;
    std::optional<Buffer> landed;  // a READ batch's bytes, copied here to be compared
    if (!writes && plan.check) {
        expected.emplace(plan.bytes());
        fill_pattern(expected->bytes(), 1);
        landed.emplace(batch_bytes);
    }
    ClientRun run;
    run.per_rail.assign(engine.rails(), 0);
    // A line a harness can wait for (the lab's tests take a rail down under the batches).
    fmt::print("client: {} rails connected; the batches start\n", engine.rails());
    std::fflush(stdout);
    const auto start = Clock::now();
    for (std::uint32_t b = 0; b < plan.batches; ++b) {
        // #region batch
        std::vector<Request> requests;
        for (std::uint32_t i = 0; i < plan.batch; ++i) {
            const std::uint64_t offset = b * batch_bytes + std::uint64_t{i} * plan.block;
            requests.push_back({plan.op, segment, offset, remote.id, offset, plan.block});
        }
        const auto submitted = Clock::now();
        const BatchId id = engine.submit(requests, writes);
        const BatchStatus status = engine.wait(id, options.timeout());
        if (status.state == BatchState::kFailed) fail(status.error);
        // #endregion batch
        run.latencies_ms.push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - submitted).count());
        for (std::size_t rail = 0; rail < run.per_rail.size(); ++rail)
            run.per_rail[rail] += status.bytes_per_rail[rail];
        run.reposted += status.reposted;
        if (!writes && plan.check) {
            local.read(b * batch_bytes, landed->bytes());
            if (std::memcmp(landed->data(), expected->data() + b * batch_bytes, batch_bytes) != 0)
                fail(fmt::format("batch {}: what was read is not what the server holds", id));
        }
    }
    run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::array<std::byte, 4> done{};
    store_be32(done, kDone);
    send_record(tcp, done);
    const std::uint32_t verified = receive_word(tcp);
    if (writes && plan.check && verified != plan.batches)
        fail(fmt::format("the server verified {} of {} batches", verified, plan.batches));

    report_run(options, transfer_record(options, engine, local, plan, run));
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return run_program("transfer-bench", [&] {
        CommandLine cli{"The transfer engine between two hosts: batches over every rail",
                        "transfer-bench"};
        BenchOptions options;
        options.size = 64 * 1024;
        options.timeout_s = 30;
        cli.add_connection_options(options);
        cli.existing("-s").description("bytes per block (one request of a batch)");
        cli.option("--devices", options.devices,
                   "the rails' RDMA devices, comma-separated, or auto: every device whose port "
                   "is ACTIVE (those nearest --near's target)")
            .show_default();
        cli.option("--near", options.near,
                   "with --devices auto, only the devices nearest this: numa:N (on NUMA node N) "
                   "or gpu:BUS:DEV.FN (fewest PCI bridges to that GPU)");
        cli.option("--op", options.op, "WRITE to the server or READ from it")
            .choices({"write", "read"})
            .show_default();
        cli.option("--batch", options.batch, "blocks per batch").range(1U, 4096U).show_default();
        cli.option("--batches", options.batches, "batches, one after another")
            .range(1U, 100000U)
            .show_default();
        cli.option("--slice", options.slice, "bytes per slice: a request is cut into slices")
            .is_size()
            .show_default();
        cli.option("--qps", options.qps,
                   "RC QPs per rail (the client's choice; slices take a rail's QPs in turn)")
            .range(1U, kMaxQpsPerRail)
            .show_default();
        cli.option("--policy", options.policy, "how a slice's rail is chosen")
            .choices({"score", "round-robin"})
            .show_default();
        cli.flag("--check", options.check, "verify every byte");
        cli.option("--retry", options.retry_cnt, "the QPs' retry_cnt (7: rxe retries forever)")
            .range(0, 7)
            .show_default();
        cli.option("--ack-timeout", options.ack_timeout, "the QPs' timeout: 4.096 us x 2^N")
            .range(1, 31)
            .show_default();
        cli.option("--rail-retry", options.rail_retry_ms,
                   "ms before a rail that went down is tried again (doubling while it fails; 0: "
                   "never)")
            .range(0, 600000)
            .show_default();
        cli.option("--rail-retry-max", options.rail_retry_max_ms,
                   "ms: the longest wait between tries of a rail")
            .range(1, 3600000)
            .show_default();
        cli.subcommand("server")
            .option("--clients", options.clients,
                    "initiators to take at once (many-to-one), their batches started together")
            .range(1U, 64U);
        gpu::add_memory_options(cli, options.memory);
        cli.subcommand("client").option(
            "--json", options.json,
            "write the run as a record to FILE (rdma-bench records and plot read it)");
        CommandLine job = cli.add_subcommand(
            "job", "one rank of a job under mpirun or srun: a target or an initiator, by rank");
        job.option("--hosts", options.hosts, "every rank's host (its address), in rank order")
            .required();
        job.option("--rank", options.rank, "this rank (default: from mpirun or srun)")
            .range(0, 4095);
        job.option("--pattern", options.pattern,
                   "pairwise: ranks 2k and 2k+1 (the initiator); many-to-one: every rank into 0")
            .choices({"pairwise", "many-to-one"})
            .show_default();
        job.option("--json", options.json,
                   "an initiator writes its record to FILE; {rank} in FILE becomes the rank");
        cli.parse_or_exit(argc, argv);
        if (cli.chose("job"))
            if (auto why = take_job_role(options)) {
                fmt::print(stderr, "transfer-bench: {} (run with --help for usage)\n", *why);
                return 2;
            }
        const std::size_t total = options.size * options.batch * std::size_t{options.batches};
        if (options.size > UINT32_MAX || total > kMaxBytes) {
            fmt::print(stderr,
                       "transfer-bench: -s {} x --batch {} x --batches {} is more than {} bytes "
                       "(run with --help for usage)\n",
                       options.size, options.batch, options.batches, kMaxBytes);
            return 2;
        }
        if (*parse_size(options.slice) > UINT32_MAX) {
            fmt::print(stderr,
                       "transfer-bench: --slice {} is too large (run with --help for usage)\n",
                       options.slice);
            return 2;
        }
        auto rails = rail_devices(options, options.server ? "server" : "client");
        if (auto* why = std::get_if<std::string>(&rails)) {
            fmt::print(stderr, "transfer-bench: {} (run with --help for usage)\n", *why);
            return 2;
        }
        auto& rail_list = std::get<std::vector<RailDevice>>(rails);
        return options.server ? run_server(options, std::move(rail_list))
                              : run_client(options, std::move(rail_list));
    });
}
