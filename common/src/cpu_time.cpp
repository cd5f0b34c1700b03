// CPU time from getrusage: see cpu_time.hpp.
#include "rdmalab/cpu_time.hpp"

#include "rdmalab/error.hpp"

#include <sys/resource.h>

namespace rdmalab {

CpuTime cpu_time() {
    rusage usage{};
    check_errno(getrusage(RUSAGE_SELF, &usage) == 0, "getrusage");
    auto to_us = [](const timeval& t) {
        return std::chrono::microseconds(t.tv_sec * 1'000'000L + t.tv_usec);
    };
    return {to_us(usage.ru_utime), to_us(usage.ru_stime)};
}

}  // namespace rdmalab
