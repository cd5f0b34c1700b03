// The completions of the efa-rdm lesson's operations: the context each operation carries, so that
// its completion says which one finished; waiting for completions, which on providers with manual
// progress is also what moves operations along, a peer's RMA into our memory included; a failed
// operation explained from the CQ's error entry; and a post retried while the provider says
// "try again".
#pragma once

#include "fabric_owners.hpp"

#include <rdma/fabric.h>
#include <rdma/fi_eq.h>

#include <chrono>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

namespace rdmalab {

// Each posted operation carries a context; its completion hands it back (op_context), so we know
// which operation finished. Under FI_CONTEXT/FI_CONTEXT2 the provider may use it until then.
struct Operation {
    fi_context2 context{};  // first member: op_context points at the Operation itself
    const char* name;
};

// What an FI_CQ_FORMAT_MSG entry tells: which operation, and for a receive how many bytes came.
struct Completion {
    const Operation* operation;
    std::size_t length;
};

// Why an operation failed: fi_cq_readerr takes the error entry off the CQ, fi_cq_strerror
// explains the provider's own error code. Throws "NAME failed: …".
[[noreturn]] void fail_with_cq_error(fid_cq* cq);

// Polls the CQ until one completion arrives, up to timeout (then throws, naming waiting_for).
Completion wait_for_completion(fid_cq* cq, std::chrono::milliseconds timeout,
                               std::string_view waiting_for);

// The next completion, which must be expected's; throws otherwise.
Completion expect_completion(fid_cq* cq, std::chrono::milliseconds timeout,
                             const Operation& expected);

// An operation to wait for, and the length its completion must report (none: any length).
struct Awaited {
    const Operation* operation;
    std::optional<std::size_t> length;
};

// Waits until each operation has completed, in whatever order their completions come (a
// receive's may come before the completion of a send that went earlier); returns the lengths
// they reported, in the order given. Any other completion, or a length other than the one
// awaited, throws "unexpected completion: NAME of N bytes".
std::vector<std::size_t> wait_for_each(fid_cq* cq, std::chrono::milliseconds timeout,
                                       std::string_view waiting_for,
                                       std::initializer_list<Awaited> awaited);

// Posting returns -FI_EAGAIN when the provider cannot take the operation yet (its queue is full,
// or rxm is still connecting to the peer): drive progress with a zero-count fi_cq_read and retry.
template <typename Attempt>
void post(fid_cq* cq, std::chrono::milliseconds timeout, std::string_view call, Attempt attempt) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        ssize_t rc = attempt();
        if (rc == 0) return;
        if (rc != -FI_EAGAIN) check_fi(rc, call);
        if (fi_cq_read(cq, nullptr, 0) == -FI_EAVAIL) fail_with_cq_error(cq);
        if (std::chrono::steady_clock::now() > deadline)
            fail(fmt::format(
                "{}: the provider still said 'try again' after {:.1f} s: can the peer be reached?",
                call, timeout.count() / 1000.0));
    }
}

}  // namespace rdmalab
