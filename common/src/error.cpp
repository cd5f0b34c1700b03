// Error reporting: see error.hpp.
#include "rdmalab/error.hpp"

#include <fmt/core.h>

#include <cstring>
#include <filesystem>
#include <system_error>

namespace rdmalab {

void fail(const std::string& message) {
    throw Error(message);
}

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

namespace {

// True when the kernel offers no RDMA device at all: no /sys/class/infiniband, or an empty one.
bool host_has_no_rdma_device() {
    std::error_code ec;
    std::filesystem::directory_iterator devices("/sys/class/infiniband", ec);
    return ec || devices == std::filesystem::directory_iterator();
}

// The first calls every verbs or rdma_cm program makes fail this way on a host without RDMA.
bool is_device_discovery_failure(std::string_view message) {
    for (std::string_view call : {"ibv_get_device_list failed", "rdma_create_event_channel failed"})
        if (message.starts_with(call)) return true;
    return false;
}

}  // namespace

int run_program(std::string_view program, const std::function<int()>& body) {
    try {
        return body();
    } catch (const std::exception& e) {
        std::string_view message = e.what();
        if (is_device_discovery_failure(message) && host_has_no_rdma_device())
            fmt::print(stderr,
                       "{}: {} (this host has no RDMA device: run it in the Soft-RoCE lab, "
                       "./rdmalab lab -- build/bin/{} ...)\n",
                       program, message, program);
        else
            fmt::print(stderr, "{}: {}\n", program, message);
    }
    return 1;
}

}  // namespace rdmalab
