// The client and server of one rdma-bench run; see session.hpp. The protocol, in order:
// hello ↔ hello; then per configuration: config → endpoints ← endpoints → ready ←; then per
// phase (warm-up, measurement): phase → go ← (measure) sent → counted ←; done →; finally bye →.
#include "rdmalab/bench/session.hpp"

#include "rdmalab/bench/control.hpp"
#include "rdmalab/bench/engine.hpp"
#include "rdmalab/bench/peer_messages.hpp"
#include "rdmalab/bench/stats.hpp"
#include "rdmalab/error.hpp"

#include <fmt/core.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace rdmalab::bench {

namespace {

using std::chrono::milliseconds;

double cpu_seconds() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    auto seconds = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

Limits limits_for(const SessionOptions& options, const BenchConfig& config) {
    return Limits{options.timeout(), to_milliseconds(options.max_phase_s + config.duration_s)};
}

Record endpoints_message(const Engine& engine) {
    Record list = Record::array();
    for (const QpEndpoint& endpoint : engine.local_endpoints())
        list.push_back(to_hex(encode_qp_endpoint(endpoint)));
    return Record{{"type", "endpoints"},
                  {"endpoints", list},
                  {"responder_depth", engine.responder_depth()},
                  {"memory_path", gpu::path_name(engine.memory_path())},
                  {"memory_where", engine.memory_description()},
                  {"memory_copies", engine.staging_copies_mode()}};
}

// What one side's staging copies mean for the record's rates, or "" where it does not stage.
std::string staging_note(const char* side, const records::BenchMemorySide& memory) {
    const std::string& copies = memory.staging_copies;
    if (copies == "per phase")
        return fmt::format(
            "{} staging: copies once per phase, outside the timed loop: the rates are the RDMA "
            "half "
            "(NIC <-> pinned bounce buffer); the copies' bandwidth: gpu-memory-bench",
            side);
    if (copies == "per message")
        return fmt::format(
            "{} staging: {} copies inside the timed loop, one per message: the rates include them",
            side, memory.copies_in_timed_loop);
    return "";
}

// The record's "config": the knobs as BenchConfig names them, and the memory each side used.
records::BenchKnobs record_knobs(const BenchConfig& c, const SessionOptions& options,
                                 const gpu::MemorySpec& server_memory) {
    return records::BenchKnobs{.op = op_name(c.op),
                               .transport = transport_name(c.transport),
                               .mode = mode_name(c.mode),
                               .size = c.size,
                               .window = c.window,
                               .qps = c.qps,
                               .post_list = c.post_list,
                               .signal_every = c.signal_every,
                               .inline_size = c.inline_size,
                               .sge = c.sge,
                               .srq = c.srq,
                               .shared_cq = c.shared_cq,
                               .events = c.events,
                               .iters = c.iters,
                               .duration_s = c.duration_s,
                               .warmup = c.warmup,
                               .memory = gpu::to_string(options.memory.memory),
                               .server_memory = gpu::to_string(server_memory),
                               .api = post_api_name(options.api)};  // how the client posted
}

// A string the peer's hello names about itself, for the record (kept short), or "".
std::string peer_text(const Record& hello, const char* key) {
    if (!hello.contains(key) || !hello[key].is_string()) return "";
    return hello[key].get<std::string>().substr(0, 200);
}

// Prints, once per run, the ladder's probe lines and the path; again whenever the path (or when
// its staging copies run) changes.
void print_memory(const char* side, const Engine& engine, const gpu::MemorySpec& spec,
                  std::string& last_path) {
    std::string path = gpu::path_name(engine.memory_path());
    if (engine.memory_path() == gpu::Path::kStaging)
        path += fmt::format(", staging copies {}", engine.staging_copies_mode());
    if (path == last_path) return;
    if (last_path.empty()) {
        // Each configuration registers a buffer sized for it: the sizes below are the first one's.
        fmt::print("{}: the registration ladder, for the first configuration's buffer:\n", side);
        for (const std::string& line : engine.memory_report()) fmt::print("{}: {}\n", side, line);
    }
    std::string memory = fmt::format("{} memory", gpu::to_string(spec));
    if (engine.memory_description() != memory)
        memory += fmt::format(" ({})", engine.memory_description());
    fmt::print("{}: buffer in {}, registered via {}\n", side, memory, path);
    std::fflush(stdout);
    last_path = path;
}

Record hello(const BenchDevice& device, const gpu::MemorySpec& memory) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    return Record{{"type", "hello"},
                  {"protocol", kProtocolVersion},
                  {"tool", kToolVersion},
                  {"device", device.name},
                  {"provider", device.provider},
                  {"host", host},
                  {"memory", gpu::to_string(memory)},
                  {"active_mtu", static_cast<int>(device.port.active_mtu)}};
}

