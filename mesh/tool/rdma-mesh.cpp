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

// Who a rank is, told to every other rank once at the start.
struct Identity {
    int rank = 0;
    std::string host, address, device, provider, gid, node, launcher, problem;
    int local_rank = 0;
    Record to_json() const {
        return Record{{"rank", rank},
                      {"host", host},
                      {"address", address},
                      {"device", device},
                      {"provider", provider},
                      {"gid", gid},
                      {"local_rank", local_rank},
                      {"node", node},
                      {"launcher", launcher},
                      {"problem", problem}};
    }
    static Identity from_json(const Record& r) {
        Identity i;
        i.rank = r.at("rank").get<int>();
        i.host = r.at("host").get<std::string>();
        i.address = r.at("address").get<std::string>();
        i.device = r.at("device").get<std::string>();
        i.provider = r.at("provider").get<std::string>();
        i.gid = r.at("gid").get<std::string>();
        i.local_rank = r.at("local_rank").get<int>();
        i.node = r.at("node").get<std::string>();
        i.launcher = r.at("launcher").get<std::string>();
        i.problem = r.at("problem").get<std::string>();
        return i;
    }
    // How the summary names its host: the name, with the RDMA address where there is one (lab
    // guests all share one host name).
    std::string label() const { return address.empty() ? host : host + " " + address; }
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

struct Cell {
    int to = 0;
    Record values = Record::object();  // bw_gbps, rate_mops, lat_us, lat_p99_us
};

struct Failure {
    int peer = 0;
    std::string reason;
};

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
    Record pair_seconds = Record::array();
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
            silent_.insert(parse_json(*text, "a silent-rank notice").at("rank").get<int>());
        } catch (const std::exception&) {
            // A malformed notice only costs a longer wait later.
        }
    }
}

