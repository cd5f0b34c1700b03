// Where and when a record was measured: its "environment" object, the same in every record type.
#pragma once

#include "rdmalab/records/schema.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rdmalab::records {

// The peer a two-sided measurement ran against (rdma-bench's server).
struct PeerHost {
    std::string host{}, device{}, provider{};
    bool operator==(const PeerHost&) const = default;
};

struct Environment {
    std::string host{}, kernel{};
    std::string date{};  // UTC, ISO 8601
    std::string tool_version{};
    std::optional<std::string> mpi{};  // mpi-allreduce: the MPI library's version line
    // What an RDMA tool used (rdma-bench), absent where the record names no device.
    std::optional<std::string> device{}, provider{}, port{}, link_layer{};
    std::optional<std::uint32_t> path_mtu{};               // bytes
    std::optional<int> traffic_class{};                    // as given with --tclass
    std::optional<std::string> lab{};                      // "rdmalab lab (vm)" or "no"
    std::optional<std::string> lab_hosts{}, lab_faults{};  // RDMALAB_HOSTS, RDMALAB_FAULTS
    std::optional<PeerHost> server{};
    bool operator==(const Environment&) const = default;
};

// This host: host, kernel, date (now) and tool_version; the caller adds what it used.
Environment host_environment(const std::string& tool_version);

// The "environment" object of a record, and back (the object checked against the schema first).
Json to_json(const Environment& environment);
Environment environment_from_json(const Json& object);

// Its fields, dotted below the record ("environment.host", …), for the record types' schemas (a
// function: the schemas, built from it at start-up in other files, must find it built).
const std::vector<Field>& environment_fields();

}  // namespace rdmalab::records
