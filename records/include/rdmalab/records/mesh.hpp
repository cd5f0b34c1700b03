// rdma-mesh's record, mesh.json: one run over every pair of ranks (who the ranks were, how it ran,
// each metric's matrix and statistics, the failed and slow pairs, the hosts named, the summary)
// as a C++ type, its schema (kMeshSchema; records/schema/mesh.json) and its JSON. rdma-mesh
// writes it through this type, and `rdma-bench json` reads it through it (a path naming no field
// of the schema is refused), as rdma-bench's records are (bench.hpp).
// The mesh.json files recorded in bench/results still read (a unit test reads them all and writes
// each back byte for byte): a field added since is optional here. A new field: the struct,
// kMeshSchema (mesh_fields), to_json and mesh_from_json, and the schema file
// (RDMALAB_UPDATE_SCHEMAS=1 build/bin/unit_tests rewrites it).
#pragma once

#include "rdmalab/records/document.hpp"
#include "rdmalab/records/environment.hpp"
#include "rdmalab/records/schema.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rdmalab::records {

// "environment": the host's (rank 0's), with the MPI library, the launcher and the rank count.
struct MeshEnvironment {
    Environment host{};  // host, kernel, date, tool_version, mpi
    std::string launcher{};
    int ranks = 0;
    bool operator==(const MeshEnvironment&) const = default;
};

// "settings": the options that shaped the run.
struct MeshSettings {
    std::string op{}, transport{};
    std::string size{}, rate_size{}, lat_size{};  // as given: "64K"
    double duration_s = 0;
    std::uint64_t lat_iters = 0, warmup = 0;
    double timeout_s = 0;
    bool serial = false;
    std::optional<std::string> pairs{};  // absent in runs before --pairs
    std::optional<std::uint64_t> seed{};
    std::string judge{};
    double fraction = 0, latency_factor = 0;
    std::string memory{};
    std::string describe{};  // the run in one line
    bool operator==(const MeshSettings&) const = default;
};

// One rank, as it told the others at the start ("ranks", and the identity message itself).
struct MeshRank {
    int rank = 0;
    std::string host{}, address{}, device{}, provider{}, gid{};
    int local_rank = 0;
    std::string node{}, launcher{};
    std::string problem{};  // why it cannot measure; empty when it can
    // How the summary names its host: the name, with the RDMA address where there is one (lab
    // guests all share one host name).
    std::string label() const { return address.empty() ? host : host + " " + address; }
    bool operator==(const MeshRank&) const = default;
};

struct MeshPairTime {  // a pair's time, as its lower rank measured it
    int a = 0, b = 0;
    double seconds = 0;
    bool operator==(const MeshPairTime&) const = default;
};

// The metrics, in the order of "metrics", mesh.csv's columns and the figures.
inline constexpr std::array<std::string_view, 4> kMeshMetricKeys = {"bw_gbps", "rate_mops",
                                                                    "lat_us", "lat_p99_us"};

// One metric: its statistics and the n×n matrix (row: from, column: to; null: not measured).
struct MeshMetric {
    std::string key{};  // one of kMeshMetricKeys: its name in "metrics"
    std::string label{};
    double median = 0, typical = 0, threshold = 0;
    bool judged = false;
    std::vector<std::vector<std::optional<double>>> matrix{};
    bool operator==(const MeshMetric&) const = default;
};

struct MeshFailedPair {
    int a = 0, b = 0;
    std::string reason{};
    bool operator==(const MeshFailedPair&) const = default;
};
struct MeshSlowPair {
    int a = 0, b = 0;
    std::vector<std::string> reasons{};
    bool operator==(const MeshSlowPair&) const = default;
};
struct MeshCulprit {  // a host all of whose pairs were slow or failed
    int rank = 0;
    std::string host{};
    int pairs = 0;
    bool operator==(const MeshCulprit&) const = default;
};

struct MeshRecord {
    std::string tool{};  // "rdma-mesh 0.1"
    MeshEnvironment environment{};
    MeshSettings settings{};
    std::vector<MeshRank> ranks{};
    std::uint64_t rounds = 0;
    std::optional<std::uint64_t> planned_pairs{};  // absent in runs before --pairs
    std::vector<MeshPairTime> pair_seconds{};
    std::vector<MeshMetric> metrics{};  // every one of kMeshMetricKeys, in its order
    std::vector<MeshFailedPair> failed{};
    std::vector<MeshSlowPair> slow{};
    std::vector<MeshCulprit> culprits{};
    std::vector<std::string> summary{};
    bool flagged = false;
    bool operator==(const MeshRecord&) const = default;
};

