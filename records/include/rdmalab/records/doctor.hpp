// rdma-doctor's report, what `rdma-doctor --json` prints (format "rdma-doctor", version 1): the
// findings and the checks passed, the devices and GPUs seen, and with --peer the pair probes or
// the layers of reachability, as a C++ type, its schema (kDoctorSchema;
// records/schema/doctor.json) and its JSON. rdma-doctor writes it through this type, and
// `rdma-bench json` reads it through it (tool_documents.hpp). Its keys are in alphabetical order
// at every level, as rdma-doctor has always printed them. A new field: the struct, kDoctorSchema,
// to_json and doctor_from_json, the version when a reader would misread an old report, and the
// schema file (RDMALAB_UPDATE_SCHEMAS=1 build/bin/unit_tests).
#pragma once

#include "rdmalab/records/document.hpp"
#include "rdmalab/records/schema.hpp"

#include <optional>
#include <string>
#include <vector>

namespace rdmalab::records {

inline constexpr const char* kDoctorFormat = "rdma-doctor";
inline constexpr int kDoctorVersion = 1;

struct DoctorFinding {
    std::string check{};     // "port-state", "gid", "memlock"…: stable
    std::string severity{};  // "problem" or "warning"
    std::string what{}, why{}, fix{};
    bool operator==(const DoctorFinding&) const = default;
};
struct DoctorPassed {
    std::string check{}, summary{};
    bool operator==(const DoctorPassed&) const = default;
};
struct DoctorPort {
    unsigned port = 0;
    std::string state{}, link_layer{};
    unsigned active_mtu = 0;
    std::string netdev{};
    std::vector<std::string> ipv4{};
    bool operator==(const DoctorPort&) const = default;
};
struct DoctorDevice {
    std::string name{}, driver{};
    std::vector<DoctorPort> ports{};
    bool operator==(const DoctorDevice&) const = default;
};
struct DoctorGpu {
    std::string address{}, vendor{};
    int numa_node = -1;
    bool operator==(const DoctorGpu&) const = default;
};

// --peer, when the peer answered: each end's port and the round trips.
struct DoctorGid {
    unsigned index = 0;
    std::string gid{}, type{};
    bool operator==(const DoctorGid&) const = default;
};
struct DoctorPairEnd {
    std::string address{}, port{}, netdev{};
    unsigned netdev_mtu = 0, active_mtu = 0;
    std::vector<DoctorGid> gids{};
    bool operator==(const DoctorPairEnd&) const = default;
};
struct DoctorRoundTrip {
    unsigned local_gid_index = 0, peer_gid_index = 0, path_mtu = 0, bytes = 0;
    std::string outcome{};  // "verified", "rtr-refused", …
    bool verified = false;
    std::string detail{};
    bool operator==(const DoctorRoundTrip&) const = default;
};
struct DoctorClassProbe {
    unsigned sent_tclass = 0;
    bool arrived = false;
    unsigned received_tos = 0;
    bool operator==(const DoctorClassProbe&) const = default;
};
struct DoctorPair {
    DoctorPairEnd local{}, peer{};
    unsigned tclass = 0;
    std::vector<DoctorRoundTrip> gid_round_trips{}, mtu_round_trips{};
    std::optional<std::string> route_problem{};
    std::optional<unsigned> requested_gid_index{};
    std::optional<DoctorClassProbe> class_probe{};
    bool operator==(const DoctorPair&) const = default;
};

// --peer, when the peer did not answer: each layer between here and there.
struct DoctorReach {
    std::string peer{};
    unsigned port = 0;
    bool layers_read = false;
    std::string tcp{}, tcp_error{}, route{}, route_error{}, interface {
    }, source{}, gateway{};
    bool interface_up = false, carrier = false;
    std::string next_hop{}, neighbour{}, link_address{};
    unsigned echoes_sent = 0, echoes_answered = 0;
    std::string echo_error{};
    bool operator==(const DoctorReach&) const = default;
};

struct DoctorReport {
    std::string format = kDoctorFormat;
    int version = kDoctorVersion;
    bool healthy = false;
    std::vector<DoctorFinding> findings{};
    std::vector<DoctorPassed> passed{};
    std::vector<DoctorDevice> devices{};
    std::vector<DoctorGpu> gpus{};
    std::optional<DoctorPair> pair{};
    std::optional<DoctorReach> reach{};
    bool operator==(const DoctorReport&) const = default;
};

Json to_json(const DoctorReport& report);
// The report's object → the report, checked against kDoctorSchema first; throws rdmalab::Error
// naming where and the field.
DoctorReport doctor_from_json(const Json& object, const std::string& where);
// Whether a document's "format" names rdma-doctor's report.
bool is_doctor_report(const Json& object);

extern const std::vector<Field> kDoctorSchema;

}  // namespace rdmalab::records
