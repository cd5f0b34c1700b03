// Program traces (--trace FILE): the data-path events of one process — each ibv_post_send and
// ibv_post_recv, each completion polled, QP transitions, rdma_cm events, a lesson's own named
// steps — as JSON lines, for `./rdmalab trace` to merge with the packets of the same run.
// Off by default. Every hook is an inline null-pointer test (`if (detail::writer)`): with no
// --trace that one predictable branch is all it costs; the work happens out of line.
//
// The clock is CLOCK_REALTIME in nanoseconds since the epoch because that is the clock a packet
// capture on the same machine stamps its frames with (the kernel's skb timestamps, which
// dumpcap/tcpdump report): a program's events and its own host's packets then need no alignment.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace rdmalab::trace {

class Writer;
namespace detail {
extern Writer* writer;  // null: tracing is off
void record_post_send(ibv_qp* qp, const ibv_send_wr* wr);
void record_post_recv(ibv_qp* qp, const ibv_recv_wr* wr);
void record_completion(const ibv_wc& wc);
void record_step(std::string_view text);
void record_cm_event(int type, std::string_view name, int status);
void record_modify_qp(ibv_qp* qp, int from, int to);
}  // namespace detail

// Opens FILE (truncated) and turns tracing on for the rest of the process; throws on failure.
// The host is $RDMALAB_HOST as "hostN" (the lab's hosts, named as `./rdmalab wire` names
// their addresses), else this machine's host name.
void open(const std::string& path);
bool enabled();

// The hooks. Each takes the same arguments as the call it stands next to. The post hooks go
// just BEFORE their call: Soft-RoCE may put the packets on the wire inside ibv_post_send.
inline void post_send(ibv_qp* qp, const ibv_send_wr* wr) {
    if (detail::writer) [[unlikely]]
        detail::record_post_send(qp, wr);
}
inline void post_recv(ibv_qp* qp, const ibv_recv_wr* wr) {
    if (detail::writer) [[unlikely]]
        detail::record_post_recv(qp, wr);
}
inline void completion(const ibv_wc& wc) {
    if (detail::writer) [[unlikely]]
        detail::record_completion(wc);
}
inline void step(std::string_view text) {
    if (detail::writer) [[unlikely]]
        detail::record_step(text);
}
inline void cm_event(int type, std::string_view name, int status) {
    if (detail::writer) [[unlikely]]
        detail::record_cm_event(type, name, status);
}
inline void modify_qp(ibv_qp* qp, int from, int to) {
    if (detail::writer) [[unlikely]]
        detail::record_modify_qp(qp, from, to);
}

// The encoding, apart from the clock and the file (unit-tested): one JSON object per line, each
// a trace::Event (trace_event.hpp) written through its one writer.
// dest_qp: the peer QP the packets are addressed to (RC/UC: the connected QP; UD: the WR's).
std::string encode_post_send(std::int64_t t_ns, std::string_view host, std::uint32_t qp_num,
                             std::uint32_t dest_qp, const ibv_send_wr& wr);
std::string encode_post_recv(std::int64_t t_ns, std::string_view host, std::uint32_t qp_num,
                             const ibv_recv_wr& wr);
std::string encode_completion(std::int64_t t_ns, std::string_view host, const ibv_wc& wc);
std::string encode_step(std::int64_t t_ns, std::string_view host, std::string_view text);
std::string encode_cm_event(std::int64_t t_ns, std::string_view host, std::string_view name,
                            int status);
std::string encode_modify_qp(std::int64_t t_ns, std::string_view host, std::uint32_t qp_num,
                             std::string_view from, std::string_view to);
// The first line of every trace: format, version, host, pid.
std::string encode_header(std::int64_t t_ns, std::string_view host, long pid);

}  // namespace rdmalab::trace
