// A program trace's line written: see trace_event.hpp.
#include "rdmalab/trace_event.hpp"

namespace rdmalab::trace {

namespace {

template <typename T>
void put(nlohmann::json& object, const char* key, const std::optional<T>& value) {
    if (value) object[key] = *value;
}

}  // namespace

nlohmann::json to_json(const Event& e) {
    nlohmann::json line{{"t_ns", e.t_ns}, {"host", e.host}, {"event", e.event}};
    put(line, "format", e.format);
    put(line, "version", e.version);
    put(line, "clock", e.clock);
    put(line, "pid", e.pid);
    put(line, "qp_num", e.qp_num);
    put(line, "dest_qp", e.dest_qp);
    put(line, "wr_id", e.wr_id);
    put(line, "opcode", e.opcode);
    put(line, "length", e.length);
    put(line, "num_sge", e.num_sge);
    put(line, "signaled", e.signaled);
    put(line, "inline", e.inline_data);
    put(line, "fence", e.fence);
    put(line, "remote_addr", e.remote_addr);
    put(line, "rkey", e.rkey);
    put(line, "compare_add", e.compare_add);
    put(line, "swap", e.swap);
    put(line, "imm", e.imm);
    put(line, "status", e.status);
    put(line, "ok", e.ok);
    put(line, "byte_len", e.byte_len);
    put(line, "vendor_err", e.vendor_err);
    put(line, "text", e.text);
    put(line, "name", e.name);
    put(line, "status", e.cm_status);
    put(line, "from", e.from);
    put(line, "to", e.to);
    return line;
}

std::string encode(const Event& event) {
    return to_json(event).dump();
}

}  // namespace rdmalab::trace