void Rank::announce_silent(int peer) {
    silent_.insert(peer);
    for (int r = 0; r < size_; ++r)
        if (r != rank_ && r != peer) outbox_.send(r, kSilentTag, Record{{"rank", peer}}.dump());
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
    outbox_.send(peer, kMeetTag, Record{{"problem", problem}}.dump());
    auto hello = receive(peer, kMeetTag, meet_wait);
    if (!hello) {
        record_failure(fmt::format("no answer from {} within {:.1f} s", name(peer),
                                   std::chrono::duration<double>(meet_wait).count()));
        announce_silent(peer);
        return;
    }
    std::string peer_problem;
    try {
        peer_problem = parse_json(*hello, "a hello").at("problem").get<std::string>();
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
    pair_seconds.push_back(Record{
        {"peer", peer}, {"seconds", std::chrono::duration<double>(Clock::now() - start).count()}});
}

bool Rank::measure(int peer, int tag, bool initiator, const BenchConfig& config, const char* what) {
    const milliseconds wait = step();
    const Limits limits{wait, wait + to_milliseconds(config.duration_s * 2 + 60)};
    auto failed = [&](const std::string& reason) {
        if (initiator) failures.push_back(Failure{peer, fmt::format("{}: {}", what, reason)});
    };
    auto silent = [&](const char* waiting_for) {
        failures.push_back(
            Failure{peer, fmt::format("{}: {}", what,
                                      fmt::format("{} sent no {} within {:.1f} s", name(peer),
                                                  waiting_for, o_.timeout_s))});
        return false;
    };
    auto status = [](const std::string& error) { return Record{{"error", error}}.dump(); };
    auto peer_error = [&](const std::string& text) {
        try {
            return parse_json(text, "a status").at("error").get<std::string>();
        } catch (const std::exception& e) {
            return fmt::format("malformed status: {}", e.what());
        }
    };

    // Endpoints: each side's QPs, or why it could not make them.
    std::optional<Engine> engine;
    std::string error;
    try {
        engine.emplace(*device_, config, initiator ? Side::kClient : Side::kServer, o_.memory);
    } catch (const Error& e) {
        error = e.what();
    }
    Record mine{{"error", error}};
    if (engine) {
        Record list = Record::array();
        for (const QpEndpoint& endpoint : engine->local_endpoints())
            list.push_back(to_hex(encode_qp_endpoint(endpoint)));
        mine["endpoints"] = list;
        mine["depth"] = engine->responder_depth();
    }
    outbox_.send(peer, tag, mine.dump());
    auto theirs_text = receive(peer, tag, wait);
    if (!theirs_text) return silent("endpoints");
    try {
        Record theirs = parse_json(*theirs_text, "endpoints");
        if (!error.empty()) fail(fmt::format("{}: {}", name(rank_), error));
        if (auto e = theirs.at("error").get<std::string>(); !e.empty())
            fail(fmt::format("{}: {}", name(peer), e));
        std::vector<QpEndpoint> remote;
        for (const auto& hex : theirs.at("endpoints").get<std::vector<std::string>>())
            remote.push_back(decode_qp_endpoint_or_throw(
                from_hex(hex), qp_type_of(config.transport), PeerBuffer::kAdvertised));
        const auto depth = theirs.at("depth").get<unsigned>();
        engine->connect(remote, static_cast<std::uint8_t>(std::min(depth, 255u)));
        error.clear();
    } catch (const std::exception& e) {
        error = e.what();
    }
    // Ready: both sides' QPs are at RTR/RTS before anything is posted.
    outbox_.send(peer, tag + 1, status(error));
    auto ready = receive(peer, tag + 1, wait);
    if (!ready) return silent("ready");
    if (!error.empty()) return failed(error), true;
    if (auto e = peer_error(*ready); !e.empty())
        return failed(fmt::format("{}: {}", name(peer), e)), true;

    // Phases (warm-up, then the measurement), as rdma-bench runs them: the target clears its
    // destination and says go; the initiator measures and says what it sent; the target
    // counts, checks the data and answers.
    const bool has_warmup = config.warmup > 0;
    for (int phase = has_warmup ? 0 : 1; phase < 2; ++phase) {
        const bool warmup = phase == 0;
        const int t = tag + 2 + phase * 3;
        const std::uint64_t count =
            warmup ? config.warmup : (config.duration_s > 0 ? 0 : config.iters);
        const double duration = warmup ? 0 : config.duration_s;
        if (initiator) {
            auto go = receive(peer, t, wait);
            if (!go) return silent("go");
            if (auto e = peer_error(*go); !e.empty()) return failed(e), true;
            InitiatorResult result;
            std::vector<double> samples;
            std::string local_error;
            try {
                if (config.mode == Mode::kLatency)
                    samples = engine->run_ping(count, limits);
                else
                    result = engine->run_initiator(count, duration, limits);
            } catch (const Error& e) {
                local_error = e.what();
            }
            std::vector<std::uint64_t> per_qp =
                config.mode == Mode::kLatency ? std::vector<std::uint64_t>{count} : result.per_qp;
            outbox_.send(peer, t + 1, Record{{"error", local_error}, {"per_qp", per_qp}}.dump());
            auto counted = receive(peer, t + 2, wait * 3 + to_milliseconds(duration));
            if (!local_error.empty()) return failed(local_error), true;
            if (!counted) return silent("count");
            if (auto e = peer_error(*counted); !e.empty())
                return failed(fmt::format("{}: {}", name(peer), e)), true;
            if (warmup) continue;
            Cell& c = cell_to(peer);
            if (config.mode == Mode::kLatency) {
                // perftest's convention: half the round trip, but a READ's whole round trip.
                const bool half = operation(config.op).reply != Reply::kCompletion;
                for (double& s : samples)
                    if (half) s /= 2;
                LatencySummary stats = summarize_latency(std::move(samples));
                c.values["lat_us"] = stats.median_us;
                c.values["lat_p99_us"] = stats.p99_us;
            } else {
                const double bytes =
                    static_cast<double>(result.ops) * static_cast<double>(config.size);
                const double s = result.seconds;
                if (std::string(what) == "bw")
                    c.values["bw_gbps"] = s > 0 ? bytes * 8 / s / 1e9 : 0.0;
                else
                    c.values["rate_mops"] = s > 0 ? static_cast<double>(result.ops) / s / 1e6 : 0.0;
                if (operation(config.op).verify == Verify::kInitiatorPattern) {
                    if (auto why = engine->verify_destination())
                        return failed("data check: " + *why), true;
                }
            }
        } else {
            std::string local_error;
            try {
                engine->clear_destination();
            } catch (const Error& e) {
                local_error = e.what();
            }
            outbox_.send(peer, t, status(local_error));
            if (!local_error.empty()) return true;
            // The initiator runs for the duration (or the count) before it reports.
            // As long as the initiator's own limits let it run: on a slow link, draining the
            // window of messages posted before the duration ended takes a while.
            const milliseconds phase_wait = limits.phase + wait;
            std::optional<std::string> sent;
            try {
                if (config.mode == Mode::kLatency) {
                    engine->run_pong(count, limits);
                } else if (operation(config.op).target_receives()) {
                    engine->run_receiver(
                        [&]() -> std::optional<std::vector<std::uint64_t>> {
                            if (!sent) sent = receive(peer, t + 1, milliseconds(0));
                            if (!sent) return std::nullopt;
                            return parse_json(*sent, "sent")
                                .at("per_qp")
                                .get<std::vector<std::uint64_t>>();
                        },
                        limits);
                }
                if (!sent) sent = receive(peer, t + 1, phase_wait);
                if (!sent) return silent("report of what it sent");
                const bool lands_here = operation(config.op).verify == Verify::kTargetPattern;
                if (!warmup && config.mode == Mode::kBandwidth && lands_here)
                    if (auto why = engine->verify_destination()) fail("data check: " + *why);
            } catch (const std::exception& e) {
                local_error = e.what();
                if (!sent) sent = receive(peer, t + 1, phase_wait);
                if (!sent) return silent("report of what it sent");
            }
            outbox_.send(peer, t + 2, status(local_error));
        }
    }
    return true;
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

struct MetricInfo {
    const char* key;
    const char* label;
    bool higher;
};
constexpr MetricInfo kMetrics[] = {{"bw_gbps", "bandwidth (Gb/s)", true},
                                   {"rate_mops", "message rate (million/s)", true},
                                   {"lat_us", "latency median (µs)", false},
                                   {"lat_p99_us", "latency p99 (µs)", false}};

// Whether --judge names the metric ("bw_gbps" is judged by "bw", "lat_p99_us" by "lat-p99").
bool judges(const Options& o, const std::string& key) {
    const std::string name = key == "bw_gbps"     ? "bw"
                             : key == "rate_mops" ? "rate"
                             : key == "lat_us"    ? "lat"
                                                  : "lat-p99";
    return ("," + o.judge + ",").find("," + name + ",") != std::string::npos;
}

int report(const Options& o, const std::vector<Identity>& who, const std::vector<Round>& rounds,
           const std::vector<Record>& rows, const std::vector<FailedPair>& lost_rows,
           const Record& environment, const Record& settings) {
    const int n = static_cast<int>(who.size());
    std::vector<std::pair<int, int>> planned;
    for (const Round& round : rounds) planned.insert(planned.end(), round.begin(), round.end());
    std::vector<Metric> metrics;
    for (const MetricInfo& m : kMetrics)
        metrics.push_back(Metric{m.key, m.label, m.higher, empty_matrix(n)});
    // Both ends of a failed pair may report it: the first report of each pair is kept.
    std::vector<FailedPair> failed;
    auto add_failure = [&](FailedPair f) {
        for (const FailedPair& seen : failed)
            if (seen.a == f.a && seen.b == f.b) return;
        failed.push_back(std::move(f));
    };
    for (const FailedPair& f : lost_rows) add_failure(f);
    Record pair_seconds = Record::array();
    for (const Record& row : rows) {
        const int from = row.at("rank").get<int>();
        if (from < 0 || from >= n) continue;
        for (const Record& cell : row.at("cells")) {
            const int to = cell.at("to").get<int>();
            if (to < 0 || to >= n || to == from) continue;
            for (Metric& m : metrics)
                if (cell.at("values").contains(m.key))
                    m.values[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)] =
                        cell.at("values").at(m.key).get<double>();
        }
        for (const Record& f : row.at("failures")) {
            const int peer = f.at("peer").get<int>();
            add_failure(FailedPair{
                std::min(from, peer), std::max(from, peer),
                fmt::format("seen by rank {}: {}", from, f.at("reason").get<std::string>())});
        }
        for (const Record& p : row.at("pair_seconds")) {
            if (from < p.at("peer").get<int>())
                pair_seconds.push_back(
                    Record{{"a", from}, {"b", p.at("peer")}, {"seconds", p.at("seconds")}});
        }
    }
    const Thresholds thresholds{o.fraction, o.latency_factor};
    // Every metric's typical value and threshold; the verdict over the metrics --judge names.
    const Verdict stats = judge(n, metrics, {}, thresholds, planned);
    std::vector<Metric> judged;
    for (const Metric& m : metrics)
        if (judges(o, m.key)) judged.push_back(m);
    const Verdict verdict = judge(n, judged, failed, thresholds, planned);
    std::vector<std::string> labels, hosts;
    for (const Identity& i : who) {
        labels.push_back(fmt::format("{} {}", i.rank, i.label()));
        hosts.push_back(i.label());
    }
    std::vector<std::string> lines = summary_lines(stats, metrics, hosts);
    lines.resize(metrics.size());  // the typical values of every metric, then the verdict's
    const std::vector<std::string> verdict_lines = summary_lines(verdict, judged, hosts);
    lines.insert(lines.end(), verdict_lines.begin() + static_cast<long>(judged.size()),
                 verdict_lines.end());

    // JSON: everything; CSV: one row per directed pair with both ends' identity.
    Record ranks = Record::array();
    for (const Identity& i : who) ranks.push_back(i.to_json());
    Record matrices = Record::object();
    for (std::size_t k = 0; k < metrics.size(); ++k) {
        Record matrix = Record::array();
        for (const auto& row : metrics[k].values) {
            Record r = Record::array();
            for (const auto& v : row) r.push_back(v ? Record(*v) : Record(nullptr));
            matrix.push_back(r);
        }
        matrices[metrics[k].key] =
            Record{{"label", metrics[k].label},           {"median", stats.metrics[k].median},
                   {"typical", stats.metrics[k].typical}, {"threshold", stats.metrics[k].threshold},
                   {"judged", judges(o, metrics[k].key)}, {"matrix", matrix}};
    }
    Record failed_json = Record::array();
    for (const FailedPair& f : failed)
        failed_json.push_back(Record{{"a", f.a}, {"b", f.b}, {"reason", f.reason}});
    Record slow_json = Record::array();
    for (const FlaggedPair& p : verdict.slow)
        slow_json.push_back(Record{{"a", p.a}, {"b", p.b}, {"reasons", p.reasons}});
    Record culprits = Record::array();
    for (const Culprit& c : verdict.culprits)
        culprits.push_back(Record{{"rank", c.rank},
                                  {"host", who[static_cast<std::size_t>(c.rank)].label()},
                                  {"pairs", c.pairs}});
    Record document{{"tool", kTool},
                    {"environment", environment},
                    {"settings", settings},
                    {"ranks", ranks},
                    {"rounds", rounds.size()},
                    {"planned_pairs", planned.size()},
                    {"pair_seconds", pair_seconds},
                    {"metrics", matrices},
                    {"failed", failed_json},
                    {"slow", slow_json},
                    {"culprits", culprits},
                    {"summary", lines},
                    {"flagged", verdict.flagged()}};
    ::mkdir(o.out_dir.c_str(), 0755);
    write_file(o.out_dir + "/mesh.json", document.dump(2) + "\n");
    std::string csv =
        "from,from_host,from_device,from_gid,to,to_host,to_device,to_gid,bw_gbps,rate_mops,lat_us,"
        "lat_p99_us,date,kernel,tool\n";
    for (int from = 0; from < n; ++from)
        for (int to = 0; to < n; ++to) {
            if (from == to) continue;
            const Identity& a = who[static_cast<std::size_t>(from)];
            const Identity& b = who[static_cast<std::size_t>(to)];
            csv += fmt::format("{},{},{},{},{},{},{},{}", from, a.label(), a.device, a.gid, to,
                               b.label(), b.device, b.gid);
            for (const Metric& m : metrics) {
                const auto& v =
                    m.values[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)];
                csv += v ? fmt::format(",{:.6g}", *v) : std::string(",");
            }
            csv += fmt::format(",{},{},{}\n", environment.at("date").get<std::string>(),
                               environment.at("kernel").get<std::string>(), kTool);
        }
    write_file(o.out_dir + "/mesh.csv", csv);
    std::vector<std::pair<int, int>> failed_pairs;
    for (const FailedPair& f : failed) failed_pairs.emplace_back(f.a, f.b);
    for (std::size_t k = 0; k < metrics.size(); ++k) {
        Heatmap h;
        h.title = fmt::format("rdma-mesh: {} {}, {} ranks{}", o.op, metrics[k].label, n,
                              judges(o, metrics[k].key) ? "" : " (not judged)");
        h.caption = fmt::format("{} on {} ({}), kernel {}, {}\n{}", kTool, who[0].device,
                                who[0].provider, environment.at("kernel").get<std::string>(),
                                environment.at("date").get<std::string>(),
                                settings.at("describe").get<std::string>());
        h.labels = labels;
        h.metric = &metrics[k];
        h.typical = stats.metrics[k].typical;
        h.threshold = stats.metrics[k].threshold;
        h.failed = failed_pairs;
        if (o.pairs != "all") h.planned = planned;
        std::string file = metrics[k].key;
        std::replace(file.begin(), file.end(), '_', '-');
        write_file(o.out_dir + "/mesh-" + file + ".svg", render_heatmap(h));
    }
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
    for (std::size_t start = 0; start <= o.judge.size();) {
        std::size_t comma = std::min(o.judge.find(',', start), o.judge.size());
        const std::string name = o.judge.substr(start, comma - start);
        if (name != "bw" && name != "rate" && name != "lat" && name != "lat-p99")
            return fmt::format("--judge '{}' is not a list of bw, rate, lat, lat-p99", o.judge);
        start = comma + 1;
    }
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

int run(int argc, char** argv, int rank, int size) {
    Options o;
    CLI::App app{
        "rdma-mesh: every pair of ranks measured both ways (bandwidth, message rate, latency) "
        "in round-robin rounds;\nN×N matrices, heatmaps and a verdict naming slow pairs and "
        "hosts. Run under mpirun or srun, one rank per host or per NIC.",
        "rdma-mesh"};
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

    // Which device: the local rank's entry of -d.
    const LaunchInfo launch = read_launch_info_from_process();
    std::vector<std::string> names;
    for (std::size_t start = 0; start <= o.devices.size();) {
        std::size_t comma = o.devices.find(',', start);
        if (comma == std::string::npos) comma = o.devices.size();
        names.push_back(o.devices.substr(start, comma - start));
        start = comma + 1;
    }
    const std::string device_name =
        names[static_cast<std::size_t>(launch.local_rank) % names.size()];
    Identity me;
    me.rank = rank;
    me.host = hostname();
    me.local_rank = launch.local_rank;
    me.node = launch.node;
    me.launcher = launch.launcher;
    std::optional<BenchDevice> device;
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

    // Everyone learns who everyone is (all ranks are alive at the start: mpirun started them).
    const std::string my_text = me.to_json().dump();
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
        who.push_back(Identity::from_json(parse_json(
            all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(lengths[i])),
            "an identity")));
    std::vector<int> rail_of;
    for (const Identity& i : who) rail_of.push_back(i.local_rank);
    const auto rounds = plan_rounds(size, *parse_pairs(o.pairs), o.seed, rail_of);
    std::size_t planned_pairs = 0;
    for (const Round& round : rounds) planned_pairs += round.size();
    if (rank == 0) {
        fmt::print(
            "rdma-mesh: {} ranks, {} rounds, {} of {} pairs (--pairs {}); {} {} {} for {:.2g} s, "
            "rate at {}, latency at {} × {}\n",
            size, rounds.size(), planned_pairs, size * (size - 1) / 2, o.pairs, o.op, o.transport,
            o.size, o.duration_s, o.rate_size, o.lat_size, o.lat_iters);
        for (const Identity& i : who)
            fmt::print("rdma-mesh: rank {}: {} {} {} local rank {}{}\n", i.rank, i.label(),
                       i.device, i.gid, i.local_rank, i.problem.empty() ? "" : " — " + i.problem);
        std::fflush(stdout);
    }

    Outbox outbox;
    Rank me_rank(o, rank, size, who, device, outbox);
    // --serial: every pair a round of its own, so pairs never share the CPUs or the fabric
    // (a lab guest has one or two vCPUs; a real cluster wants the rounds).
    std::vector<Round> plan;
    for (const Round& round : rounds) {
        if (!o.serial)
            plan.push_back(round);
        else
            for (const auto& pair : round) plan.push_back(Round{pair});
    }
    if (rank != o.simulate_silent_rank) {
        bool paced = true;
        for (const Round& round : plan) {
            if (auto peer = partner_in(round, rank)) me_rank.meet(*peer);
            // Rounds start together. A timed barrier: a rank that is late or silent past the
            // limit stops the pacing (later barriers would wait on it too), not the run.
            // Its limit covers a pair 3× as long as the longest seen (at least 10 timeouts).
            // A rank known to be silent stops it at once: it would never arrive.
            const milliseconds pace_limit =
                std::max(me_rank.longest_pair() * 3, to_milliseconds(o.timeout_s * 10)) +
                to_milliseconds(o.timeout_s * 3);
            if (paced && me_rank.knows_silent_rank()) paced = false;
            if (paced)
                paced = timed_barrier(pace_limit, [&] { return me_rank.knows_silent_rank(); });
        }
    }

    // Results to rank 0.
    Record row{{"rank", rank},
               {"cells", Record::array()},
               {"failures", Record::array()},
               {"pair_seconds", me_rank.pair_seconds}};
    for (const Cell& c : me_rank.cells)
        row["cells"].push_back(Record{{"to", c.to}, {"values", c.values}});
    for (const Failure& f : me_rank.failures)
        row["failures"].push_back(Record{{"peer", f.peer}, {"reason", f.reason}});
    int status = 0;
    if (rank != 0) {
        outbox.send(0, kRowTag, row.dump());
    } else {
        std::vector<Record> rows{row};
        std::vector<FailedPair> lost;
        // Every other rank finishes within its rounds' bounded waits; a generous limit on top.
        const milliseconds gather_wait = to_milliseconds(o.timeout_s * 30 + 30);
        for (int r = 1; r < size; ++r) {
            auto text = receive(r, kRowTag, gather_wait);
            if (!text) {
                for (int p = 0; p < size; ++p)
                    if (p != r && std::any_of(rounds.begin(), rounds.end(), [&](const Round& x) {
                            return partner_in(x, r) == p;
                        }))
                        lost.push_back(
                            FailedPair{std::min(r, p), std::max(r, p),
                                       fmt::format("rank {} ({}) sent no results", r,
                                                   who[static_cast<std::size_t>(r)].label())});
                status = 3;
                continue;
            }
            rows.push_back(parse_json(*text, "a rank's results"));
        }
        Record settings{{"op", o.op},
                        {"transport", o.transport},
                        {"size", o.size},
                        {"rate_size", o.rate_size},
                        {"lat_size", o.lat_size},
                        {"duration_s", o.duration_s},
                        {"lat_iters", o.lat_iters},
                        {"warmup", o.warmup},
                        {"timeout_s", o.timeout_s},
                        {"serial", o.serial},
                        {"pairs", o.pairs},
                        {"seed", o.seed},
                        {"judge", o.judge},
                        {"fraction", o.fraction},
                        {"latency_factor", o.latency_factor},
                        {"memory", gpu::to_string(o.memory.memory)}};
        settings["describe"] =
            fmt::format("{} {} bw {} for {:.2g} s, rate {}, latency {} × {}", o.op, o.transport,
                        o.size, o.duration_s, o.rate_size, o.lat_size, o.lat_iters);
        Record environment = host_environment(kTool);
        char library[MPI_MAX_LIBRARY_VERSION_STRING] = {};
        int library_length = 0;
        MPI_Get_library_version(library, &library_length);
        std::string mpi(library, static_cast<std::size_t>(library_length));
        environment["mpi"] = mpi.substr(0, mpi.find_first_of(",\n"));
        environment["launcher"] = launch.launcher;
        environment["ranks"] = size;
        const int verdict = report(o, who, rounds, rows, lost, environment, settings);
        if (status == 0) status = verdict;
    }
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
