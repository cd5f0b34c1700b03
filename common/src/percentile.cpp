// Nearest-rank percentiles: see percentile.hpp.
#include "rdmalab/percentile.hpp"

#include <algorithm>
#include <cmath>

namespace rdmalab {

double percentile(std::vector<double> samples, double fraction) {
    if (samples.empty()) return 0;
    std::sort(samples.begin(), samples.end());
    const auto rank =
        static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(samples.size())));
    return samples[std::clamp<std::size_t>(rank, 1, samples.size()) - 1];
}

}  // namespace rdmalab