// ---- The row each rank sends rank 0 at the end (a message, not a file): what it measured towards
// each peer, the pairs that failed as it saw them, and how long each of its pairs took.

struct MeshCellValues {  // one directed cell's metrics; none: not measured
    std::optional<double> bw_gbps{}, rate_mops{}, lat_us{}, lat_p99_us{};
    // A metric by its key (kMeshMetricKeys); none for another key.
    std::optional<double> of(std::string_view key) const;
    bool operator==(const MeshCellValues&) const = default;
};
struct MeshCell {
    int to = 0;
    MeshCellValues values{};
    bool operator==(const MeshCell&) const = default;
};
struct MeshRowFailure {
    int peer = 0;
    std::string reason{};
    bool operator==(const MeshRowFailure&) const = default;
};
struct MeshPeerTime {
    int peer = 0;
    double seconds = 0;
    bool operator==(const MeshPeerTime&) const = default;
};
struct MeshRow {
    int rank = 0;
    std::vector<MeshCell> cells{};
    std::vector<MeshRowFailure> failures{};
    std::vector<MeshPeerTime> pair_seconds{};
    bool operator==(const MeshRow&) const = default;
};

// {rank, cells: [{to, values}], failures: [{peer, reason}], pair_seconds: [{peer, seconds}]}, and
// back (checked against kMeshRowSchema first; throws rdmalab::Error naming where and the field).
Json to_json(const MeshRow& row);
MeshRow mesh_row_from_json(const Json& object, const std::string& where);

Json to_json(const MeshRecord& record);
// mesh.json's object → the record, checked against kMeshSchema first; throws rdmalab::Error
// naming where and the field.
MeshRecord mesh_from_json(const Json& object, const std::string& where);
// Whether a document's "tool" names rdma-mesh.
bool is_mesh_record(const Json& object);

// One rank's identity, the message each rank sends the others, and back (checked against
// kMeshRankSchema first; throws rdmalab::Error naming where and the field).
Json to_json(const MeshRank& rank);
MeshRank mesh_rank_from_json(const Json& object, const std::string& where);

// ---- The messages two ranks exchange while they meet (each a record of its own, read through
// its type: a field missing, misspelt or of the wrong type is an rdmalab::Error naming it).

struct MeshHello {          // the first word of a meeting: whether this side can measure at all
    std::string problem{};  // empty: it can
    bool operator==(const MeshHello&) const = default;
};
struct MeshStatus {  // ready, go, counted: an error or none
    std::string error{};
    bool operator==(const MeshStatus&) const = default;
};
struct MeshEndpoints {  // this side's QPs, or why it has none
    std::string error{};
    std::optional<std::vector<std::string>> endpoints{};  // hex QpEndpoints, one per QP
    std::optional<unsigned> depth{};                      // the READs it serves at once
    bool operator==(const MeshEndpoints&) const = default;
};
struct MeshSent {  // what the initiator posted in a phase, per QP
    std::string error{};
    std::vector<std::uint64_t> per_qp{};
    bool operator==(const MeshSent&) const = default;
};
struct MeshSilentNotice {  // a rank found silent, told to the others
    int rank = 0;
    bool operator==(const MeshSilentNotice&) const = default;
};

Json to_json(const MeshHello& message);
Json to_json(const MeshStatus& message);
Json to_json(const MeshEndpoints& message);
Json to_json(const MeshSent& message);
Json to_json(const MeshSilentNotice& message);
MeshHello mesh_hello_from_json(const Json& object, const std::string& where);
MeshStatus mesh_status_from_json(const Json& object, const std::string& where);
MeshEndpoints mesh_endpoints_from_json(const Json& object, const std::string& where);
MeshSent mesh_sent_from_json(const Json& object, const std::string& where);
MeshSilentNotice mesh_silent_from_json(const Json& object, const std::string& where);

extern const std::vector<Field> kMeshSchema;
extern const std::vector<Field> kMeshRankSchema;  // one rank's object alone
extern const std::vector<Field> kMeshRowSchema;   // a row message

}  // namespace rdmalab::records
