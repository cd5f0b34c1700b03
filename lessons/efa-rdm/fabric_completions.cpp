// The completions of the efa-rdm lesson's operations (see fabric_completions.hpp).
#include "fabric_completions.hpp"

#include <fmt/core.h>

#include <thread>

namespace rdmalab {

void fail_with_cq_error(fid_cq* cq) {
    fi_cq_err_entry error{};
    check_fi(fi_cq_readerr(cq, &error, 0), "fi_cq_readerr");
    const auto* operation = static_cast<const Operation*>(error.op_context);
    fail(fmt::format("{} failed: {} ({})", operation ? operation->name : "an operation",
                     fi_strerror(error.err),
                     fi_cq_strerror(cq, error.prov_errno, error.err_data, nullptr, 0)));
}

// #region manual-progress
// Polls the CQ until one completion arrives, up to timeout. Reading the CQ is also what drives
// the provider (manual progress on EFA, rxm and shm): a peer's WRITE or READ of our memory
// advances only while we poll, so a side that waits must wait here.
Completion wait_for_completion(fid_cq* cq, std::chrono::milliseconds timeout,
                               std::string_view waiting_for) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (unsigned polls = 0;; ++polls) {
        fi_cq_msg_entry entry{};
        ssize_t rc = fi_cq_read(cq, &entry, 1);
        if (rc == 1) return {static_cast<const Operation*>(entry.op_context), entry.len};
        if (rc == -FI_EAVAIL) fail_with_cq_error(cq);
        if (rc != -FI_EAGAIN) check_fi(rc, "fi_cq_read");
        if (std::chrono::steady_clock::now() > deadline)
            fail(fmt::format("{}: no completion within {:.1f} s", waiting_for,
                             timeout.count() / 1000.0));
        if (polls > 1000) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
}
// #endregion manual-progress

Completion expect_completion(fid_cq* cq, std::chrono::milliseconds timeout,
                             const Operation& expected) {
    Completion completion = wait_for_completion(cq, timeout, expected.name);
    if (completion.operation != &expected)
        fail(fmt::format(
            "waiting for {}, got a completion of {}", expected.name,
            completion.operation ? completion.operation->name : "an unknown operation"));
    return completion;
}

std::vector<std::size_t> wait_for_each(fid_cq* cq, std::chrono::milliseconds timeout,
                                       std::string_view waiting_for,
                                       std::initializer_list<Awaited> awaited) {
    std::vector<std::size_t> lengths(awaited.size());
    std::vector<bool> seen(awaited.size());
    for (std::size_t left = awaited.size(); left > 0;) {
        const Completion completion = wait_for_completion(cq, timeout, waiting_for);
        std::size_t i = 0;
        for (const Awaited& one : awaited) {
            if (one.operation == completion.operation &&
                (!one.length || *one.length == completion.length))
                break;
            ++i;
        }
        if (i == awaited.size())
            fail(fmt::format("unexpected completion: {} of {} bytes",
                             completion.operation ? completion.operation->name : "unknown",
                             completion.length));
        if (!seen[i]) --left;
        seen[i] = true;
        lengths[i] = completion.length;
    }
    return lengths;
}

}  // namespace rdmalab
