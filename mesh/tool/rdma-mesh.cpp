// rdma-mesh: every pair of ranks in a cluster measured both ways — bandwidth at a large size,
// message rate at a small one, latency median and p99 — through rdma-bench's engine, in
// round-robin rounds; then N×N matrices (JSON, CSV), a heatmap per metric and a verdict that
// names slow pairs and the host behind them. Launched by mpirun or srun; MPI only starts the
// ranks, tells them apart and carries QP endpoints and small control messages: every byte
// measured goes over verbs. Run `rdma-mesh --help`.
#include "rdmalab/bench/config.hpp"
#include "rdmalab/bench/control.hpp"
#include "rdmalab/bench/engine.hpp"
#include "rdmalab/bench/records.hpp"
#include "rdmalab/bench/stats.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/gpu/options.hpp"
#include "rdmalab/mesh/heatmap.hpp"
#include "rdmalab/mesh/launch.hpp"
#include "rdmalab/mesh/results.hpp"
#include "rdmalab/mesh/schedule.hpp"
#include "rdmalab/mesh/verdict.hpp"
#include "rdmalab/options.hpp"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <set>
#include <string_view>
#include <thread>

namespace {

using namespace rdmalab;
using namespace rdmalab::bench;
using namespace rdmalab::mesh;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr const char* kTool = "rdma-mesh 0.1";
// Tags: a meeting's messages use kMeetTag + small offsets (two ranks meet once, and every
// receive names its source, so a late message from an earlier peer is never taken for a new
// one's); the rest are one-off.
constexpr int kMeetTag = 100;
constexpr int kSilentTag = 20000;  // "rank R never answered me": others stop waiting for it
constexpr int kRowTag = 20001;     // a rank's results, to rank 0

struct Options {
    std::string devices;  // -d: one name, or a list picked by local rank
    int ib_port = 1;
    int gid_index = -1;
    std::string op = "write";
    std::string transport = "RC";
    std::string size = "64K";
    std::string rate_size = "64";
    std::string lat_size = "8";
    std::string judge = "bw,rate,lat,lat-p99";  // the metrics the verdict flags on
    double duration_s = 1.0;
    std::uint64_t lat_iters = 1000;
    std::uint64_t warmup = 100;
    bool quick = false;
    bool serial = false;
    std::string pairs = "all";  // --pairs: all, sample:K, ring:K, rail (schedule.hpp)
    std::uint64_t seed = 1;     // --seed: sample's random order
    double timeout_s = 5;
    std::string out_dir = ".";
    double fraction = 0.8;
    double latency_factor = 1.5;
    int simulate_silent_rank = -1;  // testing: this rank never answers its peers
    gpu::MemoryOptions memory;
};

void check_mpi(int rc, const char* call) {
    if (rc != MPI_SUCCESS) fail(fmt::format("{} failed (MPI error {})", call, rc));
}

// ---- Messages between ranks: small JSON texts, every wait bounded.

// Sends stay pending until MPI completes them; their buffers live here until then.
class Outbox {
  public:
    void send(int to, int tag, std::string text) {
        auto& entry = pending_.emplace_back(std::move(text), MPI_REQUEST_NULL);
        check_mpi(MPI_Isend(entry.first.data(), static_cast<int>(entry.first.size()), MPI_CHAR, to,
                            tag, MPI_COMM_WORLD, &entry.second),
                  "MPI_Isend");
        reap();
    }
    void reap() {
        while (!pending_.empty()) {
            int done = 0;
            check_mpi(MPI_Test(&pending_.front().second, &done, MPI_STATUS_IGNORE), "MPI_Test");
            if (!done) break;
            pending_.pop_front();
        }
    }
    // At the end: waits up to `limit` for the rest; a send a silent peer never took is left.
    void drain(milliseconds limit) {
        const auto deadline = Clock::now() + limit;
        while (!pending_.empty() && Clock::now() < deadline) {
            int done = 0;
            check_mpi(MPI_Test(&pending_.back().second, &done, MPI_STATUS_IGNORE), "MPI_Test");
            if (done)
                pending_.pop_back();
            else
                std::this_thread::sleep_for(milliseconds(1));
        }
        for (auto& entry : pending_) MPI_Request_free(&entry.second);
        pending_.clear();
    }

