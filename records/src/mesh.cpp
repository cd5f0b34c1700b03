// rdma-mesh's record (see mesh.hpp).
#include "rdmalab/records/mesh.hpp"

#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <utility>

namespace rdmalab::records {

namespace {

const std::vector<Field> kRankFields = {
    {"rank", "integer", true, "its MPI rank"},
    {"host", "string", true, "its host name"},
    {"address", "string", true, "its RDMA address (the GID's IPv4), empty when none"},
    {"device", "string", true, "the RDMA device it opened"},
    {"provider", "string", true, "the device's provider (\"rxe (Soft-RoCE)\")"},
    {"gid", "string", true, "the GID it used"},
    {"local_rank", "integer", true, "its place among the ranks on its host"},
    {"node", "string", true, "the launcher's node name, empty when it gives none"},
    {"launcher", "string", true, "what started it: openmpi, slurm, …"},
    {"problem", "string", true, "why it cannot measure; empty when it can"},
};

const std::vector<Field> kMetricFields = {
    {"label", "string", true, "the metric in words, with its unit"},
    {"median", "number", true, "the median of every directed cell"},
    {"typical", "number", true, "the median over ranks of each rank's median cell"},
    {"threshold", "number", true, "a cell past this (typical × fraction or × factor) is flagged"},
    {"judged", "boolean", true, "whether the verdict flags on this metric (--judge)"},
    {"matrix", "(number|null)[][]", true, "row: from, column: to; null: not measured"},
};

std::vector<Field> mesh_fields() {
    std::vector<Field> fields = {
        {"tool", "string", true, "the program and its version (\"rdma-mesh 0.1\")"},
    };
    fields.insert(fields.end(), environment_fields().begin(), environment_fields().end());
    const std::vector<Field> more = {
        {"environment.launcher", "string", true, "what started the ranks: openmpi, slurm, …"},
        {"environment.ranks", "integer", true, "ranks taking part"},
        {"settings", "object", true, "the options that shaped the run"},
        {"settings.op", "string", true, "write, read or send"},
        {"settings.transport", "string", true, "RC or UC"},
        {"settings.size", "string", true, "the bandwidth message size, as given (\"64K\")"},
        {"settings.rate_size", "string", true, "the message-rate message size, as given"},
        {"settings.lat_size", "string", true, "the latency message size, as given"},
        {"settings.duration_s", "number", true, "seconds per bandwidth and rate measurement"},
        {"settings.lat_iters", "integer", true, "latency round trips per direction"},
        {"settings.warmup", "integer", true, "untimed operations before each measurement"},
        {"settings.timeout_s", "number", true, "seconds any wait for a peer may take"},
        {"settings.serial", "boolean", true, "one pair at a time"},
        {"settings.pairs", "string", false, "which pairs: all, sample:K, ring:K, rail"},
        {"settings.seed", "integer", false, "sample:K's random order"},
        {"settings.judge", "string", true, "the metrics the verdict flags on"},
        {"settings.fraction", "number", true, "bandwidth and rate flagged below this × typical"},
        {"settings.latency_factor", "number", true, "latency flagged above this × typical"},
        {"settings.memory", "string", true, "the buffers' memory (\"host\", \"cuda:0\")"},
        {"settings.describe", "string", true, "the run in one line"},
        {"ranks", "object[]", true, "each rank, as it told the others at the start"},
    };
    fields.insert(fields.end(), more.begin(), more.end());
    const std::vector<Field> rank = fields_under("ranks[]", kRankFields);
    fields.insert(fields.end(), rank.begin(), rank.end());
    const std::vector<Field> pairs = {
        {"rounds", "integer", true, "round-robin rounds planned"},
        {"planned_pairs", "integer", false, "pairs planned (--pairs)"},
        {"pair_seconds", "object[]", true, "each pair's time, as its lower rank measured it"},
        {"pair_seconds[].a", "integer", true, "the lower rank"},
        {"pair_seconds[].b", "integer", true, "the higher rank"},
        {"pair_seconds[].seconds", "number", true, "the pair's measurements, s"},
        {"metrics", "object", true, "each metric's statistics and matrix"},
    };
    fields.insert(fields.end(), pairs.begin(), pairs.end());
    for (std::string_view key : kMeshMetricKeys) {
        const std::vector<Field> metric =
            fields_under("metrics", std::vector<Field>{{key, "object", true, ""}});
        const Field described{metric[0].name, "object", true, "one metric (kMeshMetricKeys)"};
        fields.push_back(described);
        const std::vector<Field> inside = fields_under(metric[0].name, kMetricFields);
        fields.insert(fields.end(), inside.begin(), inside.end());
    }
    const std::vector<Field> verdict = {
        {"failed", "object[]", true, "pairs that did not complete"},
        {"failed[].a", "integer", true, "the lower rank"},
        {"failed[].b", "integer", true, "the higher rank"},
        {"failed[].reason", "string", true, "why, as the rank that saw it said"},
        {"slow", "object[]", true, "pairs past a judged metric's threshold"},
        {"slow[].a", "integer", true, "the lower rank"},
        {"slow[].b", "integer", true, "the higher rank"},
        {"slow[].reasons", "string[]", true, "each cell past its threshold, in words"},
        {"culprits", "object[]", true, "hosts all of whose pairs were slow or failed"},
        {"culprits[].rank", "integer", true, "its rank"},
        {"culprits[].host", "string", true, "its host (name and RDMA address)"},
        {"culprits[].pairs", "integer", true, "its pairs, all of them bad"},
        {"summary", "string[]", true, "what rdma-mesh printed: the typical values, the verdict"},
        {"flagged", "boolean", true, "a pair was slow or failed"},
    };
    fields.insert(fields.end(), verdict.begin(), verdict.end());
    return fields;
}

Json matrix_json(const std::vector<std::vector<std::optional<double>>>& matrix) {
    Json rows = Json::array();
    for (const auto& row : matrix) {
        Json cells = Json::array();
        for (const auto& cell : row) cells.push_back(cell ? Json(*cell) : Json(nullptr));
        rows.push_back(std::move(cells));
    }
    return rows;
}

std::vector<std::vector<std::optional<double>>> matrix_from_json(const Json& rows) {
    std::vector<std::vector<std::optional<double>>> matrix;
    for (const Json& row : rows) {
        matrix.emplace_back();
        for (const Json& cell : row)
            matrix.back().push_back(cell.is_null() ? std::nullopt
                                                   : std::optional(cell.get<double>()));
    }
    return matrix;
}

// An object the schema check has passed.
MeshRank rank_from_checked(const Json& o) {
    return MeshRank{.rank = o["rank"].get<int>(),
                    .host = o["host"].get<std::string>(),
                    .address = o["address"].get<std::string>(),
                    .device = o["device"].get<std::string>(),
                    .provider = o["provider"].get<std::string>(),
                    .gid = o["gid"].get<std::string>(),
                    .local_rank = o["local_rank"].get<int>(),
                    .node = o["node"].get<std::string>(),
                    .launcher = o["launcher"].get<std::string>(),
                    .problem = o["problem"].get<std::string>()};
}

Json settings_json(const MeshSettings& s) {
    Json o{{"op", s.op},
           {"transport", s.transport},
           {"size", s.size},
           {"rate_size", s.rate_size},
           {"lat_size", s.lat_size},
           {"duration_s", s.duration_s},
           {"lat_iters", s.lat_iters},
           {"warmup", s.warmup},
           {"timeout_s", s.timeout_s},
           {"serial", s.serial}};
    if (s.pairs) o["pairs"] = *s.pairs;
    if (s.seed) o["seed"] = *s.seed;
    o["judge"] = s.judge;
    o["fraction"] = s.fraction;
    o["latency_factor"] = s.latency_factor;
    o["memory"] = s.memory;
    o["describe"] = s.describe;
    return o;
}

MeshSettings settings_from_json(const Json& o) {
    MeshSettings s{.op = o["op"].get<std::string>(),
                   .transport = o["transport"].get<std::string>(),
                   .size = o["size"].get<std::string>(),
                   .rate_size = o["rate_size"].get<std::string>(),
                   .lat_size = o["lat_size"].get<std::string>(),
                   .duration_s = o["duration_s"].get<double>(),
                   .lat_iters = o["lat_iters"].get<std::uint64_t>(),
                   .warmup = o["warmup"].get<std::uint64_t>(),
                   .timeout_s = o["timeout_s"].get<double>(),
                   .serial = o["serial"].get<bool>(),
                   .judge = o["judge"].get<std::string>(),
                   .fraction = o["fraction"].get<double>(),
                   .latency_factor = o["latency_factor"].get<double>(),
                   .memory = o["memory"].get<std::string>(),
                   .describe = o["describe"].get<std::string>()};
    if (o.contains("pairs")) s.pairs = o["pairs"].get<std::string>();
    if (o.contains("seed")) s.seed = o["seed"].get<std::uint64_t>();
    return s;
}

}  // namespace

const std::vector<Field> kMeshSchema = mesh_fields();
const std::vector<Field> kMeshRankSchema = kRankFields;

Json to_json(const MeshRank& r) {
    return Json{{"rank", r.rank},
                {"host", r.host},
                {"address", r.address},
                {"device", r.device},
                {"provider", r.provider},
                {"gid", r.gid},
                {"local_rank", r.local_rank},
                {"node", r.node},
                {"launcher", r.launcher},
                {"problem", r.problem}};
}

MeshRank mesh_rank_from_json(const Json& object, const std::string& where) {
    check_schema(object, kRankFields, where);
    return rank_from_checked(object);
}

Json to_json(const MeshRecord& r) {
    Json environment = to_json(r.environment.host);
    environment["launcher"] = r.environment.launcher;
    environment["ranks"] = r.environment.ranks;
    Json ranks = Json::array();
    for (const MeshRank& rank : r.ranks) ranks.push_back(to_json(rank));
    Json document{{"tool", r.tool},
                  {"environment", std::move(environment)},
                  {"settings", settings_json(r.settings)},
                  {"ranks", std::move(ranks)},
                  {"rounds", r.rounds}};
    if (r.planned_pairs) document["planned_pairs"] = *r.planned_pairs;
    Json& times = document["pair_seconds"] = Json::array();
    for (const MeshPairTime& p : r.pair_seconds)
        times.push_back(Json{{"a", p.a}, {"b", p.b}, {"seconds", p.seconds}});
    Json& metrics = document["metrics"] = Json::object();
    for (const MeshMetric& m : r.metrics)
        metrics[m.key] = Json{{"label", m.label},     {"median", m.median},
                              {"typical", m.typical}, {"threshold", m.threshold},
                              {"judged", m.judged},   {"matrix", matrix_json(m.matrix)}};
    Json& failed = document["failed"] = Json::array();
    for (const MeshFailedPair& f : r.failed)
        failed.push_back(Json{{"a", f.a}, {"b", f.b}, {"reason", f.reason}});
    Json& slow = document["slow"] = Json::array();
    for (const MeshSlowPair& s : r.slow)
        slow.push_back(Json{{"a", s.a}, {"b", s.b}, {"reasons", s.reasons}});
    Json& culprits = document["culprits"] = Json::array();
    for (const MeshCulprit& c : r.culprits)
        culprits.push_back(Json{{"rank", c.rank}, {"host", c.host}, {"pairs", c.pairs}});
    document["summary"] = r.summary;
    document["flagged"] = r.flagged;
    return document;
}

MeshRecord mesh_from_json(const Json& o, const std::string& where) {
    check_schema(o, kMeshSchema, where);
    const Json& e = o["environment"];
    MeshRecord r{.tool = o["tool"].get<std::string>(),
                 .environment = {.host = environment_from_json(e),
                                 .launcher = e["launcher"].get<std::string>(),
                                 .ranks = e["ranks"].get<int>()},
                 .settings = settings_from_json(o["settings"]),
                 .rounds = o["rounds"].get<std::uint64_t>(),
                 .summary = o["summary"].get<std::vector<std::string>>(),
                 .flagged = o["flagged"].get<bool>()};
    for (const Json& rank : o["ranks"]) r.ranks.push_back(rank_from_checked(rank));
    if (o.contains("planned_pairs")) r.planned_pairs = o["planned_pairs"].get<std::uint64_t>();
    for (const Json& p : o["pair_seconds"])
        r.pair_seconds.push_back(
            MeshPairTime{p["a"].get<int>(), p["b"].get<int>(), p["seconds"].get<double>()});
    // The schema names every metric and requires each: kMeshMetricKeys' order is the record's.
    for (std::string_view key : kMeshMetricKeys) {
        const Json& m = o["metrics"][std::string(key)];
        r.metrics.push_back(MeshMetric{.key = std::string(key),
                                       .label = m["label"].get<std::string>(),
                                       .median = m["median"].get<double>(),
                                       .typical = m["typical"].get<double>(),
                                       .threshold = m["threshold"].get<double>(),
                                       .judged = m["judged"].get<bool>(),
                                       .matrix = matrix_from_json(m["matrix"])});
    }
    for (const Json& f : o["failed"])
        r.failed.push_back(
            MeshFailedPair{f["a"].get<int>(), f["b"].get<int>(), f["reason"].get<std::string>()});
    for (const Json& s : o["slow"])
        r.slow.push_back(MeshSlowPair{s["a"].get<int>(), s["b"].get<int>(),
                                      s["reasons"].get<std::vector<std::string>>()});
    for (const Json& c : o["culprits"])
        r.culprits.push_back(
            MeshCulprit{c["rank"].get<int>(), c["host"].get<std::string>(), c["pairs"].get<int>()});
    return r;
}

// ---- The row message.

const std::vector<Field> kMeshRowSchema = {
    {"rank", "integer", true, "the rank that measured"},
    {"cells", "object[]", true, "what it measured towards each peer"},
    {"cells[].to", "integer", true, "the peer"},
    {"cells[].values", "object", true, "the metrics measured"},
    {"cells[].values.bw_gbps", "number", false, "bandwidth, Gb/s"},
    {"cells[].values.rate_mops", "number", false, "message rate, million/s"},
    {"cells[].values.lat_us", "number", false, "latency median, µs"},
    {"cells[].values.lat_p99_us", "number", false, "latency p99, µs"},
    {"failures", "object[]", true, "the pairs that did not complete, as it saw them"},
    {"failures[].peer", "integer", true, "the peer"},
    {"failures[].reason", "string", true, "why"},
    {"pair_seconds", "object[]", true, "how long each of its pairs took"},
    {"pair_seconds[].peer", "integer", true, "the peer"},
    {"pair_seconds[].seconds", "number", true, "s"},
};

std::optional<double> MeshCellValues::of(std::string_view key) const {
    if (key == "bw_gbps") return bw_gbps;
    if (key == "rate_mops") return rate_mops;
    if (key == "lat_us") return lat_us;
    if (key == "lat_p99_us") return lat_p99_us;
    return std::nullopt;
}

Json to_json(const MeshRow& row) {
    Json cells = Json::array();
    for (const MeshCell& c : row.cells) {
        Json values = Json::object();
        for (std::string_view key : kMeshMetricKeys)
            if (const auto v = c.values.of(key)) values[std::string(key)] = *v;
        cells.push_back(Json{{"to", c.to}, {"values", std::move(values)}});
    }
    Json failures = Json::array();
    for (const MeshRowFailure& f : row.failures)
        failures.push_back(Json{{"peer", f.peer}, {"reason", f.reason}});
    Json times = Json::array();
    for (const MeshPeerTime& t : row.pair_seconds)
        times.push_back(Json{{"peer", t.peer}, {"seconds", t.seconds}});
    return Json{{"rank", row.rank},
                {"cells", std::move(cells)},
                {"failures", std::move(failures)},
                {"pair_seconds", std::move(times)}};
}

MeshRow mesh_row_from_json(const Json& o, const std::string& where) {
    check_schema(o, kMeshRowSchema, where);
    MeshRow row{.rank = o["rank"].get<int>()};
    const auto value = [](const Json& values, const char* key) {
        return values.contains(key) ? std::optional(values[key].get<double>()) : std::nullopt;
    };
    for (const Json& c : o["cells"]) {
        const Json& v = c["values"];
        row.cells.push_back(MeshCell{c["to"].get<int>(),
                                     {value(v, "bw_gbps"), value(v, "rate_mops"),
                                      value(v, "lat_us"), value(v, "lat_p99_us")}});
    }
    for (const Json& f : o["failures"])
        row.failures.push_back(
            MeshRowFailure{f["peer"].get<int>(), f["reason"].get<std::string>()});
    for (const Json& t : o["pair_seconds"])
        row.pair_seconds.push_back(MeshPeerTime{t["peer"].get<int>(), t["seconds"].get<double>()});
    return row;
}

// ---- The meeting's messages.

namespace {

const std::vector<Field> kHelloFields = {{"problem", "string", true, "why it cannot measure"}};
const std::vector<Field> kStatusFields = {{"error", "string", true, "what failed; empty: none"}};
const std::vector<Field> kEndpointsFields = {
    {"error", "string", true, "why it has no QPs; empty: none"},
    {"endpoints", "string[]", false, "hex QpEndpoints, one per QP"},
    {"depth", "integer", false, "the READs it serves at once"},
};
const std::vector<Field> kSentFields = {
    {"error", "string", true, "what failed; empty: none"},
    {"per_qp", "integer[]", true, "operations posted, per QP"},
};
const std::vector<Field> kSilentFields = {{"rank", "integer", true, "the silent rank"}};

}  // namespace

Json to_json(const MeshHello& m) {
    return Json{{"problem", m.problem}};
}
Json to_json(const MeshStatus& m) {
    return Json{{"error", m.error}};
}
Json to_json(const MeshEndpoints& m) {
    Json out{{"error", m.error}};
    if (m.endpoints) out["endpoints"] = *m.endpoints;
    if (m.depth) out["depth"] = *m.depth;
    return out;
}
Json to_json(const MeshSent& m) {
    return Json{{"error", m.error}, {"per_qp", m.per_qp}};
}
Json to_json(const MeshSilentNotice& m) {
    return Json{{"rank", m.rank}};
}

MeshHello mesh_hello_from_json(const Json& o, const std::string& where) {
    check_schema(o, kHelloFields, where);
    return MeshHello{o["problem"].get<std::string>()};
}
MeshStatus mesh_status_from_json(const Json& o, const std::string& where) {
    check_schema(o, kStatusFields, where);
    return MeshStatus{o["error"].get<std::string>()};
}
MeshEndpoints mesh_endpoints_from_json(const Json& o, const std::string& where) {
    check_schema(o, kEndpointsFields, where);
    MeshEndpoints m{o["error"].get<std::string>()};
    if (o.contains("endpoints")) m.endpoints = o["endpoints"].get<std::vector<std::string>>();
    if (o.contains("depth")) m.depth = o["depth"].get<unsigned>();
    return m;
}
MeshSent mesh_sent_from_json(const Json& o, const std::string& where) {
    check_schema(o, kSentFields, where);
    return MeshSent{o["error"].get<std::string>(), o["per_qp"].get<std::vector<std::uint64_t>>()};
}
MeshSilentNotice mesh_silent_from_json(const Json& o, const std::string& where) {
    check_schema(o, kSilentFields, where);
    return MeshSilentNotice{o["rank"].get<int>()};
}

bool is_mesh_record(const Json& object) {
    return object.is_object() && object.contains("tool") && object["tool"].is_string() &&
           object["tool"].get_ref<const std::string&>().starts_with("rdma-mesh ");
}

}  // namespace rdmalab::records
