// Error reporting: see error.hpp.
#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <cstring>

namespace rdmalab {

void fail(const std::string& message) { throw Error(message); }

void check_ibv(int rc, std::string_view call) {
    // Some providers return -1 and set errno instead of returning the code itself.
    if (rc == 0) return;
    int code = rc < 0 ? errno : rc;
    fail(fmt::format("{} failed: {}", call, std::strerror(code)));
}

void check_errno(bool ok, std::string_view call) {
    if (ok) return;
    int code = errno;
    fail(code ? fmt::format("{} failed: {}", call, std::strerror(code))
              : fmt::format("{} failed", call));
}

int run_program(std::string_view program, const std::function<int()>& body) {
    try {
        return body();
    } catch (const std::exception& e) {
        fmt::print(stderr, "{}: {}\n", program, e.what());
    }
    return 1;
}

}  // namespace rdmalab
