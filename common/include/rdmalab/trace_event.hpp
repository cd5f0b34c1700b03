// One line of a program trace (--trace FILE, trace.hpp) as a C++ type, and its one writer. Each
// field is the JSON field of the same name ("inline" is inline_data; a cm_event's "status" is
// cm_status); an optional field is written only when set. The lines are written here, in
// rdmalab_common, because the lessons and the library's own verbs wrappers write them; their one
// reader, checked against their schema (one per event kind), is the records library's
// (records/trace_event.hpp, records/schema/trace-event.json), which trace-merge reads through.
// A new field: the struct, to_json below, the kind's schema and reader there, and the schema
// file (RDMALAB_UPDATE_SCHEMAS=1 build/bin/unit_tests).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace rdmalab::trace {

inline constexpr const char* kProgramTraceFormat = "rdmalab-program-trace";
inline constexpr int kFormatVersion = 1;

struct Event {
    std::int64_t t_ns = 0;  // CLOCK_REALTIME, ns since the epoch (in a merged trace: from t0)
    std::string host{};     // "host1"
    // trace_start (the first line), post_send, post_recv, completion, step, cm_event, modify_qp.
    std::string event{};
    // trace_start: the format, its version, the clock, the process.
    std::optional<std::string> format{};
    std::optional<std::int64_t> version{};
    std::optional<std::string> clock{};
    std::optional<std::int64_t> pid{};
    // post_send, post_recv, completion, modify_qp: the local QP; post_send: the QP its packets
    // go to.
    std::optional<std::uint32_t> qp_num{}, dest_qp{};
    std::optional<std::uint64_t> wr_id{};
    std::optional<std::string> opcode{};  // a post_send's WR opcode, a completion's
    std::optional<std::uint64_t> length{};
    std::optional<std::int64_t> num_sge{};
    std::optional<bool> signaled{}, inline_data{}, fence{};
    std::optional<std::string> remote_addr{}, rkey{};  // hexadecimal text
    std::optional<std::uint64_t> compare_add{}, swap{};
    std::optional<std::string> imm{};  // hexadecimal, host order
    // completion.
    std::optional<std::string> status{};  // "IBV_WC_SUCCESS"
    std::optional<bool> ok{};
    std::optional<std::uint32_t> byte_len{};
    std::optional<std::string> vendor_err{};
    std::optional<std::string> text{};  // step
    // cm_event.
    std::optional<std::string> name{};
    std::optional<std::int64_t> cm_status{};
    std::optional<std::string> from{}, to{};  // modify_qp: QP states ("INIT", "RTR")
    bool operator==(const Event&) const = default;
};

// The event as a JSON object (keys in alphabetical order, as the lines have always had them).
nlohmann::json to_json(const Event& event);
// One line of the trace, without its newline.
std::string encode(const Event& event);

}  // namespace rdmalab::trace