  private:
    std::deque<std::pair<std::string, MPI_Request>> pending_;
};

// A message from `from` with `tag`, or nullopt after `limit`.
std::optional<std::string> receive(int from, int tag, milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    for (;;) {
        int ready = 0;
        MPI_Status status{};
        check_mpi(MPI_Iprobe(from, tag, MPI_COMM_WORLD, &ready, &status), "MPI_Iprobe");
        if (ready) {
            int count = 0;
            check_mpi(MPI_Get_count(&status, MPI_CHAR, &count), "MPI_Get_count");
            std::string text(static_cast<std::size_t>(count), '\0');
            check_mpi(MPI_Recv(text.data(), count, MPI_CHAR, status.MPI_SOURCE, tag, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE),
                      "MPI_Recv");
            return text;
        }
        if (Clock::now() >= deadline) return std::nullopt;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

// An MPI barrier that gives up after `limit`, or as soon as `doomed()` says a rank will never
// arrive: true when every rank arrived in time. A request given up on is kept (MPI forbids
// freeing a collective's request) and completes, or not, whenever the late rank arrives.
template <typename Doomed>
bool timed_barrier(milliseconds limit, Doomed doomed) {
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Ibarrier(MPI_COMM_WORLD, &request), "MPI_Ibarrier");
    const auto deadline = Clock::now() + limit;
    for (;;) {
        int done = 0;
        check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
        if (done) return true;
        if (Clock::now() >= deadline || doomed()) {
            static std::vector<MPI_Request> abandoned;
            abandoned.push_back(request);
            return false;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

// ---- One rank's view of the run.

class Rank {
  public:
    Rank(const Options& options, int rank, int size, std::vector<Identity> who,
         std::optional<BenchDevice>& device, Outbox& outbox)
        : o_(options),
          rank_(rank),
          size_(size),
          who_(std::move(who)),
          device_(device),
          outbox_(outbox) {}

    // Meets `peer` for one round: both directions of the three measurements.
    void meet(int peer);

    std::vector<Cell> cells;
    std::vector<Failure> failures;
    std::vector<records::MeshPeerTime> pair_seconds;
    // The longest meeting so far (to size waits for peers still in theirs).
    milliseconds longest_pair() const { return longest_; }
    // Whether some rank is known to be silent (said by a peer, or seen here): a barrier would
    // wait for it in vain.
    bool knows_silent_rank() {
        collect_silent();
        return !silent_.empty();
    }

  private:
    milliseconds longest_{0};
    milliseconds step() const { return to_milliseconds(o_.timeout_s); }
    std::string name(int r) const {
        return fmt::format("rank {} ({})", r, who_[static_cast<std::size_t>(r)].label());
    }
    void collect_silent();
    void announce_silent(int peer);
    Cell& cell_to(int peer);
    // One measurement; returns false when the peer went silent (the rest of the meeting is
    // skipped); a failure it reported is recorded and the meeting goes on.
    bool measure(int peer, int tag, bool initiator, const BenchConfig& config, const char* what);

    // One measurement under way: with whom, its tags (from tag), which side, its engine.
    struct Measurement {
        int peer, tag;
        bool initiator;
        const BenchConfig& config;
        const char* what;
        milliseconds wait;
        Limits limits;
        std::optional<Engine> engine;
    };
    // How a step of a measurement ended: the next step may follow; or the measurement is over
    // (a failure recorded, the peer still answering); or the peer went silent.
    enum class Step { kNext, kOver, kSilent };
    // The failure a measurement's initiator records (the target's is the initiator's to say).
    Step failed(const Measurement& m, const std::string& reason);
    // The peer sent nothing within the timeout: recorded on both sides.
    Step silent(const Measurement& m, const char* waiting_for);
    // Both sides' QPs made, exchanged and connected: RTR/RTS before anything is posted.
    Step connect(Measurement& m);
    // A phase (0: warm-up, 1: the measurement) on each side.
    Step initiate_phase(Measurement& m, int phase);
    Step answer_phase(Measurement& m, int phase);
    // The measurement's numbers into the peer's cell (and the data checked where it landed).
    Step record_result(Measurement& m, const InitiatorResult& result, std::vector<double> samples);

    const Options& o_;
    int rank_, size_;
    std::vector<Identity> who_;
    std::optional<BenchDevice>& device_;
    Outbox& outbox_;
    std::set<int> silent_;
};

void Rank::collect_silent() {
    while (auto text = receive(MPI_ANY_SOURCE, kSilentTag, milliseconds(0))) {
        try {
            silent_.insert(records::mesh_silent_from_json(parse_json(*text, "a silent-rank notice"),
                                                          "a silent-rank notice")
                               .rank);
        } catch (const std::exception&) {
            // A malformed notice only costs a longer wait later.
        }
    }
}

void Rank::announce_silent(int peer) {
    silent_.insert(peer);
    for (int r = 0; r < size_; ++r)
        if (r != rank_ && r != peer)
            outbox_.send(r, kSilentTag, records::to_json(records::MeshSilentNotice{peer}).dump());
}

Cell& Rank::cell_to(int peer) {
    for (Cell& c : cells)
        if (c.to == peer) return c;
    return cells.emplace_back(Cell{peer});
}

void Rank::meet(int peer) {
    const auto start = Clock::now();
    collect_silent();
    auto record_failure = [&](const std::string& reason) {
        failures.push_back(Failure{peer, reason});
    };
    if (silent_.contains(peer)) {
        record_failure(fmt::format("{} was reported silent earlier in the run", name(peer)));
        return;
    }
    // The hello: whether each side can measure at all. A peer may still be busy with an earlier
    // pair (rounds are paced only while every rank keeps time) or have waited out a silent
    // rank: allow the longest pair seen so far, and a timeout per silent rank.
    const milliseconds meet_wait =
        step() * static_cast<long>(2 + silent_.size()) + longest_pair() * 3 / 2;
    const std::string& problem = who_[static_cast<std::size_t>(rank_)].problem;
    outbox_.send(peer, kMeetTag, records::to_json(records::MeshHello{problem}).dump());
    auto hello = receive(peer, kMeetTag, meet_wait);
    if (!hello) {
        record_failure(fmt::format("no answer from {} within {:.1f} s", name(peer),
                                   std::chrono::duration<double>(meet_wait).count()));
        announce_silent(peer);
        return;
    }
    std::string peer_problem;
    try {
        peer_problem =
            records::mesh_hello_from_json(parse_json(*hello, "a hello"), "a hello").problem;
    } catch (const std::exception& e) {
        peer_problem = fmt::format("malformed hello: {}", e.what());
    }
    if (!problem.empty() || !peer_problem.empty()) {
        record_failure(!problem.empty() ? fmt::format("{}: {}", name(rank_), problem)
                                        : fmt::format("{}: {}", name(peer), peer_problem));
        return;
    }

    BenchConfig bw;
    bw.op = *parse_op(o_.op);
    bw.transport = *parse_transport(o_.transport);
    bw.mode = Mode::kBandwidth;
    bw.size = *parse_size(o_.size);
    // 16 messages in flight: enough to fill a link, few enough that a slow link drains them
    // within the timeouts once the duration is over (128 × 64 KiB at 5 Mbit/s takes 13 s).
    bw.window = 16;
    bw.signal_every = 4;
    bw.duration_s = o_.duration_s;
    bw.warmup = o_.warmup;
    BenchConfig rate = bw;
    rate.size = *parse_size(o_.rate_size);
    BenchConfig lat = bw;
    lat.mode = Mode::kLatency;
    lat.size = *parse_size(o_.lat_size);
    lat.window = 1;
    lat.signal_every = 1;
    lat.duration_s = 0;
    lat.iters = o_.lat_iters;

    // The lower rank sends first; each measurement has its own tags.
    const int low = std::min(rank_, peer);
    int tag = kMeetTag + 1;
    for (int from : {low, low == rank_ ? peer : rank_}) {
        const bool initiator = from == rank_;
        for (auto [config, what] : {std::pair{&bw, "bw"}, {&rate, "rate"}, {&lat, "lat"}}) {
            // A peer that stopped answering mid-pair may only be slow (a slow link is what this
            // looks for): the rest of this pair is skipped, but it is not announced as silent.
            if (!measure(peer, tag, initiator, *config, what)) {
                return;
            }
            tag += 8;
        }
    }
    longest_ = std::max(longest_, std::chrono::duration_cast<milliseconds>(Clock::now() - start));
    pair_seconds.push_back(
        records::MeshPeerTime{peer, std::chrono::duration<double>(Clock::now() - start).count()});
}

bool Rank::measure(int peer, int tag, bool initiator, const BenchConfig& config, const char* what) {
    const milliseconds wait = step();
    Measurement m{peer,
                  tag,
                  initiator,
                  config,
                  what,
                  wait,
                  {wait, wait + to_milliseconds(config.duration_s * 2 + 60)},
                  {}};
    Step outcome = connect(m);
    // Phases (warm-up, then the measurement), as rdma-bench runs them: the target clears its
    // destination and says go; the initiator measures and says what it sent; the target
    // counts, checks the data and answers.
    for (int phase = config.warmup > 0 ? 0 : 1; phase < 2 && outcome == Step::kNext; ++phase)
        outcome = initiator ? initiate_phase(m, phase) : answer_phase(m, phase);
    return outcome != Step::kSilent;
}

Rank::Step Rank::failed(const Measurement& m, const std::string& reason) {
    if (m.initiator) failures.push_back(Failure{m.peer, fmt::format("{}: {}", m.what, reason)});
    return Step::kOver;
}

Rank::Step Rank::silent(const Measurement& m, const char* waiting_for) {
    failures.push_back(
        Failure{m.peer, fmt::format("{}: {}", m.what,
                                    fmt::format("{} sent no {} within {:.1f} s", name(m.peer),
                                                waiting_for, o_.timeout_s))});
    return Step::kSilent;
}

std::string status_text(const std::string& error) {
    return records::to_json(records::MeshStatus{error}).dump();
}

// The error a peer's status message names ("" for none).
std::string peer_error(const std::string& text) {
    try {
        return records::mesh_status_from_json(parse_json(text, "a status"), "a status").error;
    } catch (const std::exception& e) {
        return fmt::format("malformed status: {}", e.what());
    }
}

Rank::Step Rank::connect(Measurement& m) {
    // Endpoints: each side's QPs, or why it could not make them.
    std::string error;
    try {
        m.engine.emplace(*device_, m.config, m.initiator ? Side::kClient : Side::kServer,
                         o_.memory);
    } catch (const Error& e) {
        error = e.what();
    }
    records::MeshEndpoints mine{error};
    if (m.engine) {
        mine.endpoints.emplace();
        for (const QpEndpoint& endpoint : m.engine->local_endpoints())
            mine.endpoints->push_back(to_hex(encode_qp_endpoint(endpoint)));
        mine.depth = m.engine->responder_depth();
    }
    outbox_.send(m.peer, m.tag, records::to_json(mine).dump());
    auto theirs_text = receive(m.peer, m.tag, m.wait);
    if (!theirs_text) return silent(m, "endpoints");
    try {
        const records::MeshEndpoints theirs =
            records::mesh_endpoints_from_json(parse_json(*theirs_text, "endpoints"), "endpoints");
        if (!error.empty()) fail(fmt::format("{}: {}", name(rank_), error));
        if (!theirs.error.empty()) fail(fmt::format("{}: {}", name(m.peer), theirs.error));
        if (!theirs.endpoints || !theirs.depth)
            fail(fmt::format("{} sent no endpoints and no error", name(m.peer)));
        std::vector<QpEndpoint> remote;
        for (const std::string& hex : *theirs.endpoints)
            remote.push_back(decode_qp_endpoint_or_throw(
                from_hex(hex), qp_type_of(m.config.transport), PeerBuffer::kAdvertised));
        const unsigned depth = *theirs.depth;
        m.engine->connect(remote, static_cast<std::uint8_t>(std::min(depth, 255u)));
        error.clear();
    } catch (const std::exception& e) {
        error = e.what();
    }
    // Ready: both sides' QPs are at RTR/RTS before anything is posted.
    outbox_.send(m.peer, m.tag + 1, status_text(error));
    auto ready = receive(m.peer, m.tag + 1, m.wait);
    if (!ready) return silent(m, "ready");
    if (!error.empty()) return failed(m, error);
    if (auto e = peer_error(*ready); !e.empty())
        return failed(m, fmt::format("{}: {}", name(m.peer), e));
    return Step::kNext;
}

// A phase's tags (from tag: go, sent, counted), and how many operations or how long it runs.
struct Phase {
    bool warmup;
    int tag;
    std::uint64_t count;
    double duration;
};
Phase phase_of(const BenchConfig& config, int tag, int phase) {
    const bool warmup = phase == 0;
    return Phase{warmup, tag + 2 + phase * 3,
                 warmup ? config.warmup : (config.duration_s > 0 ? 0 : config.iters),
                 warmup ? 0 : config.duration_s};
}

Rank::Step Rank::initiate_phase(Measurement& m, int phase) {
    const Phase p = phase_of(m.config, m.tag, phase);
    auto go = receive(m.peer, p.tag, m.wait);
    if (!go) return silent(m, "go");
    if (auto e = peer_error(*go); !e.empty()) return failed(m, e);
    InitiatorResult result;
    std::vector<double> samples;
    std::string local_error;
    try {
        if (m.config.mode == Mode::kLatency)
            samples = m.engine->run_ping(p.count, m.limits);
        else
            result = m.engine->run_initiator(p.count, p.duration, m.limits);
    } catch (const Error& e) {
        local_error = e.what();
    }
    std::vector<std::uint64_t> per_qp =
        m.config.mode == Mode::kLatency ? std::vector<std::uint64_t>{p.count} : result.per_qp;
    outbox_.send(m.peer, p.tag + 1,
                 records::to_json(records::MeshSent{local_error, per_qp}).dump());
    auto counted = receive(m.peer, p.tag + 2, m.wait * 3 + to_milliseconds(p.duration));
    if (!local_error.empty()) return failed(m, local_error);
    if (!counted) return silent(m, "count");
    if (auto e = peer_error(*counted); !e.empty())
        return failed(m, fmt::format("{}: {}", name(m.peer), e));
    if (p.warmup) return Step::kNext;
    return record_result(m, result, std::move(samples));
}

Rank::Step Rank::record_result(Measurement& m, const InitiatorResult& result,
                               std::vector<double> samples) {
    Cell& c = cell_to(m.peer);
    if (m.config.mode == Mode::kLatency) {
        add_latency(c.values, m.config.op, std::move(samples));
        return Step::kNext;
    }
    add_throughput(c.values, m.what, result.ops, m.config.size, result.seconds);
    if (operation(m.config.op).verify == Verify::kInitiatorPattern) {
        if (auto why = m.engine->verify_destination()) return failed(m, "data check: " + *why);
    }
    return Step::kNext;
}

Rank::Step Rank::answer_phase(Measurement& m, int phase) {
    const Phase p = phase_of(m.config, m.tag, phase);
    std::string local_error;
    try {
        m.engine->clear_destination();
    } catch (const Error& e) {
        local_error = e.what();
    }
    outbox_.send(m.peer, p.tag, status_text(local_error));
    if (!local_error.empty()) return Step::kOver;
    // The initiator runs for the duration (or the count) before it reports.
    // As long as the initiator's own limits let it run: on a slow link, draining the
    // window of messages posted before the duration ended takes a while.
    const milliseconds phase_wait = m.limits.phase + m.wait;
    std::optional<std::string> sent;
    try {
        if (m.config.mode == Mode::kLatency) {
            m.engine->run_pong(p.count, m.limits);
        } else if (operation(m.config.op).target_receives()) {
            m.engine->run_receiver(
                [&]() -> std::optional<std::vector<std::uint64_t>> {
                    if (!sent) sent = receive(m.peer, p.tag + 1, milliseconds(0));
                    if (!sent) return std::nullopt;
                    return records::mesh_sent_from_json(parse_json(*sent, "sent"), "sent").per_qp;
                },
                m.limits);
        }
        if (!sent) sent = receive(m.peer, p.tag + 1, phase_wait);
        if (!sent) return silent(m, "report of what it sent");
        const bool lands_here = operation(m.config.op).verify == Verify::kTargetPattern;
        if (!p.warmup && m.config.mode == Mode::kBandwidth && lands_here)
            if (auto why = m.engine->verify_destination()) fail("data check: " + *why);
    } catch (const std::exception& e) {
        local_error = e.what();
        if (!sent) sent = receive(m.peer, p.tag + 1, phase_wait);
        if (!sent) return silent(m, "report of what it sent");
    }
    outbox_.send(m.peer, p.tag + 2, status_text(local_error));
    return Step::kNext;
}

// ---- Rank 0: the matrices, the files, the verdict.

std::string gid_text(const ibv_gid& gid) {
    char text[INET6_ADDRSTRLEN] = {};
    inet_ntop(AF_INET6, gid.raw, text, sizeof text);
    return text;
}

std::string ipv4_of(const ibv_gid& gid) {
    static const std::uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(gid.raw, prefix, sizeof prefix) != 0) return "";
    return fmt::format("{}.{}.{}.{}", gid.raw[12], gid.raw[13], gid.raw[14], gid.raw[15]);
}

std::string hostname() {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    return host;
}

// The heatmaps: one per metric, the judged ones' flagged cells marked.
void write_heatmaps(const Options& o, const std::vector<Identity>& who, const Gathered& g,
                    const Verdict& stats, const std::vector<std::pair<int, int>>& planned,
                    const records::MeshEnvironment& environment,
                    const records::MeshSettings& settings) {
    std::vector<std::string> labels;
    for (const Identity& i : who) labels.push_back(fmt::format("{} {}", i.rank, i.label()));
    std::vector<std::pair<int, int>> failed_pairs;
    for (const FailedPair& f : g.failed) failed_pairs.emplace_back(f.a, f.b);
    for (std::size_t k = 0; k < g.metrics.size(); ++k) {
        Heatmap h;
        h.title = fmt::format("rdma-mesh: {} {}, {} ranks{}", o.op, g.metrics[k].label, who.size(),
                              judges(o.judge, g.metrics[k].key) ? "" : " (not judged)");
        h.caption =
            fmt::format("{} on {} ({}), kernel {}, {}\n{}", kTool, who[0].device, who[0].provider,
                        environment.host.kernel, environment.host.date, settings.describe);
        h.labels = labels;
        h.metric = &g.metrics[k];
        h.typical = stats.metrics[k].typical;
        h.threshold = stats.metrics[k].threshold;
        h.failed = failed_pairs;
        if (o.pairs != "all") h.planned = planned;
        std::string file = g.metrics[k].key;
        std::replace(file.begin(), file.end(), '_', '-');
        write_file(o.out_dir + "/mesh-" + file + ".svg", render_heatmap(h));
    }
}

// Rank 0's report of the rows: the verdict, mesh.json, mesh.csv, the heatmaps and the summary.
// 1 when a pair is flagged.
int report(const Options& o, const std::vector<Identity>& who, const std::vector<Round>& rounds,
           const std::vector<records::MeshRow>& rows, const std::vector<FailedPair>& lost_rows,
           const records::MeshEnvironment& environment, const records::MeshSettings& settings) {
    const int n = static_cast<int>(who.size());
    const std::vector<std::pair<int, int>> planned = pairs_of(rounds);
    const Gathered g = gather_rows(n, rows, lost_rows);
    const Thresholds thresholds{o.fraction, o.latency_factor};
    // Every metric's typical value and threshold; the verdict over the metrics --judge names.
    const Verdict stats = judge(n, g.metrics, {}, thresholds, planned);
    std::vector<Metric> judged;
    for (const Metric& m : g.metrics)
        if (judges(o.judge, m.key)) judged.push_back(m);
    const Verdict verdict = judge(n, judged, g.failed, thresholds, planned);
    std::vector<std::string> hosts;
    for (const Identity& i : who) hosts.push_back(i.label());
    const std::vector<std::string> lines = report_lines(stats, g.metrics, verdict, judged, hosts);

    // JSON: everything; CSV: one row per directed pair with both ends' identity.
    const records::MeshRecord record{.tool = kTool,
                                     .environment = environment,
                                     .settings = settings,
                                     .ranks = who,
                                     .rounds = rounds.size(),
                                     .planned_pairs = planned.size(),
                                     .pair_seconds = g.pair_seconds,
                                     .metrics = matrices_record(g.metrics, stats, o.judge),
                                     .failed = failed_record(g.failed),
                                     .slow = slow_record(verdict.slow),
                                     .culprits = culprits_record(verdict.culprits, who),
                                     .summary = lines,
                                     .flagged = verdict.flagged()};
    ::mkdir(o.out_dir.c_str(), 0755);
    write_file(o.out_dir + "/mesh.json", records::to_json(record).dump(2) + "\n");
    write_file(o.out_dir + "/mesh.csv",
               csv_text(who, g.metrics, environment.host.date, environment.host.kernel, kTool));
    write_heatmaps(o, who, g, stats, planned, environment, settings);
    for (const std::string& line : lines) fmt::print("rdma-mesh: {}\n", line);
    fmt::print("rdma-mesh: wrote {0}/mesh.json, {0}/mesh.csv and {0}/mesh-*.svg\n", o.out_dir);
    std::fflush(stdout);
    return verdict.flagged() ? 1 : 0;
}

// The operations this tool offers, by name: its choice, not a property of the operations.
constexpr std::array<std::string_view, 3> kMeshOps{"write", "read", "send"};

// Options every rank can check alone; rank 0 says what is wrong.
std::optional<std::string> bad_input(const Options& o) {
    if (!parse_op(o.op) || std::ranges::find(kMeshOps, o.op) == kMeshOps.end())
        return fmt::format("--op '{}' is not write, read or send", o.op);
    if (!parse_transport(o.transport) || *parse_transport(o.transport) == Transport::kUD)
        return fmt::format("--connection '{}' is not RC or UC", o.transport);
    for (const auto& [flag, text] :
         {std::pair{"--size", o.size}, {"--rate-size", o.rate_size}, {"--lat-size", o.lat_size}})
        if (!parse_size(text)) return fmt::format("{} '{}' is not a size (64, 4K, 1M)", flag, text);
    if (!parse_pairs(o.pairs))
        return fmt::format("--pairs '{}' is not all, sample:K, ring:K or rail", o.pairs);
    if (!is_judge_list(o.judge))
        return fmt::format("--judge '{}' is not a list of bw, rate, lat, lat-p99", o.judge);
    BenchConfig c;
    c.op = *parse_op(o.op);
    c.transport = *parse_transport(o.transport);
    c.size = *parse_size(o.size);
    c.window = 16;
    c.signal_every = 4;
    c.duration_s = o.duration_s;
    if (auto why = c.problem()) return *why;
    return std::nullopt;
}

void add_options(CLI::App& app, Options& o) {
    app.add_option("-d,--ib-dev", o.devices,
                   "RDMA device, or a comma list: each rank takes the entry of its local rank");
    app.add_option("-i,--ib-port", o.ib_port, "device port")->check(CLI::Range(1, 255));
    app.add_option("-x,--gid-index", o.gid_index, "source GID index (default: RoCE v2 IPv4)")
        ->check(CLI::Range(0, 1023));
    app.add_option("-o,--op", o.op, "write, read or send")->capture_default_str();
    app.add_option("-c,--connection", o.transport, "RC or UC")->capture_default_str();
    app.add_option("-s,--size", o.size, "bandwidth message size")->capture_default_str();
    app.add_option("--rate-size", o.rate_size, "message-rate message size")->capture_default_str();
    app.add_option("--lat-size", o.lat_size, "latency message size")->capture_default_str();
    app.add_option("-D,--duration", o.duration_s, "seconds per bandwidth and rate measurement")
        ->capture_default_str()
        ->check(CLI::Range(0.01, 600.0));
    app.add_option("-n,--lat-iters", o.lat_iters, "latency round trips per direction")
        ->capture_default_str()
        ->check(CLI::Range(1ull, 10'000'000ull));
    app.add_option("--warmup", o.warmup, "un-timed operations before each measurement")
        ->capture_default_str()
        ->check(CLI::Range(0ull, 1ull << 20));
    app.add_flag("--quick", o.quick, "short measurements: -D 0.2, -n 200, --warmup 20");
    app.add_flag("--serial", o.serial, "one pair at a time instead of every pair of a round");
    app.add_option("--pairs", o.pairs,
                   "which pairs: all, sample:K (K random partners per rank, seeded), ring:K (K "
                   "neighbours each side), rail (same local rank only)")
        ->capture_default_str();
    app.add_option("--seed", o.seed, "sample:K's random order (same seed, same pairs)")
        ->capture_default_str();
    app.add_option("--timeout", o.timeout_s, "seconds any wait for a peer may take")
        ->capture_default_str()
        ->check(CLI::Range(0.1, 3600.0));
    app.add_option("--out", o.out_dir, "folder for mesh.json, mesh.csv, mesh-*.svg (rank 0)")
        ->capture_default_str();
    app.add_option("--judge", o.judge, "the metrics the verdict flags on")->capture_default_str();
    app.add_option("--fraction", o.fraction, "flag bandwidth/rate below this × typical")
        ->capture_default_str()
        ->check(CLI::Range(0.01, 1.0));
    app.add_option("--latency-factor", o.latency_factor, "flag latency above this × typical")
        ->capture_default_str()
        ->check(CLI::Range(1.0, 100.0));
    app.add_option("--simulate-silent-rank", o.simulate_silent_rank,
                   "testing: this rank never answers its peers")
        ->group("");
    gpu::add_memory_options(app, o.memory);
}

// The options, or the exit status when the run ends here (--help, bad input: rank 0 says so).
std::optional<int> parse_options(int argc, char** argv, int rank, Options& o) {
    CLI::App app{
        "rdma-mesh: every pair of ranks measured both ways (bandwidth, message rate, latency) "
        "in round-robin rounds;\nN×N matrices, heatmaps and a verdict naming slow pairs and "
        "hosts. Run under mpirun or srun, one rank per host or per NIC.",
        "rdma-mesh"};
    add_options(app, o);
    try {
        app.parse(argc, argv);
        if (o.quick) {
            if (app.count("--duration") == 0) o.duration_s = 0.2;
            if (app.count("--lat-iters") == 0) o.lat_iters = 200;
            if (app.count("--warmup") == 0) o.warmup = 20;
        }
    } catch (const CLI::CallForHelp&) {
        if (rank == 0) fmt::print("{}", app.help());
        return 0;
    } catch (const CLI::ParseError& e) {
        if (rank == 0) fmt::print(stderr, "rdma-mesh: {} (run with --help for usage)\n", e.what());
        return 2;
    }
    if (auto why = bad_input(o)) {
        if (rank == 0) fmt::print(stderr, "rdma-mesh: {} (run with --help for usage)\n", *why);
        return 2;
    }
    return std::nullopt;
}

// This rank: its host, its place on it, and the device it opened (the local rank's entry of -d),
// or the problem that stops it from measuring.
Identity identify(const Options& o, int rank, const LaunchInfo& launch,
                  std::optional<BenchDevice>& device) {
    const std::string device_name = device_for_local_rank(o.devices, launch.local_rank);
    Identity me;
    me.rank = rank;
    me.host = hostname();
    me.local_rank = launch.local_rank;
    me.node = launch.node;
    me.launcher = launch.launcher;
    try {
        device.emplace(
            open_bench_device(device_name, static_cast<std::uint8_t>(o.ib_port), o.gid_index));
        me.device = device->name;
        me.provider = device->provider;
        me.gid = gid_text(device->port.gid);
        me.address = ipv4_of(device->port.gid);
    } catch (const Error& e) {
        me.device = device_name.empty() ? "(first)" : device_name;
        me.problem = fmt::format("no usable RDMA device: {}", e.what());
        fmt::print(stderr, "rdma-mesh: rank {} on {}: {}\n", rank, me.host, me.problem);
    }
    return me;
}

// Everyone learns who everyone is (all ranks are alive at the start: mpirun started them).
std::vector<Identity> exchange_identities(const Identity& me, int size) {
    const std::string my_text = records::to_json(me).dump();
    int my_length = static_cast<int>(my_text.size());
    std::vector<int> lengths(static_cast<std::size_t>(size)), offsets(lengths.size());
    check_mpi(MPI_Allgather(&my_length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD),
              "MPI_Allgather");
    int total = 0;
    for (std::size_t i = 0; i < lengths.size(); ++i) offsets[i] = total, total += lengths[i];
    std::string all(static_cast<std::size_t>(total), '\0');
    check_mpi(MPI_Allgatherv(my_text.data(), my_length, MPI_CHAR, all.data(), lengths.data(),
                             offsets.data(), MPI_CHAR, MPI_COMM_WORLD),
              "MPI_Allgatherv");
    std::vector<Identity> who;
    for (std::size_t i = 0; i < lengths.size(); ++i)
        who.push_back(records::mesh_rank_from_json(
            parse_json(all.substr(static_cast<std::size_t>(offsets[i]),
                                  static_cast<std::size_t>(lengths[i])),
                       "an identity"),
            fmt::format("rank {}'s identity", i)));
    return who;
}

// Rank 0 says what the run will measure and who takes part.
void print_plan(const Options& o, int size, const std::vector<Round>& rounds,
                const std::vector<Identity>& who) {
    fmt::print(
        "rdma-mesh: {} ranks, {} rounds, {} of {} pairs (--pairs {}); {} {} {} for {:.2g} s, "
        "rate at {}, latency at {} × {}\n",
        size, rounds.size(), pairs_of(rounds).size(), size * (size - 1) / 2, o.pairs, o.op,
        o.transport, o.size, o.duration_s, o.rate_size, o.lat_size, o.lat_iters);
    for (const Identity& i : who)
        fmt::print("rdma-mesh: rank {}: {} {} {} local rank {}{}\n", i.rank, i.label(), i.device,
                   i.gid, i.local_rank, i.problem.empty() ? "" : " — " + i.problem);
    std::fflush(stdout);
}

// This rank's meetings, round by round.
void meet_every_round(const Options& o, Rank& me, int rank, const std::vector<Round>& plan) {
    bool paced = true;
    for (const Round& round : plan) {
        if (auto peer = partner_in(round, rank)) me.meet(*peer);
        // Rounds start together. A timed barrier: a rank that is late or silent past the
        // limit stops the pacing (later barriers would wait on it too), not the run.
        // Its limit covers a pair 3× as long as the longest seen (at least 10 timeouts).
        // A rank known to be silent stops it at once: it would never arrive.
        const milliseconds pace_limit =
            std::max(me.longest_pair() * 3, to_milliseconds(o.timeout_s * 10)) +
            to_milliseconds(o.timeout_s * 3);
        if (paced && me.knows_silent_rank()) paced = false;
        if (paced) paced = timed_barrier(pace_limit, [&] { return me.knows_silent_rank(); });
    }
}

// mesh.json's settings: the options that shape the run.
records::MeshSettings settings_record(const Options& o) {
    return records::MeshSettings{
        .op = o.op,
        .transport = o.transport,
        .size = o.size,
        .rate_size = o.rate_size,
        .lat_size = o.lat_size,
        .duration_s = o.duration_s,
        .lat_iters = o.lat_iters,
        .warmup = o.warmup,
        .timeout_s = o.timeout_s,
        .serial = o.serial,
        .pairs = o.pairs,
        .seed = o.seed,
        .judge = o.judge,
        .fraction = o.fraction,
        .latency_factor = o.latency_factor,
        .memory = gpu::to_string(o.memory.memory),
        .describe =
            fmt::format("{} {} bw {} for {:.2g} s, rate {}, latency {} × {}", o.op, o.transport,
                        o.size, o.duration_s, o.rate_size, o.lat_size, o.lat_iters)};
}

// mesh.json's environment: the host's, with the MPI library and the launcher.
records::MeshEnvironment run_environment(const LaunchInfo& launch, int size) {
    records::Environment environment = records::host_environment(kTool);
    char library[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int library_length = 0;
    MPI_Get_library_version(library, &library_length);
    std::string mpi(library, static_cast<std::size_t>(library_length));
    environment.mpi = mpi.substr(0, mpi.find_first_of(",\n"));
    return records::MeshEnvironment{
        .host = std::move(environment), .launcher = launch.launcher, .ranks = size};
}

// Rank 0: every other rank's row, then the report. 3 when a rank sent none (its pairs failed),
// else the report's status.
int gather_and_report(const Options& o, const std::vector<Identity>& who,
                      const std::vector<Round>& rounds, const records::MeshRow& row,
                      const LaunchInfo& launch, int size) {
    int status = 0;
    std::vector<records::MeshRow> rows{row};
    std::vector<FailedPair> lost;
    // Every other rank finishes within its rounds' bounded waits; a generous limit on top.
    const milliseconds gather_wait = to_milliseconds(o.timeout_s * 30 + 30);
    for (int r = 1; r < size; ++r) {
        auto text = receive(r, kRowTag, gather_wait);
        if (!text) {
            const auto pairs = lost_pairs(rounds, size, r,
                                          fmt::format("rank {} ({}) sent no results", r,
                                                      who[static_cast<std::size_t>(r)].label()));
            lost.insert(lost.end(), pairs.begin(), pairs.end());
            status = 3;
            continue;
        }
        const std::string where = fmt::format("rank {}'s results", r);
        rows.push_back(records::mesh_row_from_json(parse_json(*text, where), where));
    }
    const int verdict =
        report(o, who, rounds, rows, lost, run_environment(launch, size), settings_record(o));
    return status == 0 ? verdict : status;
}

int run(int argc, char** argv, int rank, int size) {
    Options o;
    if (auto status = parse_options(argc, argv, rank, o)) return *status;
    const LaunchInfo launch = read_launch_info_from_process();
    std::optional<BenchDevice> device;
    const std::vector<Identity> who = exchange_identities(identify(o, rank, launch, device), size);
    std::vector<int> rail_of;
    for (const Identity& i : who) rail_of.push_back(i.local_rank);
    const auto rounds = plan_rounds(size, *parse_pairs(o.pairs), o.seed, rail_of);
    if (rank == 0) print_plan(o, size, rounds, who);

    Outbox outbox;
    Rank me(o, rank, size, who, device, outbox);
    // --serial: every pair a round of its own, so pairs never share the CPUs or the fabric
    // (a lab guest has one or two vCPUs; a real cluster wants the rounds).
    if (rank != o.simulate_silent_rank)
        meet_every_round(o, me, rank, o.serial ? one_pair_per_round(rounds) : rounds);

    // Results to rank 0.
    const records::MeshRow row = row_record(rank, me.cells, me.failures, me.pair_seconds);
    int status = 0;
    if (rank != 0)
        outbox.send(0, kRowTag, records::to_json(row).dump());
    else
        status = gather_and_report(o, who, rounds, row, launch, size);
    outbox.drain(to_milliseconds(o.timeout_s));
    return status;
}

}  // namespace

int main(int argc, char** argv) {
    int provided = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        std::fprintf(stderr, "rdma-mesh: MPI_Init_thread failed\n");
        return 2;
    }
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int status = 0;
    try {
        status = run(argc, argv, rank, size);
    } catch (const std::exception& e) {
        fmt::print(stderr, "rdma-mesh: rank {}: {}\n", rank, e.what());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 2);  // a rank that cannot go on must not leave others waiting
    }
    if (status == 3) {
        // A rank never sent its results: it may be stuck, and MPI_Finalize would wait for it.
        std::fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Finalize();
    return status;
}
