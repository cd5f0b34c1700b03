// Unit tests for rdma-doctor's typed report (records/doctor.hpp), what `rdma-doctor --json`
// prints: a report with every part keeps the schema and reads back equal, every object's keys
// are in alphabetical order (the order rdma-doctor has always printed), a misspelt field is
// refused by name, `rdma-bench json` reads it through its type, and records/schema/doctor.json
// is the schema.
#include "rdmalab/records/doctor.hpp"
#include "rdmalab/records/tool_documents.hpp"

#include "rdmalab/error.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace rdmalab::records {

namespace {

DoctorReport full_doctor_report() {
    DoctorReport r;
    r.healthy = false;
    r.findings = {{"port-state", "problem", "rxe0 port 1 is DOWN", "no traffic", "ip link set up"}};
    r.passed = {{"memlock", "unlimited"}};
    r.devices = {{"rxe0",
                  "rdma_rxe",
                  {{.port = 1,
                    .state = "DOWN",
                    .link_layer = "Ethernet",
                    .active_mtu = 1024,
                    .netdev = "eth1",
                    .ipv4 = {"198.51.100.1"}}}}};
    r.gpus = {{"0000:3d:00.0", "NVIDIA", 0}};
    const DoctorPairEnd end{.address = "198.51.100.1",
                            .port = "rxe0 port 1",
                            .netdev = "eth1",
                            .netdev_mtu = 1500,
                            .active_mtu = 1024,
                            .gids = {{1, "::ffff:198.51.100.1", "RoCE v2"}}};
    const DoctorRoundTrip trip{.local_gid_index = 1,
                               .peer_gid_index = 1,
                               .path_mtu = 1024,
                               .bytes = 64,
                               .outcome = "verified",
                               .verified = true,
                               .detail = ""};
    r.pair = DoctorPair{.local = end,
                        .peer = end,
                        .tclass = 106,
                        .gid_round_trips = {trip},
                        .mtu_round_trips = {trip, trip},
                        .route_problem = "no RDMA port carries 10.0.0.1",
                        .requested_gid_index = 1,
                        .class_probe = DoctorClassProbe{106, true, 106}};
    r.reach = DoctorReach{.peer = "198.51.100.2",
                          .port = 18516,
                          .layers_read = true,
                          .tcp = "refused",
                          .tcp_error = "Connection refused",
                          .route = "unicast",
                          .interface = "eth1",
                          .source = "198.51.100.1",
                          .interface_up = true,
                          .carrier = true,
                          .next_hop = "198.51.100.2",
                          .neighbour = "REACHABLE",
                          .link_address = "52:54:00:5e:01:02",
                          .echoes_sent = 3,
                          .echoes_answered = 3};
    return r;
}

// Whether every object in value has its keys in ascending order.
bool keys_sorted(const Json& value) {
    if (value.is_array())
        return std::all_of(value.begin(), value.end(),
                           [](const Json& v) { return keys_sorted(v); });
    if (!value.is_object()) return true;
    std::string last;
    bool first = true;
    for (const auto& [key, item] : value.items()) {
        if (!first && !(last < key)) return false;
        if (!keys_sorted(item)) return false;
        last = key;
        first = false;
    }
    return true;
}

std::string doctor_record_text_of(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

TEST(DoctorRecordType, AReportKeepsTheSchemaAndReadsBackEqualInAlphabeticalOrder) {
    DoctorReport host_only = full_doctor_report();
    host_only.pair.reset();
    host_only.reach.reset();
    DoctorReport pair_without_options = full_doctor_report();
    pair_without_options.reach.reset();
    pair_without_options.pair->route_problem.reset();
    pair_without_options.pair->requested_gid_index.reset();
    pair_without_options.pair->class_probe.reset();
    for (const DoctorReport& report : {full_doctor_report(), host_only, pair_without_options}) {
        const Json json = to_json(report);
        EXPECT_EQ(schema_problems(json, kDoctorSchema), std::vector<std::string>{});
        EXPECT_TRUE(is_doctor_report(json));
        EXPECT_TRUE(keys_sorted(json)) << json.dump(2);
        EXPECT_EQ(doctor_from_json(json, "here"), report);
        EXPECT_EQ(read_document(json, "here"), json);
    }
    EXPECT_FALSE(keys_sorted(Json{{"b", 1}, {"a", 2}}));  // the check can fail
    EXPECT_EQ(to_json(full_doctor_report())["version"], 1);
    EXPECT_FALSE(is_doctor_report(Json{{"format", "rdma-bench"}}));
}

TEST(DoctorRecordType, AMisspeltOrMistypedFieldIsRefusedByName) {
    Json json = to_json(full_doctor_report());
    json["pair"]["gid_round_trips"][0]["verifed"] = true;
    json["reach"]["echoes_sent"] = "three";
    json["devices"][0]["ports"][0].erase("state");
    EXPECT_EQ(schema_problems(json, kDoctorSchema),
              (std::vector<std::string>{"devices[0].ports[0].state: missing",
                                        "pair.gid_round_trips[0].verifed: not in the schema",
                                        "reach.echoes_sent: a string, not integer"}));
    try {
        doctor_from_json(json, "report.json");
        FAIL() << "a report outside its schema was read";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "report.json: devices[0].ports[0].state: missing (and 2 more)");
    }
    EXPECT_TRUE(names_field(kDoctorSchema, "pair.gid_round_trips.0.verified"));
    EXPECT_TRUE(names_field(kDoctorSchema, "devices.0.ports.0.ipv4.0"));
    EXPECT_FALSE(names_field(kDoctorSchema, "pair.gid_round_trip.0.verified"));
}

TEST(DoctorRecordType, TheSchemaFileIsTheSchema) {
    const std::string path = std::string(RDMALAB_SOURCE_DIR) + "/records/schema/doctor.json";
    const std::string schema =
        schema_json("rdmalab rdma-doctor report",
                    "what rdma-doctor --json prints: format rdma-doctor, version 1 "
                    "(records/doctor.hpp)",
                    kDoctorSchema)
            .dump(2) +
        "\n";
    if (std::getenv("RDMALAB_UPDATE_SCHEMAS")) std::ofstream(path) << schema;
    EXPECT_EQ(doctor_record_text_of(path), schema)
        << path << " differs from kDoctorSchema: RDMALAB_UPDATE_SCHEMAS=1 build/bin/unit_tests";
}

}  // namespace rdmalab::records