ibv_mtu path_mtu_with(const BenchDevice& device, const Record& peer_hello) {
    return std::min(device.port.active_mtu, peer_mtu(peer_hello));
}

// ---- The client's output.

struct Row {
    std::string text;
};

std::string format_rate(double value) {
    return value > 0 ? fmt::format("{:.4f}", value) : "-";
}

void print_header(Mode mode, bool gbps) {
    if (mode == Mode::kBandwidth)
        fmt::print("{:<58} {:>9}{} {:>9} {:>10} {:>8} {:>9} {:>9}\n", "configuration", "GiB/s",
                   gbps ? "      Gb/s" : "", "MOPS", "recv MOPS", "lost", "cpu c µs", "cpu s µs");
    else
        fmt::print("{:<58} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}  {}\n", "configuration", "min µs",
                   "median", "mean", "p99", "p99.9", "max", "(reported as)");
}

bool stderr_is_terminal() {
    return isatty(STDERR_FILENO) == 1;
}

}  // namespace

std::string knob_text(const BenchConfig& c, const std::string& knob) {
    auto on_off = [](bool b) { return std::string(b ? "on" : "off"); };
    if (knob == "op") return op_name(c.op);
    if (knob == "transport") return transport_name(c.transport);
    if (knob == "mode") return mode_name(c.mode);
    if (knob == "size") return std::to_string(c.size);
    if (knob == "window") return std::to_string(c.window);
    if (knob == "qps") return std::to_string(c.qps);
    if (knob == "post_list") return std::to_string(c.post_list);
    if (knob == "signal_every") return std::to_string(c.signal_every);
    if (knob == "inline") return std::to_string(c.inline_size);
    if (knob == "sge") return std::to_string(c.sge);
    if (knob == "srq") return on_off(c.srq);
    if (knob == "shared_cq") return on_off(c.shared_cq);
    if (knob == "events") return on_off(c.events);
    fail("unknown knob " + knob);
}

std::optional<std::string> pinned_mismatch(const BenchConfig& config, const PinnedKnobs& pinned) {
    for (const auto& [knob, allowed] : pinned) {
        std::string value = knob_text(config, knob);
        if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
            std::string list;
            for (const std::string& a : allowed) list += (list.empty() ? "" : ",") + a;
            return fmt::format("the client asks for {} {}, but this server was started with {} {}",
                               knob, value, knob, list);
        }
    }
    return std::nullopt;
}

// ---- Server.

