// What the exercise checker sees of a reader's program from inside it, preloaded (LD_PRELOAD)
// in front of libibverbs: every memory registration and deregistration, every work request
// posted and every completion polled. Each call is passed on unchanged; a line per event goes
// to the file $EXERCISE_OBSERVE names, which starts with a header line per kind of event
// ("#reg<TAB>length<TAB>access<TAB>handle", kHeader below): the judge reads a field by its name
// there (judge.sh's `observed`), never by its column:
//   reg <TAB> LENGTH <TAB> ACCESS <TAB> HANDLE     ACCESS: the flags' names (access_flag_names)
//   dereg <TAB> HANDLE <TAB> RESULT
//   post <TAB> WRS <TAB> RESULT          (one per ibv_post_send call: the length of its list)
//   send <TAB> OPCODE <TAB> signaled|unsignaled <TAB> BYTES <TAB> RESULT <TAB> SGES <TAB> inline|-
//        <TAB> fence|-                                                   (one per WR posted)
//   recv <TAB> BYTES <TAB> RESULT
//   wc <TAB> STATUS <TAB> OPCODE <TAB> BYTE_LEN                            (one per completion)
//   modify <TAB> STATE <TAB> ACCESS <TAB> RESULT     (ibv_modify_qp: the state asked for, the QP
//                                                    access flags where the mask sets them, or -)
// ibv_post_send, ibv_post_recv and ibv_poll_cq are inline calls through the context's ops
// table, so the observer takes the table's entries over when the program allocates its first
// protection domain on a context (ibv_alloc_pd, an exported function).
#include <dlfcn.h>
#include <infiniband/verbs.h>

#include "rdmalab/verbs_names.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace {

std::mutex log_mutex;
// libibverbs' ibv_reg_mr calls ibv_reg_mr_iova2 itself: one registration is logged once, by the
// outermost call.
thread_local int registering = 0;

// The fields of each kind of line, named: the file's first lines. A field added goes here and
// into the line, in the same place.
constexpr const char* kHeader =
    "#reg\tlength\taccess\thandle\n"
    "#dereg\thandle\tresult\n"
    "#post\twrs\tresult\n"
    "#send\topcode\tsignaled\tbytes\tresult\tsges\tinline\tfence\n"
    "#recv\tbytes\tresult\n"
    "#wc\tstatus\topcode\tbyte_len\n"
    "#modify\tstate\taccess\tresult\n";

void log_line(const std::string& line) {
    const char* path = std::getenv("EXERCISE_OBSERVE");
    if (path == nullptr) return;
    std::lock_guard lock(log_mutex);
    if (FILE* out = std::fopen(path, "a")) {
        // An empty file gets the header first (a program's exec'd child appends after it).
        if (std::fseek(out, 0, SEEK_END) == 0 && std::ftell(out) == 0) std::fputs(kHeader, out);
        std::fputs(line.c_str(), out);
        std::fclose(out);
    }
}

void log_registration(std::size_t length, unsigned access, const ibv_mr* mr) {
    char handle[32];
    std::snprintf(handle, sizeof handle, "%p", static_cast<const void*>(mr));
    log_line("reg\t" + std::to_string(length) + "\t" + rdmalab::access_flag_names(access) + "\t" +
             (mr != nullptr ? handle : "failed") + "\n");
}

template <typename Function>
Function next(const char* name) {
    return reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
}

std::uint64_t sge_bytes(const ibv_sge* list, int count) {
    std::uint64_t bytes = 0;
    for (int i = 0; i < count; ++i) bytes += list[i].length;
    return bytes;
}

// The provider's entries, kept when the observer takes the ops table over (one context).
int (*provider_post_send)(ibv_qp*, ibv_send_wr*, ibv_send_wr**) = nullptr;
int (*provider_post_recv)(ibv_qp*, ibv_recv_wr*, ibv_recv_wr**) = nullptr;
int (*provider_poll_cq)(ibv_cq*, int, ibv_wc*) = nullptr;

