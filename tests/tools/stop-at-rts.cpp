// stop-at-rts: a preload library for the fault matrix (tests/faults/matrix.sh). A client started
// with LD_PRELOAD=stop-at-rts.so stops itself (SIGSTOP) once, at the moment its connection is
// ready and before it can post a single work request:
//   - a program that uses rdma_cm: when rdma_get_cm_event hands it RDMA_CM_EVENT_ESTABLISHED
//     (librdmacm moves the QP to RTS earlier, while it still owes the server its ready-to-use
//     message: stopping there would kill the connection, not the run);
//   - a program that connects its QPs by hand: when ibv_modify_qp has moved a QP to RTS.
// The matrix waits for that stopped state, kills the server, then continues the client: the
// fault lands mid-run every time. (Stopping it from outside when it printed a line was a race: a
// small transfer could finish between the line and the signal.)
#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <signal.h>

#include <atomic>
#include <cerrno>

namespace {

std::atomic<bool> uses_rdma_cm{false};
std::atomic<bool> stopped_once{false};

void stop_once() {
    if (!stopped_once.exchange(true)) raise(SIGSTOP);
}

template <typename Function>
Function next_definition(const char* name) {
    return reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" int rdma_create_id(rdma_event_channel* channel, rdma_cm_id** id, void* context,
                              rdma_port_space port_space) {
    using CreateId = int (*)(rdma_event_channel*, rdma_cm_id**, void*, rdma_port_space);
    static const auto real = next_definition<CreateId>("rdma_create_id");
    if (real == nullptr) {
        errno = ENOSYS;
        return -1;
    }
    uses_rdma_cm = true;
    return real(channel, id, context, port_space);
}

extern "C" int rdma_get_cm_event(rdma_event_channel* channel, rdma_cm_event** event) {
    using GetCmEvent = int (*)(rdma_event_channel*, rdma_cm_event**);
    static const auto real = next_definition<GetCmEvent>("rdma_get_cm_event");
    if (real == nullptr) {
        errno = ENOSYS;
        return -1;
    }
    const int result = real(channel, event);
    if (result == 0 && (*event)->event == RDMA_CM_EVENT_ESTABLISHED) stop_once();
    return result;
}

extern "C" int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask) {
    using ModifyQp = int (*)(ibv_qp*, ibv_qp_attr*, int);
    static const auto real = next_definition<ModifyQp>("ibv_modify_qp");
    if (real == nullptr) return ENOSYS;  // ibv_modify_qp returns an errno value, not -1
    const int result = real(qp, attr, attr_mask);
    const bool to_rts = (attr_mask & IBV_QP_STATE) != 0 && attr->qp_state == IBV_QPS_RTS;
    if (result == 0 && to_rts && !uses_rdma_cm) stop_once();
    return result;
}
