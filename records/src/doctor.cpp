// rdma-doctor's report (see doctor.hpp). Every object is written with its keys in alphabetical
// order: the order rdma-doctor's output has always had.
#include "rdmalab/records/doctor.hpp"

#include <utility>

namespace rdmalab::records {

namespace {

const std::vector<Field> kPairEndFields = {
    {"active_mtu", "integer", true, "the RDMA port's active MTU, bytes"},
    {"address", "string", true, "the address the pair used"},
    {"gids", "object[]", true, "the port's valid GID entries"},
    {"gids[].gid", "string", true, "the GID"},
    {"gids[].index", "integer", true, "its index"},
    {"gids[].type", "string", true, "\"RoCE v2\", \"IB/RoCE v1\", or empty"},
    {"netdev", "string", true, "the Ethernet interface under the port"},
    {"netdev_mtu", "integer", true, "its MTU, bytes (0: unknown)"},
    {"port", "string", true, "the RDMA port (\"rxe0 port 1\")"},
};

const std::vector<Field> kRoundTripFields = {
    {"bytes", "integer", true, "bytes sent each way"},
    {"detail", "string", true, "what failed, in words; empty when it was verified"},
    {"local_gid_index", "integer", true, "this end's GID index"},
    {"outcome", "string", true, "verified, or how it failed"},
    {"path_mtu", "integer", true, "the path MTU asked for, bytes"},
    {"peer_gid_index", "integer", true, "the peer's GID index"},
    {"verified", "boolean", true, "the data went there and came back intact"},
};

std::vector<Field> doctor_fields() {
    std::vector<Field> fields = {
        {"devices", "object[]", true, "the RDMA devices seen"},
        {"devices[].driver", "string", true, "its kernel driver (\"rdma_rxe\", \"mlx5_core\")"},
        {"devices[].name", "string", true, "its name (\"rxe0\")"},
        {"devices[].ports", "object[]", true, "its ports"},
        {"devices[].ports[].active_mtu", "integer", true, "bytes; 0 when not queried"},
        {"devices[].ports[].ipv4", "string[]", true, "the IPv4 addresses on its netdev"},
        {"devices[].ports[].link_layer", "string", true, "Ethernet (RoCE) or InfiniBand"},
        {"devices[].ports[].netdev", "string", true, "the Ethernet interface under it"},
        {"devices[].ports[].port", "integer", true, "its number"},
        {"devices[].ports[].state", "string", true, "ACTIVE, DOWN, INIT, ARMED"},
        {"findings", "object[]", true, "what is wrong, one each"},
        {"findings[].check", "string", true, "the check, a stable name (\"port-state\")"},
        {"findings[].fix", "string", true, "how to mend it"},
        {"findings[].severity", "string", true, "problem or warning"},
        {"findings[].what", "string", true, "what was found"},
        {"findings[].why", "string", true, "why it matters"},
        {"format", "string", true, "\"rdma-doctor\""},
        {"gpus", "object[]", true, "the GPUs seen"},
        {"gpus[].address", "string", true, "its PCI address"},
        {"gpus[].numa_node", "integer", true, "its NUMA node (-1: unknown)"},
        {"gpus[].vendor", "string", true, "NVIDIA or AMD"},
        {"healthy", "boolean", true, "no finding"},
        {"pair", "object", false, "--peer, when the peer answered: the probes"},
        {"pair.class_probe", "object", false, "a round trip with the traffic class set"},
        {"pair.class_probe.arrived", "boolean", true, "it arrived"},
        {"pair.class_probe.received_tos", "integer", true, "the TOS byte the peer saw"},
        {"pair.class_probe.sent_tclass", "integer", true, "the traffic class sent"},
        {"pair.gid_round_trips", "object[]", true, "small round trips, one per GID pairing"},
    };
    const auto add = [&](std::vector<Field> more) {
        fields.insert(fields.end(), more.begin(), more.end());
    };
    add(fields_under("pair.gid_round_trips[]", kRoundTripFields));
    fields.push_back({"pair.local", "object", true, "this end"});
    add(fields_under("pair.local", kPairEndFields));
    fields.push_back({"pair.mtu_round_trips", "object[]", true, "round trips, largest MTU first"});
    add(fields_under("pair.mtu_round_trips[]", kRoundTripFields));
    fields.push_back({"pair.peer", "object", true, "the peer's end"});
    add(fields_under("pair.peer", kPairEndFields));
    add({
        {"pair.requested_gid_index", "integer", false, "the GID index the application is told"},
        {"pair.route_problem", "string", false, "no RDMA port carries the route's address"},
        {"pair.tclass", "integer", true, "the traffic class used"},
        {"passed", "object[]", true, "the checks that passed"},
        {"passed[].check", "string", true, "the check"},
        {"passed[].summary", "string", true, "what it saw"},
        {"reach", "object", false, "--peer, when the peer did not answer: each layer"},
        {"reach.carrier", "boolean", true, "the link under the interface is up"},
        {"reach.echo_error", "string", true, "why no echo was sent; empty when they were"},
        {"reach.echoes_answered", "integer", true, "ICMP echoes answered"},
        {"reach.echoes_sent", "integer", true, "ICMP echoes sent"},
        {"reach.gateway", "string", true, "the route's gateway; empty on the link"},
        {"reach.interface", "string", true, "the interface the route leaves by"},
        {"reach.interface_up", "boolean", true, "it is up"},
        {"reach.layers_read", "boolean", true, "false: an IPv6 peer, route and neighbour not read"},
        {"reach.link_address", "string", true, "the neighbour entry's address; empty when none"},
        {"reach.neighbour", "string", true, "the neighbour entry's state"},
        {"reach.next_hop", "string", true, "the peer, or the gateway"},
        {"reach.peer", "string", true, "the peer's address"},
        {"reach.port", "integer", true, "the TCP port tried"},
        {"reach.route", "string", true, "the route's kind: unicast, none, unreachable, …"},
        {"reach.route_error", "string", true, "why there is no route"},
        {"reach.source", "string", true, "the address packets leave from"},
        {"reach.tcp", "string", true, "the TCP connection's outcome"},
        {"reach.tcp_error", "string", true, "its error"},
        {"version", "integer", true, "the format's version (1)"},
    });
    return fields;
}

Json end_json(const DoctorPairEnd& e) {
    Json gids = Json::array();
    for (const DoctorGid& g : e.gids)
        gids.push_back(Json{{"gid", g.gid}, {"index", g.index}, {"type", g.type}});
    return Json{{"active_mtu", e.active_mtu}, {"address", e.address},
                {"gids", std::move(gids)},    {"netdev", e.netdev},
                {"netdev_mtu", e.netdev_mtu}, {"port", e.port}};
}

DoctorPairEnd end_from_json(const Json& o) {
    DoctorPairEnd e{.address = o["address"].get<std::string>(),
                    .port = o["port"].get<std::string>(),
                    .netdev = o["netdev"].get<std::string>(),
                    .netdev_mtu = o["netdev_mtu"].get<unsigned>(),
                    .active_mtu = o["active_mtu"].get<unsigned>()};
    for (const Json& g : o["gids"])
        e.gids.push_back(DoctorGid{g["index"].get<unsigned>(), g["gid"].get<std::string>(),
                                   g["type"].get<std::string>()});
    return e;
}

Json trips_json(const std::vector<DoctorRoundTrip>& trips) {
    Json list = Json::array();
    for (const DoctorRoundTrip& t : trips)
        list.push_back(Json{{"bytes", t.bytes},
                            {"detail", t.detail},
                            {"local_gid_index", t.local_gid_index},
                            {"outcome", t.outcome},
                            {"path_mtu", t.path_mtu},
                            {"peer_gid_index", t.peer_gid_index},
                            {"verified", t.verified}});
    return list;
}

std::vector<DoctorRoundTrip> trips_from_json(const Json& list) {
    std::vector<DoctorRoundTrip> trips;
    for (const Json& t : list)
        trips.push_back(DoctorRoundTrip{.local_gid_index = t["local_gid_index"].get<unsigned>(),
                                        .peer_gid_index = t["peer_gid_index"].get<unsigned>(),
                                        .path_mtu = t["path_mtu"].get<unsigned>(),
                                        .bytes = t["bytes"].get<unsigned>(),
                                        .outcome = t["outcome"].get<std::string>(),
                                        .verified = t["verified"].get<bool>(),
                                        .detail = t["detail"].get<std::string>()});
    return trips;
}

Json pair_json(const DoctorPair& p) {
    Json out = Json::object();
    if (p.class_probe)
        out["class_probe"] = Json{{"arrived", p.class_probe->arrived},
                                  {"received_tos", p.class_probe->received_tos},
                                  {"sent_tclass", p.class_probe->sent_tclass}};
    out["gid_round_trips"] = trips_json(p.gid_round_trips);
    out["local"] = end_json(p.local);
    out["mtu_round_trips"] = trips_json(p.mtu_round_trips);
    out["peer"] = end_json(p.peer);
    if (p.requested_gid_index) out["requested_gid_index"] = *p.requested_gid_index;
    if (p.route_problem) out["route_problem"] = *p.route_problem;
    out["tclass"] = p.tclass;
    return out;
}

DoctorPair pair_from_json(const Json& o) {
    DoctorPair p{.local = end_from_json(o["local"]),
                 .peer = end_from_json(o["peer"]),
                 .tclass = o["tclass"].get<unsigned>(),
                 .gid_round_trips = trips_from_json(o["gid_round_trips"]),
                 .mtu_round_trips = trips_from_json(o["mtu_round_trips"])};
    if (o.contains("route_problem")) p.route_problem = o["route_problem"].get<std::string>();
    if (o.contains("requested_gid_index"))
        p.requested_gid_index = o["requested_gid_index"].get<unsigned>();
    if (o.contains("class_probe")) {
        const Json& c = o["class_probe"];
        p.class_probe = DoctorClassProbe{c["sent_tclass"].get<unsigned>(), c["arrived"].get<bool>(),
                                         c["received_tos"].get<unsigned>()};
    }
    return p;
}

Json reach_json(const DoctorReach& r) {
    return Json{{"carrier", r.carrier},
                {"echo_error", r.echo_error},
                {"echoes_answered", r.echoes_answered},
                {"echoes_sent", r.echoes_sent},
                {"gateway", r.gateway},
                {"interface", r.interface},
                {"interface_up", r.interface_up},
                {"layers_read", r.layers_read},
                {"link_address", r.link_address},
                {"neighbour", r.neighbour},
                {"next_hop", r.next_hop},
                {"peer", r.peer},
                {"port", r.port},
                {"route", r.route},
                {"route_error", r.route_error},
                {"source", r.source},
                {"tcp", r.tcp},
                {"tcp_error", r.tcp_error}};
}

DoctorReach reach_from_json(const Json& o) {
    return DoctorReach{.peer = o["peer"].get<std::string>(),
                       .port = o["port"].get<unsigned>(),
                       .layers_read = o["layers_read"].get<bool>(),
                       .tcp = o["tcp"].get<std::string>(),
                       .tcp_error = o["tcp_error"].get<std::string>(),
                       .route = o["route"].get<std::string>(),
                       .route_error = o["route_error"].get<std::string>(),
                       .interface = o["interface"].get<std::string>(),
                       .source = o["source"].get<std::string>(),
                       .gateway = o["gateway"].get<std::string>(),
                       .interface_up = o["interface_up"].get<bool>(),
                       .carrier = o["carrier"].get<bool>(),
                       .next_hop = o["next_hop"].get<std::string>(),
                       .neighbour = o["neighbour"].get<std::string>(),
                       .link_address = o["link_address"].get<std::string>(),
                       .echoes_sent = o["echoes_sent"].get<unsigned>(),
                       .echoes_answered = o["echoes_answered"].get<unsigned>(),
                       .echo_error = o["echo_error"].get<std::string>()};
}

}  // namespace

const std::vector<Field> kDoctorSchema = doctor_fields();

Json to_json(const DoctorReport& r) {
    Json devices = Json::array();
    for (const DoctorDevice& d : r.devices) {
        Json ports = Json::array();
        for (const DoctorPort& p : d.ports)
            ports.push_back(Json{{"active_mtu", p.active_mtu},
                                 {"ipv4", p.ipv4},
                                 {"link_layer", p.link_layer},
                                 {"netdev", p.netdev},
                                 {"port", p.port},
                                 {"state", p.state}});
        devices.push_back(
            Json{{"driver", d.driver}, {"name", d.name}, {"ports", std::move(ports)}});
    }
    Json findings = Json::array();
    for (const DoctorFinding& f : r.findings)
        findings.push_back(Json{{"check", f.check},
                                {"fix", f.fix},
                                {"severity", f.severity},
                                {"what", f.what},
                                {"why", f.why}});
    Json gpus = Json::array();
    for (const DoctorGpu& g : r.gpus)
        gpus.push_back(
            Json{{"address", g.address}, {"numa_node", g.numa_node}, {"vendor", g.vendor}});
    Json passed = Json::array();
    for (const DoctorPassed& p : r.passed)
        passed.push_back(Json{{"check", p.check}, {"summary", p.summary}});
    Json out = Json{{"devices", std::move(devices)},
                    {"findings", std::move(findings)},
                    {"format", r.format},
                    {"gpus", std::move(gpus)},
                    {"healthy", r.healthy}};
    if (r.pair) out["pair"] = pair_json(*r.pair);
    out["passed"] = std::move(passed);
    if (r.reach) out["reach"] = reach_json(*r.reach);
    out["version"] = r.version;
    return out;
}

DoctorReport doctor_from_json(const Json& o, const std::string& where) {
    check_schema(o, kDoctorSchema, where);
    DoctorReport r{.format = o["format"].get<std::string>(),
                   .version = o["version"].get<int>(),
                   .healthy = o["healthy"].get<bool>()};
    for (const Json& f : o["findings"])
        r.findings.push_back(
            DoctorFinding{f["check"].get<std::string>(), f["severity"].get<std::string>(),
                          f["what"].get<std::string>(), f["why"].get<std::string>(),
                          f["fix"].get<std::string>()});
    for (const Json& p : o["passed"])
        r.passed.push_back(
            DoctorPassed{p["check"].get<std::string>(), p["summary"].get<std::string>()});
    for (const Json& d : o["devices"]) {
        DoctorDevice device{d["name"].get<std::string>(), d["driver"].get<std::string>(), {}};
        for (const Json& p : d["ports"])
            device.ports.push_back(DoctorPort{.port = p["port"].get<unsigned>(),
                                              .state = p["state"].get<std::string>(),
                                              .link_layer = p["link_layer"].get<std::string>(),
                                              .active_mtu = p["active_mtu"].get<unsigned>(),
                                              .netdev = p["netdev"].get<std::string>(),
                                              .ipv4 = p["ipv4"].get<std::vector<std::string>>()});
        r.devices.push_back(std::move(device));
    }
    for (const Json& g : o["gpus"])
        r.gpus.push_back(DoctorGpu{g["address"].get<std::string>(), g["vendor"].get<std::string>(),
                                   g["numa_node"].get<int>()});
    if (o.contains("pair")) r.pair = pair_from_json(o["pair"]);
    if (o.contains("reach")) r.reach = reach_from_json(o["reach"]);
    return r;
}

bool is_doctor_report(const Json& object) {
    return object.is_object() && object.contains("format") && object["format"] == kDoctorFormat;
}

}  // namespace rdmalab::records
