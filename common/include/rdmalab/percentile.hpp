// The one percentile every program here reports: nearest rank, so a reported p99 is a value
// that was actually measured (perftest reports the same way).
#pragma once

#include <vector>

namespace rdmalab {

// The smallest sample with at least `fraction` (0…1] of all samples at or below it. Sorts a
// copy; empty input gives 0.
double percentile(std::vector<double> samples, double fraction);

// percentile(samples, 0.5): with an even count, the lower of the two middle samples.
inline double median(std::vector<double> samples) {
    return percentile(std::move(samples), 0.5);
}

}  // namespace rdmalab