namespace {

// The memory asked for must exist before a peer is involved: one line naming what is missing
// ("--mem cuda: no CUDA driver (libcuda.so.1 not found)").
void check_memory_available(const gpu::MemoryOptions& options) {
    gpu::DeviceMemory probe(options.memory, 4096);
}

void serve_configuration(ControlChannel& control, BenchDevice& device, ibv_mtu path_mtu,
                         const Record& message, const SessionOptions& options,
                         const PinnedKnobs& pinned, std::string& last_path) {
    BenchConfig config = BenchConfig::from_json(field<Record>(message, "config"));
    const Operation& row = operation(config.op);
    if (auto why = pinned_mismatch(config, pinned)) fail(*why);
    if (auto why = device_problem(config, device, path_mtu)) fail("server: " + *why);
    const Limits limits = limits_for(options, config);
    const milliseconds step = options.timeout();

    Engine engine(device, config, Side::kServer, options.memory, options.stage_each_message,
                  options.api);
    print_memory("server", engine, options.memory.memory, last_path);
    control.send(endpoints_message(engine));
    Record peer = control.expect("endpoints", step);
    engine.connect(decode_endpoints(peer, config), peer_depth(peer));
    control.send(Record{{"type", "ready"}});

    for (;;) {
        Record next = control.receive(step);
        std::string type = field<std::string>(next, "type");
        if (type == "done") return;
        if (type != "phase")
            fail(fmt::format("expected 'phase' or 'done' from the client, got '{}'", type));
        const auto count = field<std::uint64_t>(next, "count");
        const bool warmup = field<bool>(next, "warmup");
        if (count > (std::uint64_t{1} << 32)) fail("the client asked for too many operations");

        engine.clear_destination();
        const double cpu0 = cpu_seconds(), t0 = now_seconds();
        control.send(Record{{"type", "go"}});
        ReceiverResult received;
        Record sent;
        if (config.mode == Mode::kLatency) {
            engine.run_pong(count, limits);
            sent = control.expect("sent", limits.phase);
        } else if (row.target_receives()) {
            received = engine.run_receiver(
                [&]() -> std::optional<std::vector<std::uint64_t>> {
                    if (!control.readable()) return std::nullopt;
                    sent = control.expect("sent", step);
                    return field<std::vector<std::uint64_t>>(sent, "per_qp");
                },
                limits);
        } else {
            sent = control.expect("sent", limits.phase);  // no receives: this side's CPU is idle
        }
        const double cpu1 = cpu_seconds(), t1 = now_seconds();

        Record counted{{"type", "counted"},
                       {"messages", received.messages},
                       {"bytes", received.bytes},
                       {"seconds", received.seconds},
                       {"cpu_s", cpu1 - cpu0},
                       {"elapsed_s", t1 - t0},
                       {"counter", engine.atomic_counter()},
                       {"staging_copies", engine.staging_copies()}};
        // The bytes that landed here equal the sender's pattern (one-sided and two-sided alike;
        // where every message was lost, UC or UD, nothing landed).
        const bool lands_here = row.verify == Verify::kTargetPattern &&
                                (!row.target_receives() || received.messages > 0);
        if (!warmup && config.mode == Mode::kBandwidth && lands_here) {
            auto why = engine.verify_destination();
            counted["verified"] = !why.has_value();
            if (why) fail("data check: " + *why);
        }
        control.send(counted);
    }
}

}  // namespace

int run_server(const SessionOptions& options, const PinnedKnobs& pinned) {
    check_memory_available(options.memory);
    BenchDevice device =
        open_bench_device(options.device, options.ib_port, options.gid_index, options.tclass);
    fmt::print("server: {} ({})\n", device.port.description, device.provider);
    std::fflush(stdout);
    ControlChannel control(
        TcpExchange::accept_one(options.port, options.bind_address, options.accept_timeout()));
    const milliseconds step = options.timeout();
    try {
        Record peer_hello = control.expect("hello", step);
        ibv_mtu path_mtu = path_mtu_with(device, peer_hello);
        control.send(hello(device, options.memory.memory));
        std::size_t served = 0;
        std::string last_path;
        for (;;) {
            Record message = control.receive(step);
            std::string type = field<std::string>(message, "type");
            if (type == "bye") break;
            if (type != "config")
                fail(fmt::format("expected 'config' or 'bye' from the client, got '{}'", type));
            serve_configuration(control, device, path_mtu, message, options, pinned, last_path);
            ++served;
        }
        fmt::print("server: served {} configuration(s) for {}\n", served,
                   field<std::string>(peer_hello, "host"));
    } catch (const Error& e) {
        control.send_error(e.what());
        throw;
    }
    return 0;
}

// ---- Client.

