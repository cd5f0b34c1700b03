// The CPU time this process has used so far (getrusage): in user space, and in the kernel on
// its behalf. Subtract two readings for the time spent between them.
#pragma once

#include <chrono>

namespace rdmalab {

struct CpuTime {
    std::chrono::microseconds user{}, system{};
    CpuTime operator-(const CpuTime& earlier) const {
        return {user - earlier.user, system - earlier.system};
    }
    double total_us() const { return static_cast<double>((user + system).count()); }
};

CpuTime cpu_time();

}  // namespace rdmalab
