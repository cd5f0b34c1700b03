// A record's environment: see environment.hpp.
#include "rdmalab/records/environment.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>

namespace rdmalab::records {

const std::vector<Field>& environment_fields() {
    static const std::vector<Field> fields = {
        {"environment", "object", true, "where and when it was measured"},
        {"environment.host", "string", true, "the measuring host's name"},
        {"environment.kernel", "string", true, "its kernel release"},
        {"environment.date", "string", true, "when, UTC, ISO 8601"},
        {"environment.tool_version", "string", true, "the program and its version"},
        {"environment.mpi", "string", false, "mpi-allreduce: the MPI library's version line"},
        {"environment.device", "string", false, "the RDMA device used"},
        {"environment.provider", "string", false, "its provider (\"rxe (Soft-RoCE)\")"},
        {"environment.port", "string", false, "the port and GID used"},
        {"environment.link_layer", "string", false, "Ethernet or InfiniBand"},
        {"environment.path_mtu", "integer", false, "the connection's path MTU, bytes"},
        {"environment.traffic_class", "integer", false, "the traffic class given (--tclass)"},
        {"environment.lab", "string", false, "\"rdmalab lab (KIND)\" inside the lab, else \"no\""},
        {"environment.lab_hosts", "string", false, "the lab's host count (RDMALAB_HOSTS)"},
        {"environment.lab_faults", "string", false, "the lab's injected faults (RDMALAB_FAULTS)"},
        {"environment.server", "object", false, "the peer measured against"},
        {"environment.server.host", "string", true, "its host name"},
        {"environment.server.device", "string", true, "its RDMA device"},
        {"environment.server.provider", "string", true, "its provider"},
    };
    return fields;
}

Environment host_environment(const std::string& tool_version) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    utsname system{};
    uname(&system);
    std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return Environment{
        .host = host, .kernel = system.release, .date = date, .tool_version = tool_version};
}

namespace {

template <typename T>
void put(Json& object, const char* key, const std::optional<T>& value) {
    if (value) object[key] = *value;
}
template <typename T>
void take(const Json& object, const char* key, std::optional<T>& value) {
    if (object.contains(key)) value = object[key].get<T>();
}

}  // namespace

Json to_json(const Environment& e) {
    Json object{
        {"host", e.host}, {"kernel", e.kernel}, {"date", e.date}, {"tool_version", e.tool_version}};
    put(object, "mpi", e.mpi);
    put(object, "device", e.device);
    put(object, "provider", e.provider);
    put(object, "port", e.port);
    put(object, "link_layer", e.link_layer);
    put(object, "path_mtu", e.path_mtu);
    put(object, "traffic_class", e.traffic_class);
    put(object, "lab", e.lab);
    put(object, "lab_hosts", e.lab_hosts);
    put(object, "lab_faults", e.lab_faults);
    if (e.server)
        object["server"] = Json{{"host", e.server->host},
                                {"device", e.server->device},
                                {"provider", e.server->provider}};
    return object;
}

// The record's reader has checked the object against environment_fields().
Environment environment_from_json(const Json& o) {
    Environment e{.host = o["host"].get<std::string>(),
                  .kernel = o["kernel"].get<std::string>(),
                  .date = o["date"].get<std::string>(),
                  .tool_version = o["tool_version"].get<std::string>()};
    take(o, "mpi", e.mpi);
    take(o, "device", e.device);
    take(o, "provider", e.provider);
    take(o, "port", e.port);
    take(o, "link_layer", e.link_layer);
    take(o, "path_mtu", e.path_mtu);
    take(o, "traffic_class", e.traffic_class);
    take(o, "lab", e.lab);
    take(o, "lab_hosts", e.lab_hosts);
    take(o, "lab_faults", e.lab_faults);
    if (o.contains("server"))
        e.server = PeerHost{o["server"]["host"].get<std::string>(),
                            o["server"]["device"].get<std::string>(),
                            o["server"]["provider"].get<std::string>()};
    return e;
}

}  // namespace rdmalab::records