namespace {

struct PhaseOutcome {
    InitiatorResult initiator;
    std::vector<double> samples_ns;
    double client_cpu_s = 0;
    Record counted;
};

PhaseOutcome run_phase(ControlChannel& control, Engine& engine, const BenchConfig& config,
                       std::uint64_t count, double duration_s, bool warmup, const Limits& limits,
                       milliseconds step) {
    engine.clear_destination();
    control.send(Record{
        {"type", "phase"}, {"count", count}, {"duration_s", duration_s}, {"warmup", warmup}});
    control.expect("go", step);
    PhaseOutcome outcome;
    const double cpu0 = cpu_seconds();
    std::vector<std::uint64_t> per_qp;
    if (config.mode == Mode::kLatency) {
        outcome.samples_ns = engine.run_ping(count, limits);
        per_qp = {count};
    } else {
        outcome.initiator = engine.run_initiator(count, duration_s, limits);
        per_qp = outcome.initiator.per_qp;
    }
    outcome.client_cpu_s = cpu_seconds() - cpu0;
    control.send(Record{{"type", "sent"}, {"per_qp", per_qp}});
    // The receiver may wait out losses (UC/UD) or stragglers (RC) before it answers.
    outcome.counted = control.expect("counted", limits.idle + step);
    return outcome;
}

records::BenchRecord measure(ControlChannel& control, BenchDevice& device,
                             const BenchConfig& config, const SessionOptions& options,
                             const records::Environment& environment,
                             const gpu::MemorySpec& server_memory, std::string& last_path) {
    const Limits limits = limits_for(options, config);
    const milliseconds step = options.timeout();
    const Operation& row = operation(config.op);
    control.send(Record{{"type", "config"}, {"config", config.to_json()}});
    Engine engine(device, config, Side::kClient, options.memory, options.stage_each_message,
                  options.api);
    print_memory("client", engine, options.memory.memory, last_path);
    Record peer = control.expect("endpoints", step);
    records::BenchMemorySide server_side = peer_memory(peer, server_memory);
    engine.connect(decode_endpoints(peer, config), peer_depth(peer));
    control.send(endpoints_message(engine));
    control.expect("ready", step);

    if (config.warmup > 0) run_phase(control, engine, config, config.warmup, 0, true, limits, step);
    PhaseOutcome phase =
        run_phase(control, engine, config, config.duration_s > 0 ? 0 : config.iters,
                  config.duration_s, false, limits, step);
    control.send(Record{{"type", "done"}});

    records::BenchResult result;
    const Record& counted = phase.counted;
    const double server_cpu = field<double>(counted, "cpu_s");
    std::uint64_t ops = config.mode == Mode::kLatency ? config.iters : phase.initiator.ops;
    if (config.mode == Mode::kBandwidth) {
        const double seconds = phase.initiator.seconds;
        const double bytes = static_cast<double>(ops) * static_cast<double>(config.size);
        result.throughput = records::BenchThroughput{
            .ops = ops,
            .bytes = static_cast<std::uint64_t>(bytes),
            .seconds = seconds,
            .gib_per_s = seconds > 0 ? bytes / seconds / (1u << 30) : 0.0,
            .gb_per_s = seconds > 0 ? bytes * 8 / seconds / 1e9 : 0.0,
            .mops = seconds > 0 ? static_cast<double>(ops) / seconds / 1e6 : 0.0};
        if (row.target_receives()) {
            auto messages = field<std::uint64_t>(counted, "messages");
            auto rbytes = field<std::uint64_t>(counted, "bytes");
            double rseconds = field<double>(counted, "seconds");
            if (messages > ops)
                fail(fmt::format("the server counted {} messages, more than the {} sent", messages,
                                 ops));
            result.receiver = records::BenchReceiver{
                .messages = messages,
                .bytes = rbytes,
                .lost = ops - messages,
                .seconds = rseconds,
                .mops = rseconds > 0 ? static_cast<double>(messages) / rseconds / 1e6 : 0.0,
                .gib_per_s =
                    rseconds > 0 ? static_cast<double>(rbytes) / rseconds / (1u << 30) : 0.0};
            if (config.transport == Transport::kRC && messages != ops)
                fail(fmt::format("RC lost messages: sent {}, received {}", ops, messages));
        }
        if (row.verify == Verify::kTargetCounter) {
            auto counter = field<std::uint64_t>(counted, "counter");
            result.atomic_counter = counter;
            if (counter != ops)
                fail(fmt::format("{}: the server's counter is {}, not the {} adds completed",
                                 row.name, counter, ops));
        }
        if (row.verify == Verify::kInitiatorPattern) {
            if (auto why = engine.verify_destination()) fail("data check: " + *why);
            result.verified = true;
        } else if (counted.contains("verified")) {
            result.verified = field<bool>(counted, "verified");
        }
    } else {
        // perftest's convention: half the round trip for write/send/write-imm ping-pongs, the
        // whole round trip for READ and atomics (one side's operation is the round trip).
        const bool half = row.reply != Reply::kCompletion;
        std::vector<double> reported = phase.samples_ns;
        if (half)
            for (double& s : reported) s /= 2;
        LatencySummary stats = summarize_latency(std::move(reported));
        result.latency =
            records::BenchLatency{.reported_as = half ? "half round trip" : "round trip",
                                  .samples = stats.samples,
                                  .min_us = stats.min_us,
                                  .median_us = stats.median_us,
                                  .mean_us = stats.mean_us,
                                  .stdev_us = stats.stdev_us,
                                  .p99_us = stats.p99_us,
                                  .p999_us = stats.p999_us,
                                  .max_us = stats.max_us};
    }
    const double elapsed_client = config.mode == Mode::kBandwidth ? phase.initiator.seconds : 0;
    const double per_op = ops > 0 ? 1e6 / static_cast<double>(ops) : 0;
    const double server_elapsed = field<double>(counted, "elapsed_s");
    result.cpu = records::BenchCpu{
        .client_s = phase.client_cpu_s,
        .server_s = server_cpu,
        .client_us_per_op = phase.client_cpu_s * per_op,
        .server_us_per_op = server_cpu * per_op,
        .client_utilization = elapsed_client > 0 ? phase.client_cpu_s / elapsed_client : 0.0,
        .server_utilization = server_elapsed > 0 ? server_cpu / server_elapsed : 0.0};
    records::BenchMemory memory{
        .client = memory_record(options.memory.memory, gpu::path_name(engine.memory_path()),
                                engine.memory_description(), engine.staging_copies_mode()),
        .server = std::move(server_side),
        .note = std::nullopt};
    memory.client.copies_in_timed_loop = engine.staging_copies();
    memory.server.copies_in_timed_loop = field<std::uint64_t>(counted, "staging_copies");
    std::string note;
    for (const auto& [side, facts] :
         {std::pair{"client", &memory.client}, {"server", &memory.server}})
        if (std::string line = staging_note(side, *facts); !line.empty())
            note += (note.empty() ? "" : "; ") + line;
    if (!note.empty()) memory.note = note;
    return records::BenchRecord{.tool = kToolVersion,
                                .config = record_knobs(config, options, server_memory),
                                .memory = std::move(memory),
                                .result = std::move(result),
                                .environment = environment};
}

void print_row(const records::BenchRecord& record, const BenchConfig& config, bool gbps) {
    const records::BenchResult& r = record.result;
    if (const auto& t = r.throughput) {
        std::string recv_mops = "-", lost = "-";
        if (r.receiver) {
            recv_mops = format_rate(r.receiver->mops);
            lost = std::to_string(r.receiver->lost);
        }
        fmt::print(
            "{:<58} {:>9}{} {:>9} {:>10} {:>8} {:>9.3f} {:>9.3f}\n", describe(config),
            format_rate(t->gib_per_s), gbps ? fmt::format(" {:>9}", format_rate(t->gb_per_s)) : "",
            format_rate(t->mops), recv_mops, lost, r.cpu.client_us_per_op, r.cpu.server_us_per_op);
    } else if (const auto& l = r.latency) {
        fmt::print("{:<58} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f}  {}\n",
                   describe(config), l->min_us, l->median_us, l->mean_us, l->p99_us, l->p999_us,
                   l->max_us, l->reported_as);
    }
    std::fflush(stdout);
}

}  // namespace

