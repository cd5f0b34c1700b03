// Program traces: see trace.hpp.
#include "rdmalab/trace.hpp"

#include "rdmalab/trace_event.hpp"

#include "rdmalab/codec.hpp"
#include "rdmalab/error.hpp"
#include "rdmalab/verbs_names.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace rdmalab::trace {

class Writer {
  public:
    Writer(std::FILE* file, std::string host) : file_(file), host_(std::move(host)) {}
    ~Writer() { std::fclose(file_); }
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;
    const std::string& host() const { return host_; }
    // One line, flushed at once: a process that dies mid-run still leaves every event before it.
    void write(const std::string& line) {
        std::fputs(line.c_str(), file_);
        std::fputc('\n', file_);
        std::fflush(file_);
    }

  private:
    std::FILE* file_;
    std::string host_;
};

namespace detail {
Writer* writer = nullptr;
}  // namespace detail

namespace {

std::int64_t now_ns() {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

std::string this_host() {
    if (const char* lab_host = std::getenv("RDMALAB_HOST"); lab_host && *lab_host)
        return fmt::format("host{}", lab_host);
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "unknown";
    return name;
}

Event base(std::int64_t t_ns, std::string_view host, std::string_view kind) {
    return Event{.t_ns = t_ns, .host = std::string(host), .event = std::string(kind)};
}

std::string hex32(std::uint32_t value) {
    return fmt::format("{:#x}", value);
}

template <typename Wr>
std::uint64_t total_length(const Wr& wr) {
    std::uint64_t length = 0;
    for (int i = 0; i < wr.num_sge; ++i) length += wr.sg_list[i].length;
    return length;
}

}  // namespace

std::string encode_header(std::int64_t t_ns, std::string_view host, long pid) {
    Event line = base(t_ns, host, "trace_start");
    line.format = kProgramTraceFormat;
    line.version = kFormatVersion;
    line.clock = "CLOCK_REALTIME";
    line.pid = pid;
    return encode(line);
}

std::string encode_post_send(std::int64_t t_ns, std::string_view host, std::uint32_t qp_num,
                             std::uint32_t dest_qp, const ibv_send_wr& wr) {
    Event line = base(t_ns, host, "post_send");
    line.qp_num = qp_num;
    line.dest_qp = dest_qp;
    line.wr_id = wr.wr_id;
    line.opcode = send_opcode_name(wr.opcode);
    line.length = total_length(wr);
    line.num_sge = wr.num_sge;
    line.signaled = (wr.send_flags & IBV_SEND_SIGNALED) != 0;
    line.inline_data = (wr.send_flags & IBV_SEND_INLINE) != 0;
    line.fence = (wr.send_flags & IBV_SEND_FENCE) != 0;
    switch (wr.opcode) {
        case IBV_WR_RDMA_WRITE:
        case IBV_WR_RDMA_WRITE_WITH_IMM:
        case IBV_WR_RDMA_READ:
            line.remote_addr = fmt::format("{:#x}", wr.wr.rdma.remote_addr);
            line.rkey = hex32(wr.wr.rdma.rkey);
            break;
        case IBV_WR_ATOMIC_CMP_AND_SWP:
        case IBV_WR_ATOMIC_FETCH_AND_ADD:
            line.remote_addr = fmt::format("{:#x}", wr.wr.atomic.remote_addr);
            line.rkey = hex32(wr.wr.atomic.rkey);
            line.compare_add = wr.wr.atomic.compare_add;
            line.swap = wr.wr.atomic.swap;
            break;
        default:
            break;
    }
    if (wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM || wr.opcode == IBV_WR_SEND_WITH_IMM)
        line.imm = hex32(from_be32(wr.imm_data));  // imm_data is big-endian
    return encode(line);
}

std::string encode_post_recv(std::int64_t t_ns, std::string_view host, std::uint32_t qp_num,
                             const ibv_recv_wr& wr) {
    Event line = base(t_ns, host, "post_recv");
    line.qp_num = qp_num;
    line.wr_id = wr.wr_id;
    line.length = total_length(wr);
    line.num_sge = wr.num_sge;
    return encode(line);
}

std::string encode_completion(std::int64_t t_ns, std::string_view host, const ibv_wc& wc) {
    Event line = base(t_ns, host, "completion");
    line.qp_num = wc.qp_num;
    line.wr_id = wc.wr_id;
    line.status = wc_status_name(wc.status);
    line.ok = wc.status == IBV_WC_SUCCESS;
    // Only the status and wr_id are defined for a failed completion (the verbs specification).
    if (wc.status == IBV_WC_SUCCESS) {
        line.opcode = wc_opcode_name(wc.opcode);
        line.byte_len = wc.byte_len;
        if (wc.wc_flags & IBV_WC_WITH_IMM) line.imm = hex32(from_be32(wc.imm_data));
    } else {
        line.vendor_err = hex32(wc.vendor_err);
    }
    return encode(line);
}

std::string encode_step(std::int64_t t_ns, std::string_view host, std::string_view text) {
    Event line = base(t_ns, host, "step");
    line.text = std::string(text);
    return encode(line);
}

std::string encode_cm_event(std::int64_t t_ns, std::string_view host, std::string_view name,
                            int status) {
    Event line = base(t_ns, host, "cm_event");
    line.name = std::string(name);
    line.cm_status = status;
    return encode(line);
}

std::string encode_modify_qp(std::int64_t t_ns, std::string_view host, std::uint32_t qp_num,
                             std::string_view from, std::string_view to) {
    Event line = base(t_ns, host, "modify_qp");
    line.qp_num = qp_num;
    line.from = std::string(from);
    line.to = std::string(to);
    return encode(line);
}

void open(const std::string& path) {
    std::FILE* file = std::fopen(path.c_str(), "w");
    if (file == nullptr) fail(fmt::format("{}: cannot write it ({})", path, std::strerror(errno)));
    delete detail::writer;
    detail::writer = new Writer(file, this_host());
    // The writer lives to the end of the process; each line is already flushed.
    detail::writer->write(encode_header(now_ns(), detail::writer->host(), getpid()));
}

bool enabled() {
    return detail::writer != nullptr;
}

namespace detail {

namespace {
// The QP the packets go to: RC/UC are connected to one; UD names it in each WR.
std::uint32_t dest_qp_of(ibv_qp* qp, const ibv_send_wr& wr) {
    if (qp->qp_type == IBV_QPT_UD) return wr.wr.ud.remote_qpn;
    ibv_qp_attr attributes{};
    ibv_qp_init_attr init{};
    if (ibv_query_qp(qp, &attributes, IBV_QP_DEST_QPN, &init) != 0) return 0;
    return attributes.dest_qp_num;
}
}  // namespace

void record_post_send(ibv_qp* qp, const ibv_send_wr* wr) {
    const std::int64_t t = now_ns();
    for (; wr != nullptr; wr = wr->next)  // a post list: one event per WR, in posting order
        writer->write(encode_post_send(t, writer->host(), qp->qp_num, dest_qp_of(qp, *wr), *wr));
}

void record_post_recv(ibv_qp* qp, const ibv_recv_wr* wr) {
    const std::int64_t t = now_ns();
    for (; wr != nullptr; wr = wr->next)
        writer->write(encode_post_recv(t, writer->host(), qp->qp_num, *wr));
}

void record_completion(const ibv_wc& wc) {
    writer->write(encode_completion(now_ns(), writer->host(), wc));
}

void record_step(std::string_view text) {
    writer->write(encode_step(now_ns(), writer->host(), text));
}

void record_cm_event(int /*type*/, std::string_view name, int status) {
    writer->write(encode_cm_event(now_ns(), writer->host(), name, status));
}

void record_modify_qp(ibv_qp* qp, int from, int to) {
    writer->write(encode_modify_qp(now_ns(), writer->host(), qp->qp_num,
                                   qp_state_name(static_cast<ibv_qp_state>(from)),
                                   qp_state_name(static_cast<ibv_qp_state>(to))));
}

}  // namespace detail

}  // namespace rdmalab::trace