int observed_post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
    const int rc = provider_post_send(qp, wr, bad);
    int listed = 0;
    for (const ibv_send_wr* w = wr; w != nullptr; w = w->next) ++listed;
    log_line("post\t" + std::to_string(listed) + "\t" + std::to_string(rc) + "\n");
    for (const ibv_send_wr* w = wr; w != nullptr; w = w->next) {
        const bool posted = rc == 0 || (bad != nullptr && w != *bad);
        log_line(std::string("send\t") + rdmalab::send_opcode_name(w->opcode) + "\t" +
                 ((w->send_flags & IBV_SEND_SIGNALED) != 0 ? "signaled" : "unsignaled") + "\t" +
                 std::to_string(sge_bytes(w->sg_list, w->num_sge)) + "\t" +
                 std::to_string(posted ? 0 : rc) + "\t" + std::to_string(w->num_sge) + "\t" +
                 ((w->send_flags & IBV_SEND_INLINE) != 0 ? "inline" : "-") + "\t" +
                 ((w->send_flags & IBV_SEND_FENCE) != 0 ? "fence" : "-") + "\n");
        if (!posted) break;
    }
    return rc;
}
int observed_post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
    const int rc = provider_post_recv(qp, wr, bad);
    for (const ibv_recv_wr* w = wr; w != nullptr; w = w->next) {
        const bool posted = rc == 0 || (bad != nullptr && w != *bad);
        log_line("recv\t" + std::to_string(sge_bytes(w->sg_list, w->num_sge)) + "\t" +
                 std::to_string(posted ? 0 : rc) + "\n");
        if (!posted) break;
    }
    return rc;
}
int observed_poll_cq(ibv_cq* cq, int entries, ibv_wc* wc) {
    const int n = provider_poll_cq(cq, entries, wc);
    for (int i = 0; i < n; ++i)
        log_line(std::string("wc\t") + ibv_wc_status_str(wc[i].status) + "\t" +
                 rdmalab::wc_opcode_name(wc[i].opcode) + "\t" + std::to_string(wc[i].byte_len) +
                 "\n");
    return n;
}

}  // namespace

// verbs.h makes ibv_reg_mr a macro; the functions it calls are these two.
extern "C" {
#undef ibv_reg_mr
ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, std::size_t length, int access) {
    static auto real = next<ibv_mr* (*)(ibv_pd*, void*, std::size_t, int)>("ibv_reg_mr");
    ++registering;
    ibv_mr* mr = real(pd, addr, length, access);
    if (--registering == 0) log_registration(length, static_cast<unsigned>(access), mr);
    return mr;
}

ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* addr, std::size_t length, std::uint64_t iova,
                         unsigned access) {
    static auto real =
        next<ibv_mr* (*)(ibv_pd*, void*, std::size_t, std::uint64_t, unsigned)>("ibv_reg_mr_iova2");
    ++registering;
    ibv_mr* mr = real(pd, addr, length, iova, access);
    if (--registering == 0) log_registration(length, access, mr);
    return mr;
}

int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) {
    static auto real = next<int (*)(ibv_qp*, ibv_qp_attr*, int)>("ibv_modify_qp");
    const int rc = real(qp, attr, mask);
    const std::string state_name =
        (mask & IBV_QP_STATE) == 0 ? "-" : rdmalab::qp_state_name(attr->qp_state);
    const std::string access =
        (mask & IBV_QP_ACCESS_FLAGS) == 0 ? "-" : rdmalab::access_flag_names(attr->qp_access_flags);
    log_line("modify\t" + state_name + "\t" + access + "\t" + std::to_string(rc) + "\n");
    return rc;
}

ibv_pd* ibv_alloc_pd(ibv_context* context) {
    static auto real = next<ibv_pd* (*)(ibv_context*)>("ibv_alloc_pd");
    ibv_pd* pd = real(context);
    if (pd != nullptr && context->ops.post_send != observed_post_send &&
        provider_post_send == nullptr) {
        provider_post_send = context->ops.post_send;
        provider_post_recv = context->ops.post_recv;
        provider_poll_cq = context->ops.poll_cq;
        context->ops.post_send = observed_post_send;
        context->ops.post_recv = observed_post_recv;
        context->ops.poll_cq = observed_poll_cq;
    }
    return pd;
}

int ibv_dereg_mr(ibv_mr* mr) {
    static auto real = next<int (*)(ibv_mr*)>("ibv_dereg_mr");
    char handle[32];
    std::snprintf(handle, sizeof handle, "%p", static_cast<void*>(mr));
    const int rc = real(mr);
    log_line(std::string("dereg\t") + handle + "\t" + std::to_string(rc) + "\n");
    return rc;
}
}
