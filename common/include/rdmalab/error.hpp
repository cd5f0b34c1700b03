// Error reporting shared by every program: one clear line, one non-zero exit.
// Verbs calls report failure in two styles; check_ibv/check_errno name the call that failed.
#pragma once

#include <cerrno>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace rdmalab {

// Thrown for anything that ends the program; run_program prints what() as one line.
struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const std::string& message);

// "call: strerror(code)" — for verbs that return an errno value (ibv_post_send, ibv_modify_qp…).
void check_ibv(int rc, std::string_view call);

// For calls that return -1 (or NULL) and set errno (rdma_* calls, ibv_reg_mr, ibv_create_cq…).
void check_errno(bool ok, std::string_view call);

template <typename T>
T* check_ptr(T* pointer, std::string_view call) {
    check_errno(pointer != nullptr, call);
    return pointer;
}

// Runs body; an Error (or any exception) becomes "program: message" on stderr and exit code 1.
int run_program(std::string_view program, const std::function<int()>& body);

}  // namespace rdmalab
