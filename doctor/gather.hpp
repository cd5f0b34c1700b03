// Reads a host's facts for rdma-doctor (see doctor.hpp): sysfs, procfs, the verbs library.
#pragma once

#include "doctor.hpp"

#include <atomic>
#include <chrono>
#include <string>

namespace rdmalab::doctor {

struct GatherOptions {
    std::string device;                      // only this device ("" = every device)
    std::chrono::milliseconds window{1000};  // how long to watch the port counters (0: not)
    const std::atomic<bool>* stop_watching = nullptr;  // set (by a signal): end the window now
};

HostFacts gather(const GatherOptions& options);

}  // namespace rdmalab::doctor