int run_client(const SessionOptions& options, const std::vector<BenchConfig>& configs) {
    check_memory_available(options.memory);
    BenchDevice device =
        open_bench_device(options.device, options.ib_port, options.gid_index, options.tclass);
    const milliseconds step = options.timeout();
    ControlChannel control(TcpExchange::connect_to(options.server_address, options.port, step));
    std::vector<Record> written;  // the records so far, as the files hold them
    try {
        control.send(hello(device, options.memory.memory));
        Record peer_hello = control.expect("hello", step);
        const ibv_mtu path_mtu = path_mtu_with(device, peer_hello);
        const auto server_memory_text = field<std::string>(peer_hello, "memory");
        const auto server_memory = gpu::parse_memory_spec(server_memory_text);
        if (!server_memory)
            fail(fmt::format("the server reports an unknown memory kind '{}'",
                             server_memory_text.substr(0, 40)));
        // Every configuration is checked before the first runs: a sweep never stops half-way
        // over something knowable in advance.
        for (const BenchConfig& config : configs) {
            if (auto why = config.problem()) fail(*why);
            if (auto why = device_problem(config, device, path_mtu)) fail(*why);
            if (auto why = memory_problem(config, options.memory.memory.kind, server_memory->kind))
                fail(*why);
        }
        records::Environment environment = records::host_environment(kToolVersion);
        const char* lab = std::getenv("RDMALAB_IN_LAB");
        environment.device = device.name;
        environment.provider = device.provider;
        environment.port = device.port.description;
        environment.link_layer =
            device.port.link_layer == IBV_LINK_LAYER_INFINIBAND ? "InfiniBand" : "Ethernet";
        environment.path_mtu = mtu_bytes(path_mtu);
        if (options.tclass >= 0) environment.traffic_class = options.tclass;
        environment.lab = lab ? fmt::format("rdmalab lab ({})", lab) : "no";
        // On the lab's wire: the hosts and any fault applied (a figure made under loss must say
        // so).
        if (const char* hosts = std::getenv("RDMALAB_HOSTS")) environment.lab_hosts = hosts;
        if (const char* faults = std::getenv("RDMALAB_FAULTS"); faults && *faults)
            environment.lab_faults = faults;
        environment.server = records::PeerHost{.host = peer_text(peer_hello, "host"),
                                               .device = peer_text(peer_hello, "device"),
                                               .provider = peer_text(peer_hello, "provider")};
        fmt::print("client: {} ({}) → {}, path MTU {}, {} configuration(s)\n",
                   device.port.description, device.provider, options.server_address,
                   mtu_bytes(path_mtu), configs.size());
        const bool progress = options.progress && stderr_is_terminal();
        std::optional<Mode> header_mode;
        std::string last_path;
        for (std::size_t i = 0; i < configs.size(); ++i) {
            const BenchConfig& config = configs[i];
            if (progress)
                fmt::print(stderr, "\r\033[K[{}/{}] {}", i + 1, configs.size(), describe(config));
            const records::BenchRecord record =
                measure(control, device, config, options, environment, *server_memory, last_path);
            if (progress) fmt::print(stderr, "\r\033[K");
            if (header_mode != config.mode) {
                print_header(config.mode, options.gbps);
                header_mode = config.mode;
            }
            print_row(record, config, options.gbps);
            written.push_back(records::to_json(record));
            // Rewritten whole after every configuration: an interrupted sweep keeps its rows.
            if (!options.json_path.empty()) write_file(options.json_path, to_json(written));
            if (!options.csv_path.empty()) write_file(options.csv_path, to_csv(written));
        }
        control.send(Record{{"type", "bye"}});
    } catch (const Error& e) {
        control.send_error(e.what());
        throw;
    }
    return 0;
}

}  // namespace rdmalab::bench
